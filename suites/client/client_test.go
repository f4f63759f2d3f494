package client

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/llm/openaichat"
)

// fakeServer is an OpenAI-compatible endpoint on 127.0.0.1 that answers
// every POST /v1/chat/completions with a canned body and records what it got.
type fakeServer struct {
	*httptest.Server
	mu       sync.Mutex
	bodies   []map[string]any
	headers  []http.Header
	paths    []string
	status   int
	events   []string // SSE data payloads, "data: " and "\n\n" added
	body     string   // non-SSE answer (status >= 400 or stream:false)
	drop     bool     // drop the connection after the events
	stall    bool     // after the events, wait for the client to go away
	noFinish bool     // end the body cleanly without [DONE]
}

func newFakeServer() *fakeServer {
	f := &fakeServer{status: 200}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	DeferCleanup(f.Close)
	return f
}

func (f *fakeServer) serve(w http.ResponseWriter, r *http.Request) {
	raw, _ := io.ReadAll(r.Body)
	var body map[string]any
	_ = json.Unmarshal(raw, &body)
	f.mu.Lock()
	f.bodies = append(f.bodies, body)
	f.headers = append(f.headers, r.Header.Clone())
	f.paths = append(f.paths, r.URL.Path)
	status, events, text := f.status, f.events, f.body
	drop, stall, noFinish := f.drop, f.stall, f.noFinish
	f.mu.Unlock()
	if status >= 400 || text != "" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, text)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	rc := http.NewResponseController(w)
	for _, ev := range events {
		_, _ = fmt.Fprintf(w, "data: %s\n\n", ev)
		_ = rc.Flush()
	}
	switch {
	case drop:
		panic(http.ErrAbortHandler)
	case stall:
		<-r.Context().Done()
		return
	case noFinish:
		return
	}
	_, _ = io.WriteString(w, "data: [DONE]\n\n")
}

func (f *fakeServer) lastBody() map[string]any {
	f.mu.Lock()
	defer f.mu.Unlock()
	Expect(f.bodies).NotTo(BeEmpty())
	return f.bodies[len(f.bodies)-1]
}

func (f *fakeServer) client(mods ...func(*openaichat.ClientConfig)) *openaichat.Client {
	cfg := openaichat.ClientConfig{BaseURL: f.URL + "/v1", APIKey: "sk-test", Model: "deepseek-chat", HTTPClient: f.Client()}
	for _, m := range mods {
		m(&cfg)
	}
	c, err := openaichat.NewClient(cfg)
	Expect(err).NotTo(HaveOccurred())
	return c
}

func ctx() context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	DeferCleanup(cancel)
	return c
}

func collect(dst *[]llm.Chunk) func(llm.Chunk) error {
	return func(c llm.Chunk) error {
		*dst = append(*dst, c)
		return nil
	}
}

func chunkJSON(chunks []llm.Chunk) []string {
	out := make([]string, len(chunks))
	for i, c := range chunks {
		b, err := json.Marshal(c)
		Expect(err).NotTo(HaveOccurred())
		out[i] = string(b)
	}
	return out
}

func ev(delta string, finish string) string {
	fr := "null"
	if finish != "" {
		fr = fmt.Sprintf("%q", finish)
	}
	return fmt.Sprintf(`{"id":"x","object":"chat.completion.chunk","created":1,"model":"deepseek-reasoner","choices":[{"index":0,"delta":%s,"logprobs":null,"finish_reason":%s}]}`, delta, fr)
}

