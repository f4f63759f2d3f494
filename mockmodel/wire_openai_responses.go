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

// openAIResponses is the OpenAI Responses wire, WireOpenAIResponses:
// POST /v1/responses and /responses; input items message, reasoning,
// function_call, function_call_output (and custom_tool_call[_output]),
// instructions, function tools. SSE response.created,
// response.in_progress, then per output item response.output_item.added,
// its deltas (reasoning_summary_text, output_text,
// function_call_arguments) and done events, response.output_item.done,
// and response.completed (or response.incomplete for the length and
// content-filter finishes) with usage; stream false answers the response
// object. previous_response_id is refused: the mock keeps no responses.
// Reasoning goes out as a reasoning item with a summary, text as a
// message item, tool calls as function_call items; errors are OpenAI
// error bodies.
type openAIResponses struct{}

// WireOpenAIResponses is the JournalEntry.Wire of its requests.
const WireOpenAIResponses = "openai-responses"

func (openAIResponses) info() WireInfo {
	return WireInfo{Name: WireOpenAIResponses, Flag: "openai-responses", API: "OpenAI Responses", Client: "OpenAI",
		Serves:   "POST /v1/responses (and /responses)",
		Endpoint: "POST {{.BaseURL}}/responses"}
}

func (openAIResponses) owns(path string) bool { return strings.HasSuffix(path, "/responses") }

func (openAIResponses) looksLike(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/v1/responses") || strings.HasPrefix(r.URL.Path, "/responses")
}

func (openAIResponses) decode(_ string, body []byte) (request, error) {
	return decodeOpenAIResponses(body)
}

func (openAIResponses) writeError(w http.ResponseWriter, e *RequestError) { writeOpenAIError(w, e) }

func (openAIResponses) routes() []route {
	return []route{
		{http.MethodPost, "/v1/responses", "", serveOpenAIResponses},
		{http.MethodPost, "/responses", "", serveOpenAIResponses},
	}
}

// ---- request ----

type respRequest struct {
	Model              string          `json:"model"`
	Instructions       *string         `json:"instructions"`
	Input              json.RawMessage `json:"input"`
	Tools              []respTool      `json:"tools"`
	Stream             bool            `json:"stream"`
	PreviousResponseID string          `json:"previous_response_id"`
}

type respTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// respItem is any input item; which fields count depends on Type.
type respItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	CallID    string          `json:"call_id"`
	Name      string          `json:"name"`
	Arguments *string         `json:"arguments"`
	Input     *string         `json:"input"` // custom_tool_call
	Output    json.RawMessage `json:"output"`
	Summary   []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

// decodeOpenAIResponses turns a Responses body into the canonical request.
// Assistant items of one turn (reasoning, message, function_call) become
// one assistant message, as chat completions has them.
func decodeOpenAIResponses(body []byte) (request, error) {
	var in respRequest
	if err := decodeStrict(body, &in); err != nil {
		return request{}, err
	}
	d := respDecoder{out: request{stream: in.Stream, model: in.Model, errFrom: ToolErrorsPrefix}, leading: true}
	if in.PreviousResponseID != "" {
		return d.out, errors.New("previous_response_id: not supported (the mock keeps no responses: send the whole conversation in input)")
	}
	if in.Instructions != nil && *in.Instructions != "" {
		d.system = append(d.system, *in.Instructions)
	}
	items, err := respInput(in.Input)
	if err != nil {
		return d.out, err
	}
	for i, it := range items {
		if err := d.item(fmt.Sprintf("input[%d]", i), it); err != nil {
			return d.out, err
		}
	}
	d.out.system = strings.Join(d.system, "\n\n")
	for i, t := range in.Tools {
		switch t.Type {
		case "function", "":
			if t.Name == "" {
				return d.out, fmt.Errorf("tools[%d].name: required", i)
			}
			d.out.tools = append(d.out.tools, llm.ToolSpec{Name: t.Name, Description: t.Description,
				Parameters: append(json.RawMessage(nil), t.Parameters...)})
		default:
			// Built-in tools (web_search, custom grammars, ...) are kept
			// by name when they have one; the raw body has the rest.
			if t.Name != "" {
				d.out.tools = append(d.out.tools, llm.ToolSpec{Name: t.Name, Description: t.Description})
			}
		}
	}
	return d.out, nil
}

