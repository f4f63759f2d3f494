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

// gemini is the Gemini API wire (generativelanguage, v1beta):
// POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent (?alt=sse for server-sent events, else a JSON
// array streamed element by element), WireGemini; contents with text,
// thought, functionCall and functionResponse parts, systemInstruction,
// functionDeclarations (parameters or parametersJsonSchema). Reasoning
// goes out as thought:true text parts, tool calls as functionCall parts
// (with the script's call id); the last response carries finishReason and
// usageMetadata; errors are {error:{code, message, status}}.
//
// The Gemini API does not stream function-call arguments (partialArgs is
// Vertex-only, and the Go SDK refuses it in Gemini API mode): each tool
// call arrives whole, in its own stream event.
type gemini struct{}

// WireGemini is the JournalEntry.Wire of its requests.
const WireGemini = "gemini"

const geminiPrefix = "/v1beta/models/"

func (gemini) info() WireInfo {
	return WireInfo{Name: WireGemini, Flag: "gemini", API: "Gemini", Client: "Gemini",
		Serves:   "POST /v1beta/models/{model}:generateContent and :streamGenerateContent",
		Endpoint: "POST {{.URL}}/v1beta/models/MODEL:streamGenerateContent"}
}

func (gemini) owns(path string) bool {
	return strings.Contains(path, "/models/") && (strings.HasSuffix(path, ":generateContent") || strings.HasSuffix(path, ":streamGenerateContent"))
}

func (gemini) looksLike(r *http.Request) bool {
	return strings.HasPrefix(r.URL.Path, "/v1beta/") || r.Header.Get("x-goog-api-key") != ""
}

// decode takes the model from the path.
func (gemini) decode(path string, body []byte) (request, error) {
	req, err := decodeGemini(body)
	if err == nil {
		m := path[strings.LastIndex(path, "/models/")+len("/models/"):]
		req.model, _, _ = strings.Cut(m, ":")
	}
	return req, err
}

func (gemini) routes() []route {
	return []route{{http.MethodPost, geminiPrefix, "{model}:generateContent|streamGenerateContent", serveGemini}}
}

// geminiStatus is the google.rpc status name of an HTTP status.
func geminiStatus(code int) string {
	switch code {
	case http.StatusBadRequest:
		return "INVALID_ARGUMENT"
	case http.StatusNotFound:
		return "NOT_FOUND"
	case http.StatusMethodNotAllowed, http.StatusNotImplemented:
		return "UNIMPLEMENTED"
	case http.StatusGone, http.StatusUnprocessableEntity:
		return "FAILED_PRECONDITION"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	}
	if code >= 500 {
		return "INTERNAL"
	}
	return "UNKNOWN"
}

func (gemini) writeError(w http.ResponseWriter, e *RequestError) {
	noRetry(w, e)
	writeJSON(w, e.Status, map[string]any{
		"error": map[string]any{
			"code":    e.Status,
			"message": e.Message,
			"status":  geminiStatus(e.Status),
			"details": []map[string]any{{
				"@type":  "type.googleapis.com/google.rpc.ErrorInfo",
				"reason": e.Code,
				"domain": "todoharness-mock",
			}},
		},
	})
}

// ---- request ----

type gemRequest struct {
	Contents          []gemContent `json:"contents"`
	SystemInstruction *gemContent  `json:"systemInstruction"`
	Tools             []struct {
		FunctionDeclarations []gemFuncDecl `json:"functionDeclarations"`
	} `json:"tools"`
}

type gemContent struct {
	Role  string                       `json:"role"`
	Parts []map[string]json.RawMessage `json:"parts"`
}

type gemFuncDecl struct {
	Name                 string          `json:"name"`
	Description          string          `json:"description"`
	Parameters           json.RawMessage `json:"parameters"`
	ParametersJSONSchema json.RawMessage `json:"parametersJsonSchema"`
}

type gemFunctionCall struct {
	ID   string          `json:"id,omitempty"`
	Name string          `json:"name"`
	Args json.RawMessage `json:"args"`
}

type gemFunctionResponse struct {
	ID       string          `json:"id"`
	Name     string          `json:"name"`
	Response json.RawMessage `json:"response"`
}

// gemPart is one part of a request, read from its fields.
type gemPart struct {
	text     *string
	thought  bool
	call     *gemFunctionCall
	response *gemFunctionResponse
}

