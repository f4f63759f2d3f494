package mockmodel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/todoharness/todoharness/harness/llm"
)

// openAIChat is the OpenAI chat-completions wire (also DeepSeek's),
// WireOpenAIChat: POST /v1/chat/completions and /chat/completions; SSE
// chat.completion.chunk data lines, reasoning as DeepSeek's
// reasoning_content, a usage chunk when stream_options.include_usage is
// set, [DONE]; GET /v1/models and /models.
type openAIChat struct{}

// WireOpenAIChat is the JournalEntry.Wire of its requests.
const WireOpenAIChat = "openai-chat"

// ModelID is the model the server lists on GET /v1/models; it accepts any
// model name in requests and echoes it back.
const ModelID = "todoharness-mock"

func (openAIChat) info() WireInfo {
	return WireInfo{Name: WireOpenAIChat, Flag: "openai-chat", API: "OpenAI chat completions", Client: "OpenAI",
		Serves:   "POST /v1/chat/completions (and /chat/completions), GET /v1/models",
		Endpoint: "POST {{.BaseURL}}/chat/completions"}
}

func (openAIChat) owns(path string) bool { return strings.HasSuffix(path, "/chat/completions") }

// looksLike: an unknown endpoint nothing else claims gets the first
// wire's error shape, this one's, anyway.
func (openAIChat) looksLike(*http.Request) bool { return false }

func (openAIChat) decode(_ string, body []byte) (request, error) {
	_, req, err := decodeOpenAIChat(body)
	return req, err
}

func (openAIChat) writeError(w http.ResponseWriter, e *RequestError) { writeOpenAIError(w, e) }

func (openAIChat) routes() []route {
	return []route{
		{http.MethodPost, "/v1/chat/completions", "", serveOpenAIChat},
		{http.MethodPost, "/chat/completions", "", serveOpenAIChat},
		{http.MethodGet, "/v1/models", "", serveOpenAIModels},
		{http.MethodGet, "/models", "", serveOpenAIModels},
	}
}

// ---- request ----

type oaiRequest struct {
	Model         string         `json:"model"`
	Messages      []oaiMessage   `json:"messages"`
	Tools         []oaiTool      `json:"tools"`
	Stream        bool           `json:"stream"`
	StreamOptions *oaiStreamOpts `json:"stream_options"`
}

type oaiStreamOpts struct {
	IncludeUsage bool `json:"include_usage"`
}

type oaiMessage struct {
	Role             string          `json:"role"`
	Content          json.RawMessage `json:"content"`
	ReasoningContent *string         `json:"reasoning_content,omitempty"`
	ToolCalls        []oaiToolCall   `json:"tool_calls,omitempty"`
	ToolCallID       string          `json:"tool_call_id,omitempty"`
}

type oaiToolCall struct {
	Index    *int            `json:"index,omitempty"`
	ID       string          `json:"id,omitempty"`
	Type     string          `json:"type,omitempty"`
	Function oaiFunctionCall `json:"function"`
}

type oaiFunctionCall struct {
	Name      string  `json:"name,omitempty"`
	Arguments *string `json:"arguments,omitempty"`
}

type oaiTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// errorResultPrefix marks a tool result as an error on the OpenAI wire,
// which has no error flag: the harness words every failed tool result
// "Error: <message>".
const errorResultPrefix = "Error:"

// decodeOpenAIChat turns a chat-completions body into the canonical request.
func decodeOpenAIChat(body []byte) (oaiRequest, request, error) {
	var in oaiRequest
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&in); err != nil {
		return in, request{}, fmt.Errorf("malformed JSON body: %w", err)
	}
	if dec.More() {
		return in, request{}, errors.New("malformed JSON body: trailing data after the JSON object")
	}
	out := request{stream: in.Stream, model: in.Model, errFrom: ToolErrorsPrefix}
	if in.Messages == nil {
		return in, out, errors.New("messages: required")
	}
	var system []string
	leading := true
	for i, m := range in.Messages {
		text, err := contentText(m.Content, partNoun, "text")
		if err != nil {
			return in, out, fmt.Errorf("messages[%d].content: %w", i, err)
		}
		switch m.Role {
		case "system", "developer":
			if leading {
				system = append(system, text)
				continue
			}
			out.messages = append(out.messages, llm.Message{Role: llm.RoleSystem, Content: textParts(text)})
		case "user":
			out.messages = append(out.messages, llm.Message{Role: llm.RoleUser, Content: textParts(text)})
		case "assistant":
			msg := llm.Message{Role: llm.RoleAssistant}
			if m.ReasoningContent != nil && *m.ReasoningContent != "" {
				msg.Content = append(msg.Content, llm.Part{Type: llm.PartReasoning, Text: *m.ReasoningContent})
			}
			msg.Content = append(msg.Content, textParts(text)...)
			for j, tc := range m.ToolCalls {
				if tc.Function.Name == "" {
					return in, out, fmt.Errorf("messages[%d].tool_calls[%d].function.name: required", i, j)
				}
				args := ""
				if tc.Function.Arguments != nil {
					args = *tc.Function.Arguments
				}
				msg.Content = append(msg.Content, llm.Part{Type: llm.PartToolCall, ID: tc.ID, Name: tc.Function.Name, Arguments: args})
			}
			out.messages = append(out.messages, msg)
		case "tool":
			if m.ToolCallID == "" {
				return in, out, fmt.Errorf("messages[%d].tool_call_id: required for a tool message", i)
			}
			out.messages = append(out.messages, llm.Message{
				Role: llm.RoleTool, Content: textParts(text), ToolCallID: m.ToolCallID,
				IsError: strings.HasPrefix(text, errorResultPrefix),
			})
		default:
			return in, out, fmt.Errorf("messages[%d].role: unknown role %q", i, m.Role)
		}
		leading = false
	}
	out.system = strings.Join(system, "\n\n")
	for i, t := range in.Tools {
		if t.Type != "" && t.Type != "function" {
			return in, out, fmt.Errorf("tools[%d].type: unsupported tool type %q", i, t.Type)
		}
		if t.Function.Name == "" {
			return in, out, fmt.Errorf("tools[%d].function.name: required", i)
		}
		out.tools = append(out.tools, llm.ToolSpec{
			Name: t.Function.Name, Description: t.Function.Description,
			Parameters: append(json.RawMessage(nil), t.Function.Parameters...),
		})
	}
	return in, out, nil
}