// respDecoder gathers the canonical request from a Responses body's
// input items; leading holds while only system messages came (they make
// the system prompt).
type respDecoder struct {
	out     request
	system  []string
	leading bool
}

// assistant returns the trailing assistant message, starting one if the
// last message is not an assistant's (or, for reasoning, if the trailing
// one already says more than reasoning: a new turn).
func (d *respDecoder) assistant(reasoning bool) *llm.Message {
	n := len(d.out.messages)
	if n > 0 && d.out.messages[n-1].Role == llm.RoleAssistant {
		last := &d.out.messages[n-1]
		if !reasoning || onlyReasoning(*last) {
			return last
		}
	}
	d.out.messages = append(d.out.messages, llm.Message{Role: llm.RoleAssistant})
	return &d.out.messages[len(d.out.messages)-1]
}

// item adds input item it (at is where it is: "input[3]").
func (d *respDecoder) item(at string, it respItem) error {
	typ := it.Type
	if typ == "" && it.Role != "" {
		typ = "message"
	}
	switch typ {
	case "message":
		return d.message(at, it)
	case "reasoning":
		var texts []string
		for _, s := range it.Summary {
			texts = append(texts, s.Text)
		}
		if len(texts) == 0 && len(it.Content) > 0 {
			t, err := contentText(it.Content, partNoun, respTextTypes()...)
			if err != nil {
				return fmt.Errorf("%s.content: %w", at, err)
			}
			texts = append(texts, t)
		}
		m := d.assistant(true)
		if t := strings.Join(texts, "\n\n"); t != "" {
			m.Content = append(m.Content, llm.Part{Type: llm.PartReasoning, Text: t})
		}
	case "function_call", "custom_tool_call":
		if it.Name == "" {
			return fmt.Errorf("%s.name: required", at)
		}
		if it.CallID == "" {
			return fmt.Errorf("%s.call_id: required", at)
		}
		args := ""
		if it.Arguments != nil {
			args = *it.Arguments
		} else if it.Input != nil {
			args = *it.Input
		}
		m := d.assistant(false)
		m.Content = append(m.Content, llm.Part{Type: llm.PartToolCall, ID: it.CallID, Name: it.Name, Arguments: args})
	case "function_call_output", "custom_tool_call_output":
		if it.CallID == "" {
			return fmt.Errorf("%s.call_id: required", at)
		}
		text, err := contentText(it.Output, partNoun, respTextTypes()...)
		if err != nil {
			return fmt.Errorf("%s.output: %w", at, err)
		}
		d.out.messages = append(d.out.messages, llm.Message{
			Role: llm.RoleTool, Content: textParts(text), ToolCallID: it.CallID,
			IsError: strings.HasPrefix(text, errorResultPrefix),
		})
	default:
		return fmt.Errorf("%s.type: unsupported item type %q (the mock reads message, reasoning, function_call and function_call_output items)", at, it.Type)
	}
	d.leading = false
	return nil
}

// message adds a message item.
func (d *respDecoder) message(at string, it respItem) error {
	text, err := contentText(it.Content, partNoun, respTextTypes()...)
	if err != nil {
		return fmt.Errorf("%s.content: %w", at, err)
	}
	switch it.Role {
	case "system", "developer":
		if d.leading {
			d.system = append(d.system, text)
			return nil
		}
		d.out.messages = append(d.out.messages, llm.Message{Role: llm.RoleSystem, Content: textParts(text)})
	case "user":
		d.out.messages = append(d.out.messages, llm.Message{Role: llm.RoleUser, Content: textParts(text)})
	case "assistant":
		m := d.assistant(false)
		m.Content = append(m.Content, textParts(text)...)
	default:
		return fmt.Errorf("%s.role: unknown role %q", at, it.Role)
	}
	d.leading = false
	return nil
}

