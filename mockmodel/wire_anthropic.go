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

// anthropicMessages is the Anthropic Messages wire, WireAnthropic: POST
// /v1/messages; system as a string or text blocks, text, thinking,
// tool_use and tool_result blocks (is_error), tools with input_schema
// (POST /v1/messages/count_tokens answers an estimate, takes no turn and
// is not journaled: Claude Code asks it first). SSE message_start, ping,
// content_block_start/delta/stop per block (thinking_delta and a
// signature_delta, text_delta, input_json_delta), message_delta with
// stop_reason and usage, message_stop; stream false answers the message.
// Reasoning goes out as a thinking block (with a fixed signature), text as
// a text block, tool calls as tool_use blocks whose input streams as
// input_json_delta; errors are {type:"error", error:{type, message}}.
type anthropicMessages struct{}

// WireAnthropic is the JournalEntry.Wire of its requests.
const WireAnthropic = "anthropic-messages"

// anthropicSignature is the signature of every thinking block the mock
// sends (agents send thinking blocks back with it).
const anthropicSignature = "todoharness-mock-signature"

func (anthropicMessages) info() WireInfo {
	return WireInfo{Name: WireAnthropic, Flag: "anthropic", API: "Anthropic Messages", Client: "Anthropic",
		Serves:   "POST /v1/messages (and /v1/messages/count_tokens)",
		Endpoint: "POST {{.URL}}/v1/messages"}
}

func (anthropicMessages) owns(path string) bool { return strings.HasSuffix(path, "/messages") }

func (anthropicMessages) looksLike(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/v1/messages") || r.Header.Get("anthropic-version") != ""
}

func (anthropicMessages) decode(_ string, body []byte) (request, error) { return decodeAnthropic(body) }

func (anthropicMessages) routes() []route {
	return []route{
		{http.MethodPost, "/v1/messages", "", serveAnthropic},
		{http.MethodPost, "/v1/messages/count_tokens", "", serveAnthropicCountTokens},
	}
}

// serveAnthropicCountTokens answers POST /v1/messages/count_tokens (Claude
// Code asks it before a conversation and falls back to a real model
// request, which would take a script turn, when it is missing). It is no
// model turn and is not journaled: the count is an estimate, a token per
// four bytes of the body.
func serveAnthropicCountTokens(s *Server, w http.ResponseWriter, r *http.Request) {
	body, err := readBody(r)
	if err != nil || !json.Valid(body) {
		e := &RequestError{Code: CodeMalformed, Status: http.StatusBadRequest, Turn: -1,
			Message: fmt.Sprintf("%s: POST %s: the body is not JSON", s.p.label(), r.URL.Path)}
		anthropicMessages{}.writeError(w, e)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"input_tokens": len(body)/4 + 1})
}

func (anthropicMessages) writeError(w http.ResponseWriter, e *RequestError) {
	noRetry(w, e)
	typ := "invalid_request_error"
	switch {
	case e.Status >= 500:
		typ = "api_error"
	case e.Status == http.StatusNotFound:
		typ = "not_found_error"
	}
	writeJSON(w, e.Status, map[string]any{
		"type":  "error",
		"error": map[string]any{"type": typ, "message": e.Message, "details": map[string]any{"error_code": e.Code}},
	})
}

// ---- request ----

type antRequest struct {
	Model    string          `json:"model"`
	System   json.RawMessage `json:"system"`
	Messages []antMessage    `json:"messages"`
	Tools    []antTool       `json:"tools"`
	Stream   bool            `json:"stream"`
}

type antMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// antBlock is any content block; which fields count depends on Type.
type antBlock struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text"`
	Thinking  *string         `json:"thinking"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

type antTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// antUser adds a user message's blocks to out: a tool message per
// tool_result, the text between them as user messages.
func antUser(out *request, at string, blocks []antBlock) error {
	var user *llm.Message
	for j, b := range blocks {
		bat := fmt.Sprintf("%s.content[%d]", at, j)
		switch b.Type {
		case "text":
			if b.Text == nil {
				return fmt.Errorf("%s.text: required", bat)
			}
			if user == nil {
				out.messages = append(out.messages, llm.Message{Role: llm.RoleUser})
				user = &out.messages[len(out.messages)-1]
			}
			user.Content = append(user.Content, llm.Part{Type: llm.PartText, Text: *b.Text})
		case "tool_result":
			if b.ToolUseID == "" {
				return fmt.Errorf("%s.tool_use_id: required", bat)
			}
			text, err := contentText(b.Content, blockNoun, "text")
			if err != nil {
				return fmt.Errorf("%s.content: %w", bat, err)
			}
			out.messages = append(out.messages, llm.Message{Role: llm.RoleTool, ToolCallID: b.ToolUseID,
				Content: textParts(text), IsError: b.IsError})
			user = nil
		default:
			return fmt.Errorf("%s.type: unsupported block type %q in a user message (the mock reads text and tool_result)", bat, b.Type)
		}
	}
	return nil
}

// antAssistant adds an assistant message's blocks to out as one message.
func antAssistant(out *request, at string, blocks []antBlock) error {
	msg := llm.Message{Role: llm.RoleAssistant}
	for j, b := range blocks {
		bat := fmt.Sprintf("%s.content[%d]", at, j)
		switch b.Type {
		case "thinking":
			if b.Thinking != nil && *b.Thinking != "" {
				msg.Content = append(msg.Content, llm.Part{Type: llm.PartReasoning, Text: *b.Thinking})
			}
		case "redacted_thinking":
		case "text":
			if b.Text == nil {
				return fmt.Errorf("%s.text: required", bat)
			}
			msg.Content = append(msg.Content, textParts(*b.Text)...)
		case "tool_use":
			if b.ID == "" || b.Name == "" {
				return fmt.Errorf("%s: a tool_use block needs id and name", bat)
			}
			args := "{}"
			if len(b.Input) > 0 {
				args = compactJSON(b.Input)
			}
			msg.Content = append(msg.Content, llm.Part{Type: llm.PartToolCall, ID: b.ID, Name: b.Name, Arguments: args})
		default:
			return fmt.Errorf("%s.type: unsupported block type %q in an assistant message (the mock reads thinking, text and tool_use)", bat, b.Type)
		}
	}
	out.messages = append(out.messages, msg)
	return nil
}

// decodeAnthropic turns a Messages body into the canonical request: a
// user message's tool_result blocks become tool messages (IsError from
// is_error), its text blocks a user message, in their order.
func decodeAnthropic(body []byte) (request, error) {
	var in antRequest
	if err := decodeStrict(body, &in); err != nil {
		return request{}, err
	}
	out := request{stream: in.Stream, model: in.Model, errFrom: ToolErrorsFlag}
	system, err := antSystem(in.System)
	if err != nil {
		return out, fmt.Errorf("system: %w", err)
	}
	out.system = system
	if in.Messages == nil {
		return out, errors.New("messages: required")
	}
	for i, m := range in.Messages {
		at := fmt.Sprintf("messages[%d]", i)
		blocks, err := antBlocks(m.Content)
		if err != nil {
			return out, fmt.Errorf("%s.content: %w", at, err)
		}
		switch m.Role {
		case "user":
			err = antUser(&out, at, blocks)
		case "assistant":
			err = antAssistant(&out, at, blocks)
		default:
			err = fmt.Errorf("%s.role: unknown role %q (want user or assistant)", at, m.Role)
		}
		if err != nil {
			return out, err
		}
	}
	for i, t := range in.Tools {
		if t.Name == "" {
			return out, fmt.Errorf("tools[%d].name: required", i)
		}
		// A server tool (type bash_..., web_search_...) has no schema; it
		// is kept by name.
		out.tools = append(out.tools, llm.ToolSpec{Name: t.Name, Description: t.Description,
			Parameters: append(json.RawMessage(nil), t.InputSchema...)})
	}
	return out, nil
}

// antSystem reads system: a string or a list of text blocks (joined with
// a blank line).
func antSystem(raw json.RawMessage) (string, error) {
	blocks, err := antBlocks(raw)
	if err != nil {
		return "", err
	}
	var texts []string
	for i, b := range blocks {
		if b.Type != "text" || b.Text == nil {
			return "", fmt.Errorf("block %d: want a text block, got type %q", i, b.Type)
		}
		texts = append(texts, *b.Text)
	}
	return strings.Join(texts, "\n\n"), nil
}

// antBlocks reads content: a string (one text block), null, or a list of
// blocks.
func antBlocks(raw json.RawMessage) ([]antBlock, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		return []antBlock{{Type: "text", Text: &s}}, nil
	}
	var blocks []antBlock
	if err := json.Unmarshal(raw, &blocks); err != nil {
		return nil, fmt.Errorf("want a string or a list of content blocks: %w", err)
	}
	return blocks, nil
}

// ---- response ----

type antUsage struct {
	InputTokens              int `json:"input_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
	OutputTokens             int `json:"output_tokens"`
}