// deepseekStream builds a DeepSeek-shaped SSE stream that carries the deltas
// of the given chunks (as a real DeepSeek stream carried them to the
// original harness), then a final chunk with finish_reason and usage.
func deepseekStream(chunks []string, finish, usage string) []string {
	events := []string{ev(`{"role":"assistant","content":null,"reasoning_content":""}`, "")}
	seen := map[int]bool{}
	for _, line := range chunks {
		var c llm.Chunk
		Expect(json.Unmarshal([]byte(line), &c)).To(Succeed())
		text, _ := json.Marshal(c.Text)
		switch c.Type {
		case llm.ChunkReasoningDelta:
			events = append(events, ev(fmt.Sprintf(`{"content":null,"reasoning_content":%s}`, text), ""))
		case llm.ChunkTextDelta:
			events = append(events, ev(fmt.Sprintf(`{"content":%s,"reasoning_content":null}`, text), ""))
		case llm.ChunkToolCallDelta:
			args, _ := json.Marshal(*c.ArgumentsDelta)
			wireIdx := *c.Index - 1
			if !seen[*c.Index] {
				seen[*c.Index] = true
				events = append(events, ev(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":%q,"type":"function","function":{"name":%q,"arguments":%s}}]}`, wireIdx, c.ID, c.Name, args), ""))
			} else {
				events = append(events, ev(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":%s}}]}`, wireIdx, args), ""))
			}
		}
	}
	last := ev(`{"content":"","reasoning_content":null}`, finish)
	last = strings.TrimSuffix(last, "}") + `,"usage":` + usage + "}"
	return append(events, last)
}

var userOnly = llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartText, Text: "hi"}}}}}

