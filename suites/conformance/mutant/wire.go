package mutant

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"

	"github.com/todoharness/todoharness/harness/llm"
)

// The mutant can talk to its model over OpenAI Responses, Anthropic
// Messages or Gemini instead of OpenAI chat completions (--wire), so the tier:conformance
// suite can run the whole catalogue through a non-OpenAI wire and show that
// the runner's checks read only the mock's canonical journal. These are
// small non-streaming clients over plain HTTP: enough for the catalogue,
// independent of the harness's own OpenAI client.

// wireModel is an llm.Model over one non-OpenAI wire.
type wireModel struct {
	wire string // "anthropic", "gemini" or "responses"
	url  string // the mock's URL without /v1
	key  string // sent in the wire's credential carriers when set
	http *http.Client
}

func newWireModel(wire, url, key string) (llm.Model, error) {
	switch wire {
	case "anthropic", "gemini", "responses":
		return &wireModel{wire: wire, url: strings.TrimSuffix(strings.TrimSuffix(url, "/"), "/v1"), key: key, http: &http.Client{}}, nil
	}
	return nil, fmt.Errorf("--wire %q: want openai, responses, anthropic or gemini", wire)
}

func (m *wireModel) Stream(ctx context.Context, req llm.Request, onChunk func(llm.Chunk) error) (llm.Response, error) {
	var (
		path string
		body any
	)
	switch m.wire {
	case "anthropic":
		path, body = "/v1/messages", anthropicBody(req)
	case "responses":
		path, body = "/v1/responses", responsesBody(req)
	default:
		path, body = "/v1beta/models/mock:generateContent", geminiBody(req)
	}
	b, err := json.Marshal(body)
	if err != nil {
		return llm.Response{}, err
	}
	hr, err := http.NewRequestWithContext(ctx, http.MethodPost, m.url+path, bytes.NewReader(b))
	if err != nil {
		return llm.Response{}, err
	}
	hr.Header.Set("content-type", "application/json")
	if m.key != "" {
		switch m.wire {
		case "anthropic":
			hr.Header.Set("x-api-key", m.key)
		case "responses":
			hr.Header.Set("Authorization", "Bearer "+m.key)
		default:
			hr.Header.Set("x-goog-api-key", m.key)
			q := hr.URL.Query()
			q.Set("key", m.key)
			hr.URL.RawQuery = q.Encode()
		}
		hr.AddCookie(&http.Cookie{Name: "session", Value: m.key})
	}
	resp, err := m.http.Do(hr)
	if err != nil {
		return llm.Response{}, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return llm.Response{}, err
	}
	if resp.StatusCode != http.StatusOK {
		return llm.Response{}, fmt.Errorf("%s %s: HTTP %d: %s", m.wire, path, resp.StatusCode, data)
	}
	var parts []llm.Part
	switch m.wire {
	case "anthropic":
		parts, err = anthropicParts(data)
	case "responses":
		parts, err = responsesParts(data)
	default:
		parts, err = geminiParts(data)
	}
	if err != nil {
		return llm.Response{}, fmt.Errorf("%s %s: %w", m.wire, path, err)
	}
	return emit(parts, onChunk)
}

// emit sends parts as the harness's chunk vocabulary and assembles them.
func emit(parts []llm.Part, onChunk func(llm.Chunk) error) (llm.Response, error) {
	a := llm.NewAssembler()
	send := func(c llm.Chunk) error {
		a.Add(c)
		return onChunk(c)
	}
	finish := llm.FinishStop
	for i, p := range parts {
		idx := llm.IntPtr(i)
		if err := send(llm.Chunk{Type: llm.ChunkBlockStart, Index: idx, BlockType: p.Type}); err != nil {
			return llm.Response{}, err
		}
		var c llm.Chunk
		switch p.Type {
		case llm.PartReasoning:
			c = llm.Chunk{Type: llm.ChunkReasoningDelta, Index: idx, Text: p.Text}
		case llm.PartText:
			c = llm.Chunk{Type: llm.ChunkTextDelta, Index: idx, Text: p.Text}
		default:
			finish = llm.FinishToolCalls
			c = llm.Chunk{Type: llm.ChunkToolCallDelta, Index: idx, ID: p.ID, Name: p.Name, ArgumentsDelta: llm.StrPtr(p.Arguments)}
		}
		if err := send(c); err != nil {
			return llm.Response{}, err
		}
		part := p
		if err := send(llm.Chunk{Type: llm.ChunkBlockEnd, Index: idx, Block: &part}); err != nil {
			return llm.Response{}, err
		}
	}
	if err := send(llm.Chunk{Type: llm.ChunkUsage, Usage: &llm.Usage{}}); err != nil {
		return llm.Response{}, err
	}
	if err := send(llm.Chunk{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: finish}}); err != nil {
		return llm.Response{}, err
	}
	return a.Response(), nil
}