func gemReadPart(p map[string]json.RawMessage) (gemPart, error) {
	var out gemPart
	for k, v := range p {
		var err error
		switch k {
		case "text":
			var s string
			err = json.Unmarshal(v, &s)
			out.text = &s
		case "thought":
			err = json.Unmarshal(v, &out.thought)
		case "thoughtSignature":
		case "functionCall":
			out.call = &gemFunctionCall{}
			err = json.Unmarshal(v, out.call)
		case "functionResponse":
			out.response = &gemFunctionResponse{}
			err = json.Unmarshal(v, out.response)
		default:
			return out, fmt.Errorf("unsupported part field %q (the mock reads text, thought, functionCall and functionResponse parts)", k)
		}
		if err != nil {
			return out, fmt.Errorf("%s: %w", k, err)
		}
	}
	if out.text == nil && out.call == nil && out.response == nil {
		return out, errors.New("empty part (want text, functionCall or functionResponse)")
	}
	return out, nil
}

// gemDecoder adds a generateContent body's contents to out; calls are
// the function calls the model turns made, done once answered.
type gemDecoder struct {
	out   *request
	calls []*gemPending
}

// gemPending is a function call of a model turn.
type gemPending struct {
	id, name string
	done     bool
}

// model adds a model turn: one assistant message.
func (d *gemDecoder) model(at string, c gemContent) error {
	msg := llm.Message{Role: llm.RoleAssistant}
	for j, raw := range c.Parts {
		p, err := gemReadPart(raw)
		if err != nil {
			return fmt.Errorf("%s.parts[%d]: %w", at, j, err)
		}
		switch {
		case p.call != nil:
			if p.call.Name == "" {
				return fmt.Errorf("%s.parts[%d].functionCall.name: required", at, j)
			}
			args := "{}"
			if len(bytes.TrimSpace(p.call.Args)) > 0 && string(bytes.TrimSpace(p.call.Args)) != "null" {
				args = compactJSON(p.call.Args)
			}
			msg.Content = append(msg.Content, llm.Part{Type: llm.PartToolCall, ID: p.call.ID, Name: p.call.Name, Arguments: args})
			d.calls = append(d.calls, &gemPending{id: p.call.ID, name: p.call.Name})
		case p.thought:
			if *p.text != "" {
				msg.Content = append(msg.Content, llm.Part{Type: llm.PartReasoning, Text: *p.text})
			}
		case p.text != nil:
			msg.Content = append(msg.Content, textParts(*p.text)...)
		default:
			return fmt.Errorf("%s.parts[%d]: a functionResponse in a model turn", at, j)
		}
	}
	d.out.messages = append(d.out.messages, msg)
	return nil
}

// user adds a user (or function) turn: a tool message per function
// response, the text between them as user messages.
func (d *gemDecoder) user(at string, c gemContent) error {
	var user *llm.Message
	for j, raw := range c.Parts {
		p, err := gemReadPart(raw)
		if err != nil {
			return fmt.Errorf("%s.parts[%d]: %w", at, j, err)
		}
		switch {
		case p.response != nil:
			fr := p.response
			id := fr.ID
			for _, pc := range d.calls {
				if !pc.done && ((id != "" && pc.id == id) || (id == "" && pc.name == fr.Name)) {
					pc.done = true
					id = pc.id
					break
				}
			}
			text, isErr := gemResponseText(fr.Response)
			d.out.messages = append(d.out.messages, llm.Message{Role: llm.RoleTool, ToolCallID: id,
				Content: textParts(text), IsError: isErr})
			user = nil
		case p.text != nil && !p.thought:
			if user == nil {
				d.out.messages = append(d.out.messages, llm.Message{Role: llm.RoleUser})
				user = &d.out.messages[len(d.out.messages)-1]
			}
			user.Content = append(user.Content, llm.Part{Type: llm.PartText, Text: *p.text})
		case p.call != nil:
			return fmt.Errorf("%s.parts[%d]: a functionCall in a %s turn", at, j, c.Role)
		}
	}
	return nil
}