var _ = Describe("Client", func() {
	It("turns DeepSeek's stream into exactly the chunks the original harness logged", func() {
		f := newFakeServer()
		c := f.client()

		f.events = deepseekStream(interopStep1, "tool_calls",
			`{"prompt_tokens":1706,"completion_tokens":113,"total_tokens":1819,"prompt_tokens_details":{"cached_tokens":0},"completion_tokens_details":{"reasoning_tokens":23},"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":1706}`)
		var chunks []llm.Chunk
		r, err := c.Stream(ctx(), userOnly, collect(&chunks))
		Expect(err).NotTo(HaveOccurred())
		Expect(chunkJSON(chunks)).To(Equal(interopStep1))
		Expect(r.ToolCalls()).To(HaveLen(1))
		Expect(r.ToolCalls()[0].Arguments).To(Equal(`{"todos": [{"content": "read the code", "status": "in_progress"}, {"content": "write the fix", "status": "pending"}, {"content": "run the tests", "status": "pending"}]}`))

		// step 2: 1664 of 1838 prompt tokens came from the cache; the original
		// logs inputTokens 174 (the uncached part).
		f.events = deepseekStream(interopStep2, "stop",
			`{"prompt_tokens":1838,"completion_tokens":23,"total_tokens":1861,"prompt_tokens_details":{"cached_tokens":1664},"completion_tokens_details":{"reasoning_tokens":20},"prompt_cache_hit_tokens":1664,"prompt_cache_miss_tokens":174}`)
		chunks = nil
		r, err = c.Stream(ctx(), userOnly, collect(&chunks))
		Expect(err).NotTo(HaveOccurred())
		Expect(chunkJSON(chunks)).To(Equal(interopStep2))
		Expect(r.Content).To(Equal([]llm.Part{
			{Type: llm.PartReasoning, Text: "The todo list was set successfully. Now I just need to reply with the single word DONE."},
			{Type: llm.PartText, Text: "DONE"},
		}))
		Expect(r.Finish.Kind).To(Equal(llm.FinishStop))
	})

	It("maps the request: system, user, assistant with tool calls, tool results, tools; no reasoning sent back", func() {
		f := newFakeServer()
		f.events = []string{ev(`{"content":"ok"}`, "stop")}
		c := f.client(func(cfg *openaichat.ClientConfig) { cfg.MaxTokens = 512 })
		schema := `{"type":"object","required":["todos"],"properties":{"todos":{"type":"array","description":"The COMPLETE task list"}}}`
		_, err := c.Stream(ctx(), llm.Request{
			System: "be brief",
			Messages: []llm.Message{
				{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartText, Text: "plan"}, {Type: llm.PartText, Text: " it"}}},
				{Role: llm.RoleAssistant, Content: []llm.Part{
					{Type: llm.PartReasoning, Text: "secret thoughts"},
					{Type: llm.PartText, Text: "Sure."},
					{Type: llm.PartToolCall, ID: "call_1", Name: "todo_write", Arguments: `{"todos":[]}`},
				}},
				{Role: llm.RoleTool, ToolCallID: "call_1", IsError: true, Content: []llm.Part{{Type: llm.PartText, Text: "Error: bad"}}},
				{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartReasoning, Text: "only thinking"}}},
			},
			Tools: []llm.ToolSpec{{Name: "todo_write", Description: "Write todos.", Parameters: json.RawMessage(schema)}},
		}, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.paths).To(Equal([]string{"/v1/chat/completions"}))
		body, _ := json.Marshal(f.lastBody())
		Expect(body).To(MatchJSON(`{
			"model":"deepseek-chat","stream":true,"stream_options":{"include_usage":true},"max_tokens":512,
			"messages":[
				{"role":"system","content":"be brief"},
				{"role":"user","content":"plan it"},
				{"role":"assistant","content":"Sure.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"todo_write","arguments":"{\"todos\":[]}"}}]},
				{"role":"tool","content":"Error: bad","tool_call_id":"call_1"},
				{"role":"assistant","content":""}
			],
			"tools":[{"type":"function","function":{"name":"todo_write","description":"Write todos.","parameters":` + schema + `}}]
		}`))
		Expect(string(body)).NotTo(ContainSubstring("reasoning"))
		Expect(f.headers[0].Get("Authorization")).To(Equal("Bearer sk-test"))
	})

	It("uses Request.Model over the configured model, and sends no Authorization without a key", func() {
		f := newFakeServer()
		f.events = []string{ev(`{"content":"ok"}`, "stop")}
		c := f.client(func(cfg *openaichat.ClientConfig) { cfg.APIKey = "" })
		req := userOnly
		req.Model = "deepseek-reasoner"
		_, err := c.Stream(ctx(), req, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.lastBody()["model"]).To(Equal("deepseek-reasoner"))
		Expect(f.headers[0].Values("Authorization")).To(BeEmpty())
	})

	It("never reads OPENAI_* from the environment", func() {
		GinkgoT().Setenv("OPENAI_BASE_URL", "http://127.0.0.1:1/nowhere")
		GinkgoT().Setenv("OPENAI_API_KEY", "sk-from-env")
		GinkgoT().Setenv("OPENAI_ORG_ID", "org-env")
		f := newFakeServer()
		f.events = []string{ev(`{"content":"ok"}`, "stop")}
		_, err := f.client(func(cfg *openaichat.ClientConfig) { cfg.APIKey = "" }).Stream(ctx(), userOnly, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(f.headers[0].Values("Authorization")).To(BeEmpty())
		Expect(f.headers[0].Values("OpenAI-Organization")).To(BeEmpty())
	})

	It("sends every request through the injected HTTP client", func() {
		f := newFakeServer()
		f.events = []string{ev(`{"content":"ok"}`, "stop")}
		var n atomic.Int32
		hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
			n.Add(1)
			return f.Client().Transport.RoundTrip(r)
		})}
		_, err := f.client(func(cfg *openaichat.ClientConfig) { cfg.HTTPClient = hc }).Stream(ctx(), userOnly, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(n.Load()).To(Equal(int32(1)))
	})

	DescribeTable("maps finish_reason",
		func(wire, want string) {
			f := newFakeServer()
			f.events = []string{ev(`{"content":"x"}`, wire)}
			r, err := f.client().Stream(ctx(), userOnly, nil)
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Finish.Kind).To(Equal(want))
		},
		Entry("stop", "stop", llm.FinishStop),
		Entry("tool_calls", "tool_calls", llm.FinishToolCalls),
		Entry("length", "length", llm.FinishLength),
		Entry("content_filter", "content_filter", llm.FinishContentFilter),
		Entry("DeepSeek insufficient_system_resource", "insufficient_system_resource", llm.FinishError),
		Entry("unknown", "something_new", llm.FinishOther),
	)

	It("maps OpenAI-style usage (cached_tokens only) and sends no usage chunk without usage", func() {
		f := newFakeServer()
		f.events = []string{ev(`{"content":"x"}`, "stop"),
			`{"id":"x","object":"chat.completion.chunk","created":1,"model":"m","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":7,"total_tokens":107,"prompt_tokens_details":{"cached_tokens":40},"completion_tokens_details":{"reasoning_tokens":2}}}`}
		r, err := f.client().Stream(ctx(), userOnly, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(*r.Usage).To(Equal(llm.Usage{InputTokens: 60, OutputTokens: 7, CacheReadTokens: 40, ReasoningTokens: 2}))

		f.events = []string{ev(`{"content":"x"}`, "stop")}
		var chunks []llm.Chunk
		r, err = f.client().Stream(ctx(), userOnly, collect(&chunks))
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Usage).To(BeNil())
		Expect(chunkJSON(chunks)).To(Equal([]string{
			`{"type":"block-start","index":1,"blockType":"text"}`,
			`{"type":"text-delta","index":1,"text":"x"}`,
			`{"type":"block-end","index":1,"block":{"type":"text","text":"x"}}`,
			`{"type":"finish","reason":{"kind":"stop"}}`,
		}))
	})

	It("numbers interleaved tool calls by first appearance", func() {
		f := newFakeServer()
		f.events = []string{
			ev(`{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"one","arguments":""}}]}`, ""),
			ev(`{"tool_calls":[{"index":1,"id":"b","type":"function","function":{"name":"two","arguments":"{}"}}]}`, ""),
			ev(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"x\":"}}]}`, ""),
			ev(`{"tool_calls":[{"index":0,"function":{"arguments":"1}"}}]}`, ""),
			ev(`{}`, "tool_calls"),
		}
		r, err := f.client().Stream(ctx(), userOnly, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Content).To(Equal([]llm.Part{
			{Type: llm.PartToolCall, ID: "a", Name: "one", Arguments: `{"x":1}`},
			{Type: llm.PartToolCall, ID: "b", Name: "two", Arguments: `{}`},
		}))
	})

	It("fails a stream that ends without a finish reason", func() {
		f := newFakeServer()
		f.events = []string{ev(`{"content":"partial"}`, "")}
		f.noFinish = true
		var chunks []llm.Chunk
		_, err := f.client().Stream(ctx(), userOnly, collect(&chunks))
		Expect(err).To(MatchError(ContainSubstring("ended without a finish reason")))
		Expect(chunks).To(HaveLen(2), "the deltas already received were delivered")
	})

	It("fails, without hanging, when the connection drops mid-stream", func() {
		f := newFakeServer()
		f.events = []string{ev(`{"content":"partial"}`, "")}
		f.drop = true
		c, cancel := context.WithTimeout(ctx(), time.Minute)
		defer cancel()
		_, err := f.client().Stream(c, userOnly, nil)
		Expect(err).To(HaveOccurred())
		Expect(c.Err()).NotTo(HaveOccurred())
	})

	It("returns promptly when the context is cancelled mid-stream", func() {
		f := newFakeServer()
		f.events = []string{ev(`{"content":"partial"}`, "")}
		f.stall = true
		c, cancel := context.WithCancel(ctx())
		done := make(chan error, 1)
		go func() {
			_, err := f.client().Stream(c, userOnly, func(llm.Chunk) error { cancel(); return nil })
			done <- err
		}()
		var err error
		Eventually(done, time.Minute).Should(Receive(&err))
		Expect(errors.Is(err, context.Canceled)).To(BeTrue(), "%v", err)
	})

	It("reports API errors with the message of the error body", func() {
		f := newFakeServer()
		f.status = 401
		f.body = `{"error":{"message":"Authentication Fails (no such user)","type":"authentication_error","param":null,"code":"invalid_request_error"}}`
		_, err := f.client().Stream(ctx(), userOnly, nil)
		var apiErr *openaichat.APIError
		Expect(errors.As(err, &apiErr)).To(BeTrue(), "%v", err)
		Expect(apiErr.StatusCode).To(Equal(401))
		Expect(apiErr.Type).To(Equal("authentication_error"))
		Expect(err.Error()).To(Equal("llm: chat completions stream: model API error: 401 Unauthorized: Authentication Fails (no such user)"))
		Expect(f.bodies).To(HaveLen(1), "no retries by default")
	})

	It("reports an error event inside the stream", func() {
		f := newFakeServer()
		f.events = []string{ev(`{"content":"x"}`, ""), `{"error":{"message":"overloaded","type":"server_error"}}`}
		_, err := f.client().Stream(ctx(), userOnly, nil)
		Expect(err).To(MatchError(ContainSubstring("overloaded")))
	})

	It("fails a chunk it cannot read, naming the field", func() {
		f := newFakeServer()
		f.events = []string{ev(`{"content":"x"}`, ""), ev(`{"reasoning_content":7}`, "")}
		_, err := f.client().Stream(ctx(), userOnly, nil)
		Expect(err).To(MatchError(ContainSubstring("reasoning_content: want a string, got 7")))
		f = newFakeServer()
		f.events = []string{ev(`{"content":["not","a","string"]}`, "")}
		_, err = f.client().Stream(ctx(), userOnly, nil)
		Expect(err).To(MatchError(ContainSubstring("chat completions stream")))
	})

	It("returns the error of onChunk", func() {
		f := newFakeServer()
		f.events = []string{ev(`{"content":"a"}`, ""), ev(`{"content":"b"}`, "stop")}
		boom := errors.New("boom")
		_, err := f.client().Stream(ctx(), userOnly, func(llm.Chunk) error { return boom })
		Expect(err).To(MatchError(boom))
	})

	It("turns a stream:false answer into the same chunk vocabulary", func() {
		f := newFakeServer()
		f.body = `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"tool_calls",
			"message":{"role":"assistant","content":"ok","reasoning_content":"think",
			"tool_calls":[{"id":"c1","type":"function","function":{"name":"todo_write","arguments":"{}"}}]}}],
			"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15,"prompt_cache_hit_tokens":4}}`
		var chunks []llm.Chunk
		r, err := f.client(func(cfg *openaichat.ClientConfig) { cfg.DisableStreaming = true }).Stream(ctx(), userOnly, collect(&chunks))
		Expect(err).NotTo(HaveOccurred())
		Expect(f.lastBody()).NotTo(HaveKey("stream"))
		Expect(chunkJSON(chunks)).To(Equal([]string{
			`{"type":"block-start","index":0,"blockType":"reasoning"}`,
			`{"type":"reasoning-delta","index":0,"text":"think"}`,
			`{"type":"block-start","index":1,"blockType":"text"}`,
			`{"type":"text-delta","index":1,"text":"ok"}`,
			`{"type":"block-start","index":2,"blockType":"tool-call"}`,
			`{"type":"tool-call-delta","index":2,"id":"c1","name":"todo_write","argumentsDelta":""}`,
			`{"type":"tool-call-delta","index":2,"id":"c1","name":"todo_write","argumentsDelta":"{}"}`,
			`{"type":"block-end","index":0,"block":{"type":"reasoning","text":"think"}}`,
			`{"type":"block-end","index":1,"block":{"type":"text","text":"ok"}}`,
			`{"type":"block-end","index":2,"block":{"type":"tool-call","id":"c1","name":"todo_write","arguments":"{}"}}`,
			`{"type":"usage","usage":{"inputTokens":6,"outputTokens":5,"cacheReadTokens":4,"reasoningTokens":0}}`,
			`{"type":"finish","reason":{"kind":"tool-calls"}}`,
		}))
		Expect(r.Finish.Kind).To(Equal(llm.FinishToolCalls))
	})

	It("rejects a bad configuration", func() {
		_, err := openaichat.NewClient(openaichat.ClientConfig{BaseURL: "api.deepseek.com"})
		Expect(err).To(MatchError(ContainSubstring("want http(s)://host")))
		_, err = openaichat.NewClient(openaichat.ClientConfig{BaseURL: "http://127.0.0.1:1", MaxRetries: -1})
		Expect(err).To(HaveOccurred())
		c, err := openaichat.NewClient(openaichat.ClientConfig{BaseURL: "http://127.0.0.1:1"})
		Expect(err).NotTo(HaveOccurred())
		_, err = c.Stream(ctx(), userOnly, nil)
		Expect(err).To(MatchError(ContainSubstring("no model")))
		_, err = c.Stream(ctx(), llm.Request{Model: "m", Messages: []llm.Message{{Role: "robot"}}}, nil)
		Expect(err).To(MatchError(ContainSubstring(`unknown role "robot"`)))
	})

	It("reads its configuration from DEEPSEEK_* variables", func() {
		GinkgoT().Setenv("DEEPSEEK_BASE_URL", "")
		GinkgoT().Setenv("DEEPSEEK_API_KEY", "")
		GinkgoT().Setenv("DEEPSEEK_MODEL", "")
		Expect(openaichat.ConfigFromEnv("")).To(Equal(openaichat.ClientConfig{BaseURL: "https://api.deepseek.com", Model: "deepseek-chat"}))
		GinkgoT().Setenv("DEEPSEEK_BASE_URL", "http://127.0.0.1:9/v1")
		GinkgoT().Setenv("DEEPSEEK_API_KEY", "sk-x")
		GinkgoT().Setenv("DEEPSEEK_MODEL", "deepseek-reasoner")
		Expect(openaichat.ConfigFromEnv("")).To(Equal(openaichat.ClientConfig{BaseURL: "http://127.0.0.1:9/v1", APIKey: "sk-x", Model: "deepseek-reasoner"}))
		Expect(openaichat.ConfigFromEnv("flag-model").Model).To(Equal("flag-model"))
	})
})

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// Chunks of the two steps of interop/deepseek-harness/todo-plan/session.jsonl,
// as the original TypeScript harness logged them against DeepSeek.
var interopStep1 = []string{
	`{"type":"block-start","index":0,"blockType":"reasoning"}`,
	`{"type":"reasoning-delta","index":0,"text":"The"}`,
	`{"type":"reasoning-delta","index":0,"text":" user"}`,
	`{"type":"reasoning-delta","index":0,"text":" wants"}`,
	`{"type":"reasoning-delta","index":0,"text":" me"}`,
	`{"type":"reasoning-delta","index":0,"text":" to"}`,
	`{"type":"reasoning-delta","index":0,"text":" use"}`,
	`{"type":"reasoning-delta","index":0,"text":" todo"}`,
	`{"type":"reasoning-delta","index":0,"text":"_write"}`,
	`{"type":"reasoning-delta","index":0,"text":" to"}`,
	`{"type":"reasoning-delta","index":0,"text":" record"}`,
	`{"type":"reasoning-delta","index":0,"text":" a"}`,
	`{"type":"reasoning-delta","index":0,"text":" plan"}`,
	`{"type":"reasoning-delta","index":0,"text":" with"}`,
	`{"type":"reasoning-delta","index":0,"text":" exactly"}`,
	`{"type":"reasoning-delta","index":0,"text":" three"}`,
	`{"type":"reasoning-delta","index":0,"text":" todos"}`,
	`{"type":"reasoning-delta","index":0,"text":","}`,
	`{"type":"reasoning-delta","index":0,"text":" then"}`,
	`{"type":"reasoning-delta","index":0,"text":" reply"}`,
	`{"type":"reasoning-delta","index":0,"text":" with"}`,
	`{"type":"reasoning-delta","index":0,"text":" D"}`,
	`{"type":"reasoning-delta","index":0,"text":"ONE"}`,
	`{"type":"reasoning-delta","index":0,"text":"."}`,
	`{"type":"block-start","index":1,"blockType":"tool-call"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":""}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"{"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"\""}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"t"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"odos"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"\""}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":": "}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"["}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"{\""}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"content"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"\":"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":" \""}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"read"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":" the"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":" code"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"\","}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":" \""}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"status"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"\":"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":" \""}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"in"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"_pro"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"gress"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"\"},"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":" {\""}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"content"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"\":"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":" \""}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"write"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":" the"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":" fix"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"\","}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":" \""}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"status"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"\":"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":" \""}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"pending"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"\"},"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":" {\""}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"content"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"\":"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":" \""}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"run"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":" the"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":" tests"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"\","}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":" \""}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"status"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"\":"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":" \""}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"pending"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"\""}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"}]"}`,
	`{"type":"tool-call-delta","index":1,"id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","argumentsDelta":"}"}`,
	`{"type":"block-end","index":0,"block":{"type":"reasoning","text":"The user wants me to use todo_write to record a plan with exactly three todos, then reply with DONE."}}`,
	`{"type":"block-end","index":1,"block":{"type":"tool-call","id":"call_00_OK2ZF1DYrsKHQQtxfQlJ0810","name":"todo_write","arguments":"{\"todos\": [{\"content\": \"read the code\", \"status\": \"in_progress\"}, {\"content\": \"write the fix\", \"status\": \"pending\"}, {\"content\": \"run the tests\", \"status\": \"pending\"}]}"}}`,
	`{"type":"usage","usage":{"inputTokens":1706,"outputTokens":113,"cacheReadTokens":0,"reasoningTokens":23}}`,
	`{"type":"finish","reason":{"kind":"tool-calls"}}`,
}

