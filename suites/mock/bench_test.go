package mock

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/llm/openaichat"
	"github.com/todoharness/todoharness/mockmodel"
)

// benchScript has n identical turns shaped like a todo_write step:
// reasoning, text and one tool call whose ~150 bytes of arguments stream in
// 8-byte deltas (about 40 SSE events per request).
func benchScript(n int) *mockmodel.Script {
	turns := make([]mockmodel.Turn, n)
	for i := range turns {
		turns[i] = mockmodel.Turn{
			Reasoning: "The user wants a plan with three todos, then DONE.",
			Text:      "Recording the plan now.",
			ToolCalls: []mockmodel.ToolCall{{Name: "todo_write", Arguments: map[string]any{"todos": []map[string]string{
				{"content": "read the code", "status": "in_progress"},
				{"content": "write the fix", "status": "pending"},
				{"content": "run the tests", "status": "pending"},
			}}}},
			Usage: &llm.Usage{InputTokens: 1706, OutputTokens: 113, ReasoningTokens: 23},
		}
	}
	return &mockmodel.Script{Name: "bench", Turns: turns}
}

var benchRequest = llm.Request{
	System:   "You are a coding agent.",
	Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartText, Text: "Plan three todos."}}}},
	Tools:    []llm.ToolSpec{todoTool},
}

func benchServer(b *testing.B, stream bool) {
	srv := mockmodel.NewServer(benchScript(b.N))
	defer srv.Close()
	c, err := openaichat.NewClient(openaichat.ClientConfig{
		BaseURL: srv.BaseURL(), Model: "mock", HTTPClient: srv.Client(), DisableStreaming: !stream,
	})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, err := c.Stream(ctx, benchRequest, nil)
		if err != nil {
			b.Fatal(err)
		}
		if len(r.ToolCalls()) != 1 {
			b.Fatalf("want one tool call, got %+v", r)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// BenchmarkServerStreaming measures stream:true requests per second on
// loopback through the real llm client.
func BenchmarkServerStreaming(b *testing.B) { benchServer(b, true) }

// BenchmarkServerNonStreaming measures stream:false requests per second on
// loopback through the real llm client.
func BenchmarkServerNonStreaming(b *testing.B) { benchServer(b, false) }

// BenchmarkModelStream is the in-process model answering the same turn, for
// comparison.
func BenchmarkModelStream(b *testing.B) {
	m := mockmodel.NewModel(benchScript(b.N))
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := m.Stream(ctx, benchRequest, func(llm.Chunk) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
}

// wireBenchRequests are the same conversation (system prompt, user
// prompt, todo_write offered) on each wire, streaming.
var wireBenchRequests = []struct{ name, path, body string }{
	{mockmodel.WireOpenAIChat, "/v1/chat/completions", `{"model":"m","stream":true,"stream_options":{"include_usage":true},
		"messages":[{"role":"system","content":"You are a coding agent."},{"role":"user","content":"Plan three todos."}],
		"tools":[{"type":"function","function":{"name":"todo_write","description":"Write the COMPLETE task list.","parameters":{"type":"object"}}}]}`},
	{mockmodel.WireOpenAIResponses, "/v1/responses", `{"model":"m","stream":true,"instructions":"You are a coding agent.",
		"input":[{"role":"user","content":"Plan three todos."}],
		"tools":[{"type":"function","name":"todo_write","description":"Write the COMPLETE task list.","parameters":{"type":"object"}}]}`},
	{mockmodel.WireAnthropic, "/v1/messages", `{"model":"m","max_tokens":1024,"stream":true,"system":"You are a coding agent.",
		"messages":[{"role":"user","content":"Plan three todos."}],
		"tools":[{"name":"todo_write","description":"Write the COMPLETE task list.","input_schema":{"type":"object"}}]}`},
	{mockmodel.WireGemini, "/v1beta/models/m:streamGenerateContent?alt=sse", `{"systemInstruction":{"parts":[{"text":"You are a coding agent."}]},
		"contents":[{"role":"user","parts":[{"text":"Plan three todos."}]}],
		"tools":[{"functionDeclarations":[{"name":"todo_write","description":"Write the COMPLETE task list.","parameters":{"type":"object"}}]}]}`},
}

// BenchmarkWire measures streaming requests per second per wire format on
// loopback: the server alone (a plain HTTP client reads each SSE body to
// its end), the benchScript turn each time. suites/wire's BenchmarkWireSDK
// adds each official SDK's parsing.
func BenchmarkWire(b *testing.B) {
	for _, wr := range wireBenchRequests {
		b.Run(wr.name, func(b *testing.B) {
			srv := mockmodel.NewServer(benchScript(b.N))
			defer srv.Close()
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+wr.path, strings.NewReader(wr.body))
				if err != nil {
					b.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				res, err := srv.Client().Do(req)
				if err != nil {
					b.Fatal(err)
				}
				n, err := io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if err != nil || res.StatusCode != http.StatusOK || n < 1000 {
					b.Fatalf("status %d, %d bytes, %v", res.StatusCode, n, err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