func textParts(text string) []llm.Part {
	if text == "" {
		return nil
	}
	return []llm.Part{{Type: llm.PartText, Text: text}}
}

// ---- handlers ----

func serveOpenAIChat(s *Server, w http.ResponseWriter, r *http.Request) {
	var in oaiRequest
	s.serveTurn(w, r, turnCodec{
		wire: openAIChat{},
		decode: func(body []byte, _ *http.Request) (request, error) {
			var req request
			var err error
			in, req, err = decodeOpenAIChat(body)
			return req, err
		},
		answer: func(w http.ResponseWriter, r *http.Request, pl *plan, req request, n int) {
			model := req.model
			if model == "" {
				model = ModelID
			}
			id := "chatcmpl-mock-" + strconv.Itoa(n)
			if req.stream {
				includeUsage := in.StreamOptions != nil && in.StreamOptions.IncludeUsage
				streamOpenAIChat(w, r, pl, id, model, includeUsage)
				return
			}
			completeOpenAIChat(w, r, pl, id, model)
		},
	})
}

func serveOpenAIModels(s *Server, w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list",
		"data": []map[string]any{
			{"id": ModelID, "object": "model", "created": 0, "owned_by": "todoharness"},
		},
	})
}

// ---- responses ----

type oaiChunk struct {
	ID      string           `json:"id"`
	Object  string           `json:"object"`
	Created int64            `json:"created"`
	Model   string           `json:"model"`
	Choices []oaiChunkChoice `json:"choices"`
	Usage   *oaiUsage        `json:"usage,omitempty"`
}

type oaiChunkChoice struct {
	Index        int      `json:"index"`
	Delta        oaiDelta `json:"delta"`
	FinishReason *string  `json:"finish_reason"`
}

type oaiDelta struct {
	Role             string        `json:"role,omitempty"`
	Content          *string       `json:"content,omitempty"`
	ReasoningContent *string       `json:"reasoning_content,omitempty"`
	ToolCalls        []oaiToolCall `json:"tool_calls,omitempty"`
}

type oaiUsage struct {
	PromptTokens            int                  `json:"prompt_tokens"`
	CompletionTokens        int                  `json:"completion_tokens"`
	TotalTokens             int                  `json:"total_tokens"`
	PromptTokensDetails     oaiPromptDetails     `json:"prompt_tokens_details"`
	CompletionTokensDetails oaiCompletionDetails `json:"completion_tokens_details"`
	// DeepSeek's names for the cache split.
	PromptCacheHitTokens  int `json:"prompt_cache_hit_tokens"`
	PromptCacheMissTokens int `json:"prompt_cache_miss_tokens"`
}

type oaiPromptDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

type oaiCompletionDetails struct {
	ReasoningTokens int `json:"reasoning_tokens"`
}

// usageOf renders canonical usage on the wire. inputTokens counts the prompt
// tokens not read from the cache (as in the original harness's logs), so the
// wire's prompt_tokens is inputTokens + cacheReadTokens.
func usageOf(u llm.Usage) *oaiUsage {
	prompt := u.InputTokens + u.CacheReadTokens
	return &oaiUsage{
		PromptTokens: prompt, CompletionTokens: u.OutputTokens, TotalTokens: prompt + u.OutputTokens,
		PromptTokensDetails:     oaiPromptDetails{CachedTokens: u.CacheReadTokens},
		CompletionTokensDetails: oaiCompletionDetails{ReasoningTokens: u.ReasoningTokens},
		PromptCacheHitTokens:    u.CacheReadTokens, PromptCacheMissTokens: u.InputTokens,
	}
}