// decodeGemini turns a generateContent body into the canonical request.
// A functionResponse becomes a tool message: its id, or else the id of the
// first unanswered functionCall of that name, is the ToolCallID; it is an
// error when its response has an "error" field, and its text is the
// response's "error" or "output" field (the whole response as JSON
// otherwise).
func decodeGemini(body []byte) (request, error) {
	var in gemRequest
	if err := decodeStrict(body, &in); err != nil {
		return request{}, err
	}
	out := request{errFrom: ToolErrorsFlag}
	if in.SystemInstruction != nil {
		var texts []string
		for i, raw := range in.SystemInstruction.Parts {
			p, err := gemReadPart(raw)
			if err != nil || p.text == nil {
				if err == nil {
					err = errors.New("want a text part")
				}
				return out, fmt.Errorf("systemInstruction.parts[%d]: %w", i, err)
			}
			texts = append(texts, *p.text)
		}
		out.system = strings.Join(texts, "")
	}
	if in.Contents == nil {
		return out, errors.New("contents: required")
	}
	d := gemDecoder{out: &out}
	for i, c := range in.Contents {
		at := fmt.Sprintf("contents[%d]", i)
		var err error
		switch c.Role {
		case "model":
			err = d.model(at, c)
		case "user", "function", "":
			err = d.user(at, c)
		default:
			err = fmt.Errorf("%s.role: unknown role %q (want user or model)", at, c.Role)
		}
		if err != nil {
			return out, err
		}
	}
	for i, t := range in.Tools {
		for j, d := range t.FunctionDeclarations {
			if d.Name == "" {
				return out, fmt.Errorf("tools[%d].functionDeclarations[%d].name: required", i, j)
			}
			params := d.Parameters
			if len(params) == 0 {
				params = d.ParametersJSONSchema
			}
			out.tools = append(out.tools, llm.ToolSpec{Name: d.Name, Description: d.Description,
				Parameters: append(json.RawMessage(nil), params...)})
		}
	}
	return out, nil
}

// gemResponseText reads a functionResponse.response: its "error" field
// (an error result), else its "output" field, else the whole object.
func gemResponseText(raw json.RawMessage) (string, bool) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return compactJSON(raw), false
	}
	str := func(v json.RawMessage) string {
		var s string
		if err := json.Unmarshal(v, &s); err == nil {
			return s
		}
		return compactJSON(v)
	}
	if v, ok := fields["error"]; ok {
		return str(v), true
	}
	if v, ok := fields["output"]; ok {
		return str(v), false
	}
	return compactJSON(raw), false
}

// ---- response ----

type gemPartOut struct {
	Text         *string          `json:"text,omitempty"`
	Thought      bool             `json:"thought,omitempty"`
	FunctionCall *gemFunctionCall `json:"functionCall,omitempty"`
}

type gemCandidate struct {
	Content struct {
		Role  string       `json:"role"`
		Parts []gemPartOut `json:"parts"`
	} `json:"content"`
	FinishReason string `json:"finishReason,omitempty"`
	Index        int    `json:"index"`
}

type gemUsage struct {
	PromptTokenCount        int `json:"promptTokenCount"`
	CandidatesTokenCount    int `json:"candidatesTokenCount"`
	CachedContentTokenCount int `json:"cachedContentTokenCount,omitempty"`
	ThoughtsTokenCount      int `json:"thoughtsTokenCount,omitempty"`
	TotalTokenCount         int `json:"totalTokenCount"`
}

type gemResponse struct {
	Candidates    []gemCandidate `json:"candidates"`
	UsageMetadata *gemUsage      `json:"usageMetadata,omitempty"`
	ModelVersion  string         `json:"modelVersion"`
	ResponseID    string         `json:"responseId"`
}

// gemUsageOf maps canonical usage: promptTokenCount counts the cached
// tokens too; candidatesTokenCount excludes the thoughts, which
// thoughtsTokenCount counts (outputTokens counts both).
func gemUsageOf(u llm.Usage) *gemUsage {
	out := &gemUsage{
		PromptTokenCount: u.InputTokens + u.CacheReadTokens, CachedContentTokenCount: u.CacheReadTokens,
		CandidatesTokenCount: max(u.OutputTokens-u.ReasoningTokens, 0), ThoughtsTokenCount: u.ReasoningTokens,
	}
	out.TotalTokenCount = out.PromptTokenCount + out.CandidatesTokenCount + out.ThoughtsTokenCount
	return out
}

func gemFinish(kind string) string {
	switch kind {
	case llm.FinishLength:
		return "MAX_TOKENS"
	case llm.FinishContentFilter:
		return "SAFETY"
	default: // stop and tool calls
		return "STOP"
	}
}

func gemCallPart(c planCall) gemPartOut {
	return gemPartOut{FunctionCall: &gemFunctionCall{ID: c.id, Name: c.name, Args: json.RawMessage(c.args)}}
}

// gemOf is one response holding parts; final adds finishReason and usage.
func gemOf(pl *plan, n int, model string, parts []gemPartOut, final bool) gemResponse {
	var c gemCandidate
	c.Content.Role = "model"
	c.Content.Parts = parts
	r := gemResponse{Candidates: []gemCandidate{c}, ModelVersion: model, ResponseID: "mock-" + strconv.Itoa(n)}
	if final {
		r.Candidates[0].FinishReason = gemFinish(pl.finish)
		r.UsageMetadata = gemUsageOf(pl.usage)
	}
	return r
}

// ---- handler ----