// respInput reads input: a string (one user message) or a list of items.
func respInput(raw json.RawMessage) ([]respItem, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil, errors.New("input: required")
	}
	if raw[0] == '"' {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("input: %w", err)
		}
		c, _ := json.Marshal(s)
		return []respItem{{Type: "message", Role: "user", Content: c}}, nil
	}
	var items []respItem
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, fmt.Errorf("input: want a string or a list of items: %w", err)
	}
	return items, nil
}

// respTextTypes are the part types whose text the Responses wire reads
// (content, output and reasoning summaries).
func respTextTypes() []string {
	return []string{"input_text", "output_text", "text", "summary_text", "reasoning_text"}
}

func onlyReasoning(m llm.Message) bool {
	for _, p := range m.Content {
		if p.Type != llm.PartReasoning {
			return false
		}
	}
	return true
}

// decodeStrict decodes one JSON value into v, refusing trailing data.
func decodeStrict(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("malformed JSON body: %w", err)
	}
	if dec.More() {
		return errors.New("malformed JSON body: trailing data after the JSON object")
	}
	return nil
}

// ---- response ----

type respObject struct {
	ID                string          `json:"id"`
	Object            string          `json:"object"`
	CreatedAt         int64           `json:"created_at"`
	Status            string          `json:"status"`
	Error             *struct{}       `json:"error"`
	IncompleteDetails *respIncomplete `json:"incomplete_details"`
	Model             string          `json:"model"`
	Output            []respOutItem   `json:"output"`
	ParallelToolCalls bool            `json:"parallel_tool_calls"`
	ToolChoice        string          `json:"tool_choice"`
	Tools             []struct{}      `json:"tools"`
	Usage             *respUsage      `json:"usage"`
}

type respIncomplete struct {
	Reason string `json:"reason"`
}

type respUsage struct {
	InputTokens        int `json:"input_tokens"`
	InputTokensDetails struct {
		CachedTokens int `json:"cached_tokens"`
	} `json:"input_tokens_details"`
	OutputTokens        int `json:"output_tokens"`
	OutputTokensDetails struct {
		ReasoningTokens int `json:"reasoning_tokens"`
	} `json:"output_tokens_details"`
	TotalTokens int `json:"total_tokens"`
}

// respOutItem is an output item: reasoning, message or function_call.
// Content and Summary are any so that an empty list is still written.
type respOutItem struct {
	ID        string  `json:"id"`
	Type      string  `json:"type"`
	Status    string  `json:"status,omitempty"`
	Role      string  `json:"role,omitempty"`
	Content   any     `json:"content,omitempty"`
	Summary   any     `json:"summary,omitempty"`
	CallID    string  `json:"call_id,omitempty"`
	Name      string  `json:"name,omitempty"`
	Arguments *string `json:"arguments,omitempty"`
}

type respPart struct {
	Type        string `json:"type"`
	Text        string `json:"text"`
	Annotations any    `json:"annotations,omitempty"`
}

// respEvent is any streaming event; which fields are set depends on Type.
type respEvent struct {
	Type           string       `json:"type"`
	SequenceNumber int          `json:"sequence_number"`
	Response       *respObject  `json:"response,omitempty"`
	OutputIndex    *int         `json:"output_index,omitempty"`
	Item           *respOutItem `json:"item,omitempty"`
	ItemID         string       `json:"item_id,omitempty"`
	ContentIndex   *int         `json:"content_index,omitempty"`
	SummaryIndex   *int         `json:"summary_index,omitempty"`
	Part           *respPart    `json:"part,omitempty"`
	Delta          *string      `json:"delta,omitempty"`
	Text           *string      `json:"text,omitempty"`
	Arguments      *string      `json:"arguments,omitempty"`
	Logprobs       *[]struct{}  `json:"logprobs,omitempty"`
}