// argsObject is a tool call's argument JSON as an object (the Anthropic
// and Gemini wires carry arguments as objects).
func argsObject(s string) json.RawMessage {
	var v map[string]any
	if json.Unmarshal([]byte(s), &v) != nil {
		return json.RawMessage(`{}`)
	}
	return json.RawMessage(s)
}

func anthropicBody(req llm.Request) map[string]any {
	var msgs []map[string]any
	add := func(role string, block map[string]any) {
		if n := len(msgs); n > 0 && msgs[n-1]["role"] == role {
			msgs[n-1]["content"] = append(msgs[n-1]["content"].([]map[string]any), block)
			return
		}
		msgs = append(msgs, map[string]any{"role": role, "content": []map[string]any{block}})
	}
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleUser:
			add("user", map[string]any{"type": "text", "text": m.Text()})
		case llm.RoleTool:
			add("user", map[string]any{"type": "tool_result", "tool_use_id": m.ToolCallID, "is_error": m.IsError,
				"content": []map[string]any{{"type": "text", "text": m.Text()}}})
		case llm.RoleAssistant:
			for _, p := range m.Content {
				switch p.Type {
				case llm.PartText:
					add("assistant", map[string]any{"type": "text", "text": p.Text})
				case llm.PartToolCall:
					add("assistant", map[string]any{"type": "tool_use", "id": p.ID, "name": p.Name, "input": argsObject(p.Arguments)})
				}
			}
		}
	}
	var tools []map[string]any
	for _, t := range req.Tools {
		tools = append(tools, map[string]any{"name": t.Name, "description": t.Description, "input_schema": t.Parameters})
	}
	return map[string]any{"model": "mock", "system": req.System, "messages": msgs, "tools": tools}
}