func serveGemini(s *Server, w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, geminiPrefix)
	model, action, ok := strings.Cut(rest, ":")
	if !ok || model == "" || strings.Contains(model, "/") || (action != "generateContent" && action != "streamGenerateContent") {
		body, _ := readBody(r)
		e := &RequestError{Code: CodeNotFound, Status: http.StatusNotFound, Turn: -1,
			Message: fmt.Sprintf("%s: unknown endpoint %s %s (served: POST %s{model}:generateContent, POST %s{model}:streamGenerateContent)",
				s.p.label(), r.Method, r.URL.Path, geminiPrefix, geminiPrefix)}
		s.p.refuse(request{path: r.URL.Path, wire: WireGemini, raw: rawJSON(body)}, e)
		gemini{}.writeError(w, e)
		return
	}
	stream := action == "streamGenerateContent"
	s.serveTurn(w, r, turnCodec{
		wire: gemini{},
		decode: func(body []byte, _ *http.Request) (request, error) {
			req, err := decodeGemini(body)
			req.stream, req.model = stream, model
			return req, err
		},
		fits: objectArgs,
		answer: func(w http.ResponseWriter, r *http.Request, pl *plan, req request, n int) {
			if !stream {
				var parts []gemPartOut
				if pl.reasoningIdx >= 0 {
					t := pl.reasoning
					parts = append(parts, gemPartOut{Text: &t, Thought: true})
				}
				if pl.textIdx >= 0 {
					t := pl.text
					parts = append(parts, gemPartOut{Text: &t})
				}
				for _, c := range pl.calls {
					parts = append(parts, gemCallPart(c))
				}
				if parts == nil {
					empty := ""
					parts = []gemPartOut{{Text: &empty}}
				}
				completeTurn(w, r, pl, gemOf(pl, n, model, parts, true))
				return
			}
			sse := r.URL.Query().Get("alt") == "sse"
			sink := &gemSink{pl: pl, n: n, model: model, w: w, sse: sse}
			if sse {
				sink.events = newSSE(w, "\r\n\r\n")
			} else {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusOK)
				sink.rc = http.NewResponseController(w)
			}
			streamTurn(r, pl, sink, sink.finish)
		},
	})
}

// gemSink writes a turn as a stream of GenerateContentResponse objects,
// one part each: reasoning and text words, then each tool call whole. It
// holds the last one back so that the final response carries
// finishReason and usageMetadata, as Gemini's does.
type gemSink struct {
	pl    *plan
	n     int
	model string
	w     http.ResponseWriter
	sse   bool
	// events writes SSE (alt=sse); else rc flushes a JSON array.
	events *sseWriter
	rc     *http.ResponseController
	held   *gemPartOut
	sent   int
}

func (s *gemSink) write(resp gemResponse) bool {
	if s.sse {
		return s.events.send("", resp)
	}
	b, err := json.Marshal(resp)
	if err != nil {
		return false
	}
	sep := ",\r\n"
	if s.sent == 0 {
		sep = "["
	}
	s.sent++
	if _, err := s.w.Write(append([]byte(sep), b...)); err != nil {
		return false
	}
	return s.rc.Flush() == nil
}

// push sends the held part, if any, and holds p.
func (s *gemSink) push(p gemPartOut) bool {
	if s.held != nil && !s.write(gemOf(s.pl, s.n, s.model, []gemPartOut{*s.held}, false)) {
		return false
	}
	s.held = &p
	return true
}

func (s *gemSink) open(blockRef) bool { return true }

func (s *gemSink) delta(b blockRef, text string) bool {
	switch b.kind {
	case deltaReasoning:
		return s.push(gemPartOut{Text: &text, Thought: true})
	case deltaText:
		return s.push(gemPartOut{Text: &text})
	}
	return true // argument pieces: the call goes out whole at close
}

func (s *gemSink) close(b blockRef) bool {
	if b.kind == deltaCallStart {
		return s.push(gemCallPart(s.pl.calls[b.call]))
	}
	return true
}

// flushHeld sends the held part without finishing (before a fault).
func (s *gemSink) flushHeld() bool {
	if s.held == nil {
		return true
	}
	ok := s.write(gemOf(s.pl, s.n, s.model, []gemPartOut{*s.held}, false))
	s.held = nil
	return ok
}

// finish sends the held part with finishReason and usage.
func (s *gemSink) finish() bool {
	p := gemPartOut{Text: new(string)}
	if s.held != nil {
		p = *s.held
	}
	if !s.write(gemOf(s.pl, s.n, s.model, []gemPartOut{p}, true)) {
		return false
	}
	if !s.sse {
		if _, err := s.w.Write([]byte("]")); err != nil {
			return false
		}
		return s.rc.Flush() == nil
	}
	return true
}
