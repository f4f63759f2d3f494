package mockmodel

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/todoharness/todoharness/harness/llm"
)

// The four request decoders take any body: they return an error or a
// request whose history is well-formed, the same twice, and journalable.

var knownRoles = map[string]bool{llm.RoleSystem: true, llm.RoleUser: true, llm.RoleAssistant: true, llm.RoleTool: true}

// checkDecoded decodes body twice with decode. callIDs: the wire carries
// call ids, so every tool result names one (Gemini's may not).
func checkDecoded(t *testing.T, body []byte, callIDs bool, decode func([]byte) (request, error)) {
	req, err := decode(body)
	again, err2 := decode(body)
	if (err == nil) != (err2 == nil) || (err == nil && !reflect.DeepEqual(req, again)) {
		t.Fatalf("two decodes of one body differ: %v / %v", err, err2)
	}
	if err != nil {
		if err.Error() == "" {
			t.Fatal("an error with no text")
		}
		return
	}
	for i, m := range req.messages {
		if !knownRoles[m.Role] {
			t.Fatalf("messages[%d]: role %q", i, m.Role)
		}
		if callIDs && m.Role == llm.RoleTool && m.ToolCallID == "" {
			t.Fatalf("messages[%d]: a tool result with no call id", i)
		}
		for k, p := range m.Content {
			if p.Type == llm.PartToolCall && p.Name == "" {
				t.Fatalf("messages[%d].content[%d]: a tool call with no name", i, k)
			}
		}
	}
	for i, tool := range req.tools {
		if tool.Name == "" {
			t.Fatalf("tools[%d]: no name", i)
		}
	}
	req.raw = rawJSON(body)
	e := NewJournal().add(JournalEntry{Messages: req.messages, Tools: req.tools, Raw: req.raw.raw, System: req.system})
	if _, err := json.Marshal(e); err != nil {
		t.Fatalf("the journal entry does not encode: %v", err)
	}
	if len(body) > 0 && !json.Valid(e.Raw) {
		t.Fatalf("the journaled body is not JSON: %q", e.Raw)
	}
}

func addSeeds(f *testing.F, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
}

func FuzzDecodeOpenAIChat(f *testing.F) {
	addSeeds(f, `{"model":"m","stream":true,"messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"go"},
		{"role":"assistant","content":null,"reasoning_content":"r","tool_calls":[{"id":"c1","type":"function","function":{"name":"todo_write","arguments":"{\"todos\":[]}"}}]},
		{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"Error: no"}]}],
		"tools":[{"type":"function","function":{"name":"todo_write","description":"d","parameters":{"type":"object"}}}]}`,
		`{"model":"m"}`, `{"messages":[{"role":"robot","content":"x"}]}`, `{"messages":[]} {}`, `not json`)
	f.Fuzz(func(t *testing.T, body []byte) {
		checkDecoded(t, body, true, func(b []byte) (request, error) {
			_, req, err := decodeOpenAIChat(b)
			return req, err
		})
	})
}

func FuzzDecodeOpenAIResponses(f *testing.F) {
	addSeeds(f, `{"model":"m","stream":false,"instructions":"Be brief.","input":[{"role":"user","content":"go"},
		{"type":"function_call","call_id":"c1","name":"todo_write","arguments":"{}"},{"type":"function_call_output","call_id":"c1","output":"ok"}],
		"tools":[{"type":"function","name":"todo_write","description":"d","parameters":{"type":"object"}}]}`,
		`{"model":"m","input":"hello"}`, `{"model":"m","input":"x","previous_response_id":"resp_1"}`,
		`{"input":[{"type":"web_search_call","id":"ws_1"}]}`, `{"input":[{"role":"user","content":[{"type":"input_text","text":"x"}]}]}`)
	f.Fuzz(func(t *testing.T, body []byte) { checkDecoded(t, body, true, decodeOpenAIResponses) })
}

func FuzzDecodeAnthropic(f *testing.F) {
	addSeeds(f, `{"model":"m","max_tokens":10,"stream":true,"system":"Be brief.","messages":[{"role":"user","content":"go"},
		{"role":"assistant","content":[{"type":"thinking","thinking":"t"},{"type":"tool_use","id":"t1","name":"todo_write","input":{"todos":[]}}]},
		{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","is_error":true,"content":[{"type":"text","text":"bad"}]}]}],
		"tools":[{"name":"todo_write","description":"d","input_schema":{"type":"object"}}]}`,
		`{"model":"m","system":[{"type":"text","text":"s"}],"messages":[{"role":"user","content":"x"}]}`,
		`{"messages":[{"role":"system","content":"x"}]}`)
	f.Fuzz(func(t *testing.T, body []byte) { checkDecoded(t, body, true, decodeAnthropic) })
}

func FuzzDecodeGemini(f *testing.F) {
	addSeeds(f, `{"systemInstruction":{"parts":[{"text":"Be brief."}]},"contents":[{"role":"user","parts":[{"text":"go"}]},
		{"role":"model","parts":[{"functionCall":{"name":"todo_write","args":{"todos":[]}}}]},
		{"role":"user","parts":[{"functionResponse":{"name":"todo_write","response":{"error":"bad"}}}]}],
		"tools":[{"functionDeclarations":[{"name":"todo_write","description":"d","parameters":{"type":"object"}}]}]}`,
		`{"contents":[]}`, `{"contents":[{"role":"user","parts":[{"inlineData":{}}]}]}`)
	f.Fuzz(func(t *testing.T, body []byte) { checkDecoded(t, body, false, decodeGemini) })
}
