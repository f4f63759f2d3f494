package wire

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/shared"

	"github.com/todoharness/todoharness/harness/builtin"
	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/llm/openaichat"
)

// The reference agent's chat client (harness/llm/openaichat) was built on
// openai-go until it got a client of its own; these specs hold the two to
// the same request bytes, so that cassettes recorded through the SDK keep
// matching and `cassette from-log` rebuilds the committed ones byte for
// byte.

// bodySpy answers every POST with a one-word answer (an event stream when
// the request asks for one) and keeps the raw request bodies.
type bodySpy struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
}

func newBodySpy() *bodySpy {
	s := &bodySpy{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		s.bodies = append(s.bodies, string(raw))
		s.mu.Unlock()
		var req struct {
			Stream bool `json:"stream"`
		}
		_ = json.Unmarshal(raw, &req)
		if req.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
			_, _ = io.WriteString(w, `data: {"choices":[{"index":0,"delta":{"content":"ok"},"finish_reason":"stop"}]}`+"\n\ndata: [DONE]\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":"ok"}}]}`)
	}))
	DeferCleanup(s.Close)
	return s
}

func (s *bodySpy) last() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	Expect(s.bodies).NotTo(BeEmpty())
	return s.bodies[len(s.bodies)-1]
}

// sdkParams is the mapping of an llm.Request onto openai-go's parameters
// that harness/llm/openaichat used while it was built on the SDK.
func sdkParams(req llm.Request, model string, maxTokens int) (openai.ChatCompletionNewParams, error) {
	p := openai.ChatCompletionNewParams{Model: shared.ChatModel(model)}
	if maxTokens > 0 {
		p.MaxTokens = param.NewOpt(int64(maxTokens))
	}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem:
			p.Messages = append(p.Messages, openai.SystemMessage(m.Text()))
		case llm.RoleUser:
			p.Messages = append(p.Messages, openai.UserMessage(m.Text()))
		case llm.RoleAssistant:
			var a openai.ChatCompletionAssistantMessageParam
			calls := m.ToolCalls()
			if text := m.Text(); text != "" || len(calls) == 0 {
				a.Content.OfString = param.NewOpt(text)
			}
			for _, tc := range calls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: tc.Arguments},
					},
				})
			}
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case llm.RoleTool:
			p.Messages = append(p.Messages, openai.ToolMessage(m.Text(), m.ToolCallID))
		}
	}
	for _, t := range req.Tools {
		def := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			def.Description = param.NewOpt(t.Description)
		}
		if len(t.Parameters) > 0 {
			var schema shared.FunctionParameters
			if err := json.Unmarshal(t.Parameters, &schema); err != nil {
				return p, err
			}
			def.Parameters = schema
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(def))
	}
	return p, nil
}

// sdkSend sends req through openai-go as openaichat sent it: stream:true
// and stream_options.include_usage set on a streaming request.
func sdkSend(ctx context.Context, baseURL string, req llm.Request, model string, maxTokens int, stream bool) error {
	p, err := sdkParams(req, model, maxTokens)
	if err != nil {
		return err
	}
	svc := openai.NewChatCompletionService(option.WithBaseURL(baseURL), option.WithMaxRetries(0))
	if !stream {
		_, err = svc.New(ctx, p)
		return err
	}
	p.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)}
	var raw *http.Response
	_, err = svc.New(ctx, p, option.WithJSONSet("stream", true), option.WithResponseBodyInto(&raw))
	if raw != nil {
		_ = raw.Body.Close()
	}
	return err
}

func textPart(s string) llm.Part { return llm.Part{Type: llm.PartText, Text: s} }

var _ = Describe("the reference agent's chat client beside openai-go", func() {
	reg, err := builtin.Compose("")
	if err != nil {
		panic(err)
	}
	// odd is text that encoders treat differently: HTML characters, the
	// JavaScript line separators, a control character, an invalid byte,
	// quotes and backslashes, a character outside the BMP.
	const odd = "<b>&amp;</b> \u2028\u2029 \x01 \xff \"q\" \\ 🙂 é"
	conversation := llm.Request{
		System: "be brief " + odd,
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Part{textPart("plan "), textPart(odd)}},
			{Role: llm.RoleAssistant, Content: []llm.Part{
				{Type: llm.PartReasoning, Text: "thinking"},
				textPart("Sure " + odd),
				{Type: llm.PartToolCall, ID: "call_1", Name: "todo_write", Arguments: `{"todos":[{"content":"a <b>","status":"pending"}]}`},
				{Type: llm.PartToolCall, ID: "call_2", Name: "todo_write", Arguments: ""},
			}},
			{Role: llm.RoleTool, ToolCallID: "call_1", Content: []llm.Part{textPart("Updated todo list: 1 pending, 0 in progress, 0 completed.")}},
			{Role: llm.RoleTool, ToolCallID: "call_2", IsError: true, Content: []llm.Part{textPart("Error: " + odd)}},
			{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartToolCall, ID: "call_3", Name: "todo_write", Arguments: `{}`},
				{Type: llm.PartToolCall, ID: "call_4"}, // a call without name and arguments
			}},
			{Role: llm.RoleTool, ToolCallID: "call_3", Content: []llm.Part{textPart("")}},
			{Role: llm.RoleAssistant, Content: []llm.Part{{Type: llm.PartReasoning, Text: "only thinking"}}},
			{Role: llm.RoleSystem, Content: []llm.Part{textPart("a late system message")}},
			{Role: llm.RoleUser, Content: []llm.Part{textPart("")}},
		},
		Tools: append(reg.Specs(),
			llm.ToolSpec{Name: "numbers", Parameters: json.RawMessage(`{"z":1,"a":1.50,"big":12345678901234567890,"e":1e3,"neg":-0.0,"s":"` + "<&>\u2028" + `","n":null,"arr":[3,2,1],"nested":{"y":true,"x":false}}`)},
			llm.ToolSpec{Name: "empty", Description: "no parameters", Parameters: json.RawMessage(`{}`)},
			llm.ToolSpec{Name: "null", Parameters: json.RawMessage(`null`)},
			llm.ToolSpec{Name: "bare"},
		),
	}

	for _, stream := range []bool{true, false} {
		for _, maxTokens := range []int{0, 512} {
			It(fmt.Sprintf("sends the request body openai-go sent, byte for byte (stream %v, max tokens %d)", stream, maxTokens), func(ctx SpecContext) {
				spy := newBodySpy()
				Expect(sdkSend(ctx, spy.URL+"/v1", conversation, "deepseek-chat", maxTokens, stream)).To(Succeed())
				theirs := spy.last()
				c, err := openaichat.NewClient(openaichat.ClientConfig{BaseURL: spy.URL + "/v1", Model: "deepseek-chat",
					MaxTokens: maxTokens, DisableStreaming: !stream})
				Expect(err).NotTo(HaveOccurred())
				_, err = c.Stream(ctx, conversation, nil)
				Expect(err).NotTo(HaveOccurred())
				Expect(spy.last()).To(Equal(theirs))
			})
		}
	}

	It("sends a one-message request as openai-go did", func(ctx SpecContext) {
		spy := newBodySpy()
		req := llm.Request{Model: "deepseek-reasoner", Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{textPart("hi")}}}}
		Expect(sdkSend(ctx, spy.URL+"/v1", req, "deepseek-reasoner", 0, true)).To(Succeed())
		theirs := spy.last()
		c, err := openaichat.NewClient(openaichat.ClientConfig{BaseURL: spy.URL + "/v1", Model: "other"})
		Expect(err).NotTo(HaveOccurred())
		_, err = c.Stream(ctx, req, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(spy.last()).To(Equal(theirs))
		Expect(theirs).To(Equal(`{"messages":[{"content":"hi","role":"user"}],"model":"deepseek-reasoner","stream_options":{"include_usage":true},"stream":true}`))
	})
})
