package mockmodel_test

import (
	"context"
	"testing"

	"github.com/todoharness/todoharness/harness/llm"
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
	c, err := llm.NewClient(llm.ClientConfig{
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