func anthropicParts(data []byte) ([]llm.Part, error) {
	var out struct {
		Content []struct {
			Type     string          `json:"type"`
			Text     string          `json:"text"`
			Thinking string          `json:"thinking"`
			ID       string          `json:"id"`
			Name     string          `json:"name"`
			Input    json.RawMessage `json:"input"`
		} `json:"content"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	var parts []llm.Part
	for _, b := range out.Content {
		switch b.Type {
		case "thinking":
			parts = append(parts, llm.Part{Type: llm.PartReasoning, Text: b.Thinking})
		case "text":
			parts = append(parts, llm.Part{Type: llm.PartText, Text: b.Text})
		case "tool_use":
			parts = append(parts, llm.Part{Type: llm.PartToolCall, ID: b.ID, Name: b.Name, Arguments: string(b.Input)})
		}
	}
	return parts, nil
}

func geminiBody(req llm.Request) map[string]any {
	var contents []map[string]any
	add := func(role string, part map[string]any) {
		if n := len(contents); n > 0 && contents[n-1]["role"] == role {
			contents[n-1]["parts"] = append(contents[n-1]["parts"].([]map[string]any), part)
			return
		}
		contents = append(contents, map[string]any{"role": role, "parts": []map[string]any{part}})
	}
	names := map[string]string{} // call id -> tool name
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleUser:
			add("user", map[string]any{"text": m.Text()})
		case llm.RoleTool:
			// Gemini has no error flag: an "error" field in the response is one.
			key := "output"
			if m.IsError {
				key = "error"
			}
			add("user", map[string]any{"functionResponse": map[string]any{"id": m.ToolCallID, "name": names[m.ToolCallID],
				"response": map[string]any{key: m.Text()}}})
		case llm.RoleAssistant:
			for _, p := range m.Content {
				switch p.Type {
				case llm.PartText:
					add("model", map[string]any{"text": p.Text})
				case llm.PartToolCall:
					names[p.ID] = p.Name
					add("model", map[string]any{"functionCall": map[string]any{"id": p.ID, "name": p.Name, "args": argsObject(p.Arguments)}})
				}
			}
		}
	}
	var decls []map[string]any
	for _, t := range req.Tools {
		decls = append(decls, map[string]any{"name": t.Name, "description": t.Description, "parametersJsonSchema": t.Parameters})
	}
	body := map[string]any{"contents": contents, "tools": []map[string]any{{"functionDeclarations": decls}}}
	if req.System != "" {
		body["systemInstruction"] = map[string]any{"parts": []map[string]any{{"text": req.System}}}
	}
	return body
}

func geminiParts(data []byte) ([]llm.Part, error) {
	var out struct {
		Candidates []struct {
			Content struct {
				Parts []struct {
					Text         *string `json:"text"`
					Thought      bool    `json:"thought"`
					FunctionCall *struct {
						ID   string          `json:"id"`
						Name string          `json:"name"`
						Args json.RawMessage `json:"args"`
					} `json:"functionCall"`
				} `json:"parts"`
			} `json:"content"`
		} `json:"candidates"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	if len(out.Candidates) == 0 {
		return nil, fmt.Errorf("no candidate in %s", data)
	}
	var parts []llm.Part
	for _, p := range out.Candidates[0].Content.Parts {
		switch {
		case p.FunctionCall != nil:
			parts = append(parts, llm.Part{Type: llm.PartToolCall, ID: p.FunctionCall.ID, Name: p.FunctionCall.Name, Arguments: string(p.FunctionCall.Args)})
		case p.Text != nil && p.Thought:
			parts = append(parts, llm.Part{Type: llm.PartReasoning, Text: *p.Text})
		case p.Text != nil:
			parts = append(parts, llm.Part{Type: llm.PartText, Text: *p.Text})
		}
	}
	return parts, nil
}

func responsesBody(req llm.Request) map[string]any {
	var input []map[string]any
	for _, m := range req.Messages {
		switch m.Role {
		case llm.RoleUser:
			input = append(input, map[string]any{"type": "message", "role": "user", "content": m.Text()})
		case llm.RoleTool:
			// The Responses API has no error flag: the text says it.
			input = append(input, map[string]any{"type": "function_call_output", "call_id": m.ToolCallID, "output": m.Text()})
		case llm.RoleAssistant:
			for _, p := range m.Content {
				switch p.Type {
				case llm.PartText:
					input = append(input, map[string]any{"type": "message", "role": "assistant", "content": p.Text})
				case llm.PartToolCall:
					input = append(input, map[string]any{"type": "function_call", "call_id": p.ID, "name": p.Name, "arguments": p.Arguments})
				}
			}
		}
	}
	var tools []map[string]any
	for _, t := range req.Tools {
		tools = append(tools, map[string]any{"type": "function", "name": t.Name, "description": t.Description, "parameters": t.Parameters})
	}
	body := map[string]any{"model": "mock", "input": input, "tools": tools}
	if req.System != "" {
		body["instructions"] = req.System
	}
	return body
}

func responsesParts(data []byte) ([]llm.Part, error) {
	var out struct {
		Output []struct {
			Type    string `json:"type"`
			CallID  string `json:"call_id"`
			Name    string `json:"name"`
			Args    string `json:"arguments"`
			Summary []struct {
				Text string `json:"text"`
			} `json:"summary"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
		} `json:"output"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, err
	}
	var parts []llm.Part
	for _, it := range out.Output {
		switch it.Type {
		case "reasoning":
			var b strings.Builder
			for _, s := range it.Summary {
				b.WriteString(s.Text)
			}
			parts = append(parts, llm.Part{Type: llm.PartReasoning, Text: b.String()})
		case "message":
			var b strings.Builder
			for _, c := range it.Content {
				b.WriteString(c.Text)
			}
			parts = append(parts, llm.Part{Type: llm.PartText, Text: b.String()})
		case "function_call":
			parts = append(parts, llm.Part{Type: llm.PartToolCall, ID: it.CallID, Name: it.Name, Arguments: it.Args})
		}
	}
	return parts, nil
}

// SideEnv, when set, makes the mutant send a side request (no tools
// offered, like opencode's session-title request) before its first model
// request, through the same wire: the runner must answer it outside the
// script and keep it out of the checks.
const SideEnv = "TODOHARNESS_SIDE_REQUEST"

// sideFirst sends one side request before the first request it passes on.
type sideFirst struct {
	llm.Model
	once sync.Once
}

func (s *sideFirst) Stream(ctx context.Context, req llm.Request, onChunk func(llm.Chunk) error) (llm.Response, error) {
	var err error
	s.once.Do(func() {
		first := ""
		if len(req.Messages) > 0 {
			first = req.Messages[0].Text()
		}
		title := llm.Request{Model: req.Model, System: "You are a title generator.", Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartText, Text: "Generate a title for this conversation: " + first}}}}}
		_, err = s.Model.Stream(ctx, title, func(llm.Chunk) error { return nil })
	})
	if err != nil {
		return llm.Response{}, fmt.Errorf("side request: %w", err)
	}
	return s.Model.Stream(ctx, req, onChunk)
}