type antMessageOut struct {
	ID           string        `json:"id"`
	Type         string        `json:"type"`
	Role         string        `json:"role"`
	Model        string        `json:"model"`
	Content      []antBlockOut `json:"content"`
	StopReason   *string       `json:"stop_reason"`
	StopSequence *string       `json:"stop_sequence"`
	Usage        antUsage      `json:"usage"`
}

type antBlockOut struct {
	Type      string          `json:"type"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature *string         `json:"signature,omitempty"`
	Text      *string         `json:"text,omitempty"`
	ID        string          `json:"id,omitempty"`
	Name      string          `json:"name,omitempty"`
	Input     json.RawMessage `json:"input,omitempty"`
}

type antDelta struct {
	Type         string  `json:"type,omitempty"`
	Thinking     *string `json:"thinking,omitempty"`
	Signature    *string `json:"signature,omitempty"`
	Text         *string `json:"text,omitempty"`
	PartialJSON  *string `json:"partial_json,omitempty"`
	StopReason   *string `json:"stop_reason,omitempty"`
	StopSequence *string `json:"stop_sequence,omitempty"`
}

type antEvent struct {
	Type         string         `json:"type"`
	Message      *antMessageOut `json:"message,omitempty"`
	Index        *int           `json:"index,omitempty"`
	ContentBlock *antBlockOut   `json:"content_block,omitempty"`
	Delta        *antDelta      `json:"delta,omitempty"`
	Usage        *antUsage      `json:"usage,omitempty"`
}

func antStopReason(kind string) string {
	switch kind {
	case llm.FinishToolCalls:
		return "tool_use"
	case llm.FinishLength:
		return "max_tokens"
	case llm.FinishContentFilter:
		return "refusal"
	default:
		return "end_turn"
	}
}

// antUsageOf maps canonical usage: Anthropic's input_tokens already
// excludes the cache reads, like inputTokens; it reports no reasoning
// tokens of its own.
func antUsageOf(u llm.Usage) antUsage {
	return antUsage{InputTokens: u.InputTokens, CacheReadInputTokens: u.CacheReadTokens, OutputTokens: u.OutputTokens}
}

// antBlockOf is block b of the turn, complete or (for content_block_start)
// empty.
func antBlockOf(pl *plan, b blockRef, done bool) antBlockOut {
	empty := ""
	switch b.kind {
	case deltaReasoning:
		t, sig := pl.reasoning, anthropicSignature
		if !done {
			t, sig = "", ""
		}
		return antBlockOut{Type: "thinking", Thinking: &t, Signature: &sig}
	case deltaText:
		t := pl.text
		if !done {
			t = empty
		}
		return antBlockOut{Type: "text", Text: &t}
	default:
		c := pl.calls[b.call]
		input := json.RawMessage("{}")
		if done {
			input = json.RawMessage(c.args)
		}
		return antBlockOut{Type: "tool_use", ID: c.id, Name: c.name, Input: input}
	}
}

func antMessageOf(pl *plan, n int, model string, done bool) *antMessageOut {
	m := &antMessageOut{ID: "msg_mock_" + strconv.Itoa(n), Type: "message", Role: "assistant", Model: model,
		Content: []antBlockOut{}, Usage: antUsageOf(pl.usage)}
	if !done {
		m.Usage.OutputTokens = 0
		return m
	}
	if pl.reasoningIdx >= 0 {
		m.Content = append(m.Content, antBlockOf(pl, blockRef{kind: deltaReasoning}, true))
	}
	if pl.textIdx >= 0 {
		m.Content = append(m.Content, antBlockOf(pl, blockRef{kind: deltaText}, true))
	}
	for i := range pl.calls {
		m.Content = append(m.Content, antBlockOf(pl, blockRef{kind: deltaCallStart, call: i}, true))
	}
	stop := antStopReason(pl.finish)
	m.StopReason = &stop
	return m
}

// ---- handler ----

func serveAnthropic(s *Server, w http.ResponseWriter, r *http.Request) {
	stream := false
	s.serveTurn(w, r, turnCodec{
		wire: anthropicMessages{},
		decode: func(body []byte, _ *http.Request) (request, error) {
			req, err := decodeAnthropic(body)
			stream = req.stream
			return req, err
		},
		fits: func(pl *plan) error {
			if stream {
				return nil // input_json_delta carries any text
			}
			return objectArgs(pl)
		},
		answer: func(w http.ResponseWriter, r *http.Request, pl *plan, req request, n int) {
			model := req.model
			if model == "" {
				model = ModelID
			}
			if !req.stream {
				completeTurn(w, r, pl, antMessageOf(pl, n, model, true))
				return
			}
			sink := &antSink{sse: newSSE(w, "\n\n"), pl: pl, k: -1}
			if !sink.send(antEvent{Type: "message_start", Message: antMessageOf(pl, n, model, false)}) ||
				!sink.send(antEvent{Type: "ping"}) {
				return
			}
			streamTurn(r, pl, sink, func() bool {
				stop := antStopReason(pl.finish)
				u := antUsageOf(pl.usage)
				return sink.send(antEvent{Type: "message_delta", Delta: &antDelta{StopReason: &stop}, Usage: &u}) &&
					sink.send(antEvent{Type: "message_stop"})
			})
		},
	})
}

// antSink writes a turn as Messages streaming events.
type antSink struct {
	sse *sseWriter
	pl  *plan
	k   int // index of the open content block
}

func (s *antSink) send(e antEvent) bool { return s.sse.send(e.Type, e) }

func (s *antSink) open(b blockRef) bool {
	s.k++
	cb := antBlockOf(s.pl, b, false)
	return s.send(antEvent{Type: "content_block_start", Index: intp(s.k), ContentBlock: &cb})
}

func (s *antSink) delta(b blockRef, text string) bool {
	d := &antDelta{}
	switch b.kind {
	case deltaReasoning:
		d.Type, d.Thinking = "thinking_delta", &text
	case deltaText:
		d.Type, d.Text = "text_delta", &text
	default:
		d.Type, d.PartialJSON = "input_json_delta", &text
	}
	return s.send(antEvent{Type: "content_block_delta", Index: intp(s.k), Delta: d})
}

func (s *antSink) close(b blockRef) bool {
	if b.kind == deltaReasoning {
		sig := anthropicSignature
		if !s.send(antEvent{Type: "content_block_delta", Index: intp(s.k), Delta: &antDelta{Type: "signature_delta", Signature: &sig}}) {
			return false
		}
	}
	return s.send(antEvent{Type: "content_block_stop", Index: intp(s.k)})
}