func wireFinish(kind string) string {
	switch kind {
	case llm.FinishToolCalls:
		return "tool_calls"
	case llm.FinishContentFilter:
		return "content_filter"
	default: // stop, length
		return kind
	}
}

// streamOpenAIChat writes the turn as SSE chat.completion.chunk events: a
// role chunk, one chunk per delta (a tool call's first carries its id and
// name), the finish chunk, the usage chunk when asked for, and [DONE].
func streamOpenAIChat(w http.ResponseWriter, r *http.Request, pl *plan, id, model string, includeUsage bool) {
	sink := &chatSink{sse: newSSE(w, "\n\n"), pl: pl, id: id, model: model}
	empty := ""
	if !sink.send(oaiDelta{Role: "assistant", Content: &empty}, nil) {
		return
	}
	streamTurn(r, pl, sink, func() bool {
		finish := wireFinish(pl.finish)
		if !sink.send(oaiDelta{}, &finish) {
			return false
		}
		if includeUsage && !sink.chunk(oaiChunk{Choices: []oaiChunkChoice{}, Usage: usageOf(pl.usage)}) {
			return false
		}
		return sink.sse.sendRaw("", []byte("[DONE]"))
	})
}

// chatSink renders a turn's blocks as chat-completions chunks.
type chatSink struct {
	sse       *sseWriter
	pl        *plan
	id, model string
}

func (s *chatSink) chunk(c oaiChunk) bool {
	c.ID, c.Object, c.Model = s.id, "chat.completion.chunk", s.model
	return s.sse.send("", c)
}

func (s *chatSink) send(d oaiDelta, finish *string) bool {
	return s.chunk(oaiChunk{Choices: []oaiChunkChoice{{Delta: d, FinishReason: finish}}})
}

// open sends a tool call's first chunk (id, name, empty arguments); text
// and reasoning blocks have no opening chunk.
func (s *chatSink) open(b blockRef) bool {
	if b.kind != deltaCallStart {
		return true
	}
	c := s.pl.calls[b.call]
	idx, empty := b.call, ""
	return s.send(oaiDelta{ToolCalls: []oaiToolCall{{Index: &idx, ID: c.id, Type: "function",
		Function: oaiFunctionCall{Name: c.name, Arguments: &empty}}}}, nil)
}

func (s *chatSink) delta(b blockRef, text string) bool {
	switch b.kind {
	case deltaReasoning:
		return s.send(oaiDelta{ReasoningContent: &text}, nil)
	case deltaText:
		return s.send(oaiDelta{Content: &text}, nil)
	default: // a tool call's arguments
		idx := b.call
		return s.send(oaiDelta{ToolCalls: []oaiToolCall{{Index: &idx, Function: oaiFunctionCall{Arguments: &text}}}}, nil)
	}
}

func (s *chatSink) close(blockRef) bool { return true }

type oaiCompletion struct {
	ID      string          `json:"id"`
	Object  string          `json:"object"`
	Created int64           `json:"created"`
	Model   string          `json:"model"`
	Choices []oaiFullChoice `json:"choices"`
	Usage   *oaiUsage       `json:"usage"`
}

type oaiFullChoice struct {
	Index        int        `json:"index"`
	Message      oaiFullMsg `json:"message"`
	FinishReason string     `json:"finish_reason"`
	Logprobs     any        `json:"logprobs"`
}

type oaiFullMsg struct {
	Role             string        `json:"role"`
	Content          *string       `json:"content"`
	ReasoningContent *string       `json:"reasoning_content,omitempty"`
	ToolCalls        []oaiToolCall `json:"tool_calls,omitempty"`
}

// completeOpenAIChat writes the turn as one chat.completion object.
func completeOpenAIChat(w http.ResponseWriter, r *http.Request, pl *plan, id, model string) {
	msg := oaiFullMsg{Role: "assistant"}
	if pl.textIdx >= 0 {
		t := pl.text
		msg.Content = &t
	}
	if pl.reasoningIdx >= 0 {
		t := pl.reasoning
		msg.ReasoningContent = &t
	}
	for _, c := range pl.calls {
		args := c.args
		msg.ToolCalls = append(msg.ToolCalls, oaiToolCall{ID: c.id, Type: "function",
			Function: oaiFunctionCall{Name: c.name, Arguments: &args}})
	}
	completeTurn(w, r, pl, oaiCompletion{
		ID: id, Object: "chat.completion", Model: model,
		Choices: []oaiFullChoice{{Message: msg, FinishReason: wireFinish(pl.finish)}},
		Usage:   usageOf(pl.usage),
	})
}

// writeOpenAIError writes e as an OpenAI error body (chat completions and
// Responses share it).
func writeOpenAIError(w http.ResponseWriter, e *RequestError) {
	noRetry(w, e)
	writeJSON(w, e.Status, map[string]any{
		"error": map[string]any{
			"message": e.Message,
			"type":    e.errType(),
			"param":   nil,
			"code":    e.Code,
		},
	})
}