var interopStep2 = []string{
	`{"type":"block-start","index":0,"blockType":"reasoning"}`,
	`{"type":"reasoning-delta","index":0,"text":"The"}`,
	`{"type":"reasoning-delta","index":0,"text":" todo"}`,
	`{"type":"reasoning-delta","index":0,"text":" list"}`,
	`{"type":"reasoning-delta","index":0,"text":" was"}`,
	`{"type":"reasoning-delta","index":0,"text":" set"}`,
	`{"type":"reasoning-delta","index":0,"text":" successfully"}`,
	`{"type":"reasoning-delta","index":0,"text":"."}`,
	`{"type":"reasoning-delta","index":0,"text":" Now"}`,
	`{"type":"reasoning-delta","index":0,"text":" I"}`,
	`{"type":"reasoning-delta","index":0,"text":" just"}`,
	`{"type":"reasoning-delta","index":0,"text":" need"}`,
	`{"type":"reasoning-delta","index":0,"text":" to"}`,
	`{"type":"reasoning-delta","index":0,"text":" reply"}`,
	`{"type":"reasoning-delta","index":0,"text":" with"}`,
	`{"type":"reasoning-delta","index":0,"text":" the"}`,
	`{"type":"reasoning-delta","index":0,"text":" single"}`,
	`{"type":"reasoning-delta","index":0,"text":" word"}`,
	`{"type":"reasoning-delta","index":0,"text":" D"}`,
	`{"type":"reasoning-delta","index":0,"text":"ONE"}`,
	`{"type":"reasoning-delta","index":0,"text":"."}`,
	`{"type":"block-start","index":1,"blockType":"text"}`,
	`{"type":"text-delta","index":1,"text":"D"}`,
	`{"type":"text-delta","index":1,"text":"ONE"}`,
	`{"type":"block-end","index":0,"block":{"type":"reasoning","text":"The todo list was set successfully. Now I just need to reply with the single word DONE."}}`,
	`{"type":"block-end","index":1,"block":{"type":"text","text":"DONE"}}`,
	`{"type":"usage","usage":{"inputTokens":174,"outputTokens":23,"cacheReadTokens":1664,"reasoningTokens":20}}`,
	`{"type":"finish","reason":{"kind":"stop"}}`,
}