func respUsageOf(u llm.Usage) *respUsage {
	var out respUsage
	out.InputTokens = u.InputTokens + u.CacheReadTokens
	out.InputTokensDetails.CachedTokens = u.CacheReadTokens
	out.OutputTokens = u.OutputTokens
	out.OutputTokensDetails.ReasoningTokens = u.ReasoningTokens
	out.TotalTokens = out.InputTokens + out.OutputTokens
	return &out
}

// respItems returns the complete output items of the turn, in order, with
// their ids (item k of request n: rs_mock_n_k, msg_mock_n_k, fc_mock_n_k).
func respItems(pl *plan, n int) []respOutItem {
	var out []respOutItem
	if pl.reasoningIdx >= 0 {
		out = append(out, respOutItemOf(pl, n, len(out), blockRef{kind: deltaReasoning}, true))
	}
	if pl.textIdx >= 0 {
		out = append(out, respOutItemOf(pl, n, len(out), blockRef{kind: deltaText}, true))
	}
	for i := range pl.calls {
		out = append(out, respOutItemOf(pl, n, len(out), blockRef{kind: deltaCallStart, call: i}, true))
	}
	return out
}

// respOutItemOf is block b as output item k of request n, done or just added.
func respOutItemOf(pl *plan, n, k int, b blockRef, done bool) respOutItem {
	id := func(prefix string) string { return prefix + "_mock_" + strconv.Itoa(n) + "_" + strconv.Itoa(k) }
	status := "in_progress"
	if done {
		status = "completed"
	}
	switch b.kind {
	case deltaReasoning:
		it := respOutItem{ID: id("rs"), Type: "reasoning", Summary: []respPart{}}
		if done {
			it.Summary = []respPart{{Type: "summary_text", Text: pl.reasoning}}
		}
		return it
	case deltaText:
		it := respOutItem{ID: id("msg"), Type: "message", Status: status, Role: "assistant", Content: []respPart{}}
		if done {
			it.Content = []respPart{{Type: "output_text", Text: pl.text, Annotations: []struct{}{}}}
		}
		return it
	default:
		c := pl.calls[b.call]
		args := ""
		if done {
			args = c.args
		}
		return respOutItem{ID: id("fc"), Type: "function_call", Status: status, CallID: c.id, Name: c.name, Arguments: &args}
	}
}

// respObjectOf is the response object of the turn; done says whether it
// is the final one (status, output, usage) or the one of response.created.
func respObjectOf(pl *plan, n int, model string, done bool) *respObject {
	o := &respObject{
		ID: "resp_mock_" + strconv.Itoa(n), Object: "response", Status: "in_progress",
		Model: model, Output: []respOutItem{}, ParallelToolCalls: true, ToolChoice: "auto", Tools: []struct{}{},
	}
	if !done {
		return o
	}
	o.Status = "completed"
	switch pl.finish {
	case llm.FinishLength:
		o.Status, o.IncompleteDetails = "incomplete", &respIncomplete{Reason: "max_output_tokens"}
	case llm.FinishContentFilter:
		o.Status, o.IncompleteDetails = "incomplete", &respIncomplete{Reason: "content_filter"}
	}
	o.Output = respItems(pl, n)
	o.Usage = respUsageOf(pl.usage)
	return o
}

// ---- handler ----

func serveOpenAIResponses(s *Server, w http.ResponseWriter, r *http.Request) {
	s.serveTurn(w, r, turnCodec{
		wire:   openAIResponses{},
		decode: func(body []byte, _ *http.Request) (request, error) { return decodeOpenAIResponses(body) },
		answer: func(w http.ResponseWriter, r *http.Request, pl *plan, req request, n int) {
			model := req.model
			if model == "" {
				model = ModelID
			}
			if !req.stream {
				completeTurn(w, r, pl, respObjectOf(pl, n, model, true))
				return
			}
			sink := &respSink{sse: newSSE(w, "\n\n"), pl: pl, n: n}
			if !sink.send(respEvent{Type: "response.created", Response: respObjectOf(pl, n, model, false)}) ||
				!sink.send(respEvent{Type: "response.in_progress", Response: respObjectOf(pl, n, model, false)}) {
				return
			}
			streamTurn(r, pl, sink, func() bool {
				final := respObjectOf(pl, n, model, true)
				typ := "response.completed"
				if final.Status == "incomplete" {
					typ = "response.incomplete"
				}
				return sink.send(respEvent{Type: typ, Response: final})
			})
		},
	})
}

// respSink writes a turn as Responses streaming events.
type respSink struct {
	sse *sseWriter
	pl  *plan
	n   int
	seq int
	k   int // output index of the open item
	id  string
}

func (s *respSink) send(e respEvent) bool {
	e.SequenceNumber = s.seq
	s.seq++
	return s.sse.send(e.Type, e)
}

func intp(i int) *int { return &i }

func (s *respSink) open(b blockRef) bool {
	if s.id != "" {
		s.k++
	}
	it := respOutItemOf(s.pl, s.n, s.k, b, false)
	s.id = it.ID
	if !s.send(respEvent{Type: "response.output_item.added", OutputIndex: intp(s.k), Item: &it}) {
		return false
	}
	switch b.kind {
	case deltaReasoning:
		return s.send(respEvent{Type: "response.reasoning_summary_part.added", ItemID: s.id, OutputIndex: intp(s.k),
			SummaryIndex: intp(0), Part: &respPart{Type: "summary_text"}})
	case deltaText:
		return s.send(respEvent{Type: "response.content_part.added", ItemID: s.id, OutputIndex: intp(s.k),
			ContentIndex: intp(0), Part: &respPart{Type: "output_text", Annotations: []struct{}{}}})
	}
	return true
}

func (s *respSink) delta(b blockRef, text string) bool {
	e := respEvent{ItemID: s.id, OutputIndex: intp(s.k), Delta: &text}
	switch b.kind {
	case deltaReasoning:
		e.Type, e.SummaryIndex = "response.reasoning_summary_text.delta", intp(0)
	case deltaText:
		e.Type, e.ContentIndex, e.Logprobs = "response.output_text.delta", intp(0), &[]struct{}{}
	default:
		e.Type = "response.function_call_arguments.delta"
	}
	return s.send(e)
}

func (s *respSink) close(b blockRef) bool {
	switch b.kind {
	case deltaReasoning:
		t := s.pl.reasoning
		if !s.send(respEvent{Type: "response.reasoning_summary_text.done", ItemID: s.id, OutputIndex: intp(s.k), SummaryIndex: intp(0), Text: &t}) ||
			!s.send(respEvent{Type: "response.reasoning_summary_part.done", ItemID: s.id, OutputIndex: intp(s.k), SummaryIndex: intp(0),
				Part: &respPart{Type: "summary_text", Text: t}}) {
			return false
		}
	case deltaText:
		t := s.pl.text
		if !s.send(respEvent{Type: "response.output_text.done", ItemID: s.id, OutputIndex: intp(s.k), ContentIndex: intp(0), Text: &t, Logprobs: &[]struct{}{}}) ||
			!s.send(respEvent{Type: "response.content_part.done", ItemID: s.id, OutputIndex: intp(s.k), ContentIndex: intp(0),
				Part: &respPart{Type: "output_text", Text: t, Annotations: []struct{}{}}}) {
			return false
		}
	default:
		args := s.pl.calls[b.call].args
		if !s.send(respEvent{Type: "response.function_call_arguments.done", ItemID: s.id, OutputIndex: intp(s.k), Arguments: &args}) {
			return false
		}
	}
	it := respOutItemOf(s.pl, s.n, s.k, b, true)
	return s.send(respEvent{Type: "response.output_item.done", OutputIndex: intp(s.k), Item: &it})
}
