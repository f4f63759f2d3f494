package driver

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestDetectDialect(t *testing.T) {
	for tools, want := range map[string]string{
		"bash,todo_write":      DialectTodoWrite,
		"read,todowrite,edit":  DialectOpencode,
		"shell,update_plan":    DialectCodex,
		"write_todos":          DialectGemini,
		"Bash,TodoWrite":       DialectClaude,
		"todowrite,todo_write": DialectTodoWrite, // canonical wins
		"bash,edit":            "",
	} {
		var names []string
		_ = json.Unmarshal([]byte(`["`+replaceAll(tools, ",", `","`)+`"]`), &names)
		d, ok := DetectDialect(names)
		if (want == "") == ok || (ok && d.Name != want) {
			t.Errorf("%s: %v %v, want %q", tools, d.Name, ok, want)
		}
	}
	if _, err := DialectByName("TodoWrite"); err != nil {
		t.Error("lookup by tool name:", err)
	}
	if _, err := DialectByName("cursor"); err == nil {
		t.Error("unknown dialect accepted")
	}
}

func replaceAll(s, old, new string) string {
	out := ""
	for i := 0; i < len(s); i++ {
		if i+len(old) <= len(s) && s[i:i+len(old)] == old {
			out += new
			i += len(old) - 1
			continue
		}
		out += string(s[i])
	}
	return out
}

func TestTranslateArgs(t *testing.T) {
	canon := map[string]any{"todos": []any{
		map[string]any{"content": "read code", "status": "in_progress"},
		map[string]any{"content": "fix bug", "status": "pending"},
	}}
	get := func(name string) Dialect { d, _ := DialectByName(name); return d }
	for _, tc := range []struct {
		dialect string
		props   map[string]bool
		want    string
	}{
		{DialectTodoWrite, nil, `{"todos":[{"content":"read code","status":"in_progress"},{"content":"fix bug","status":"pending"}]}`},
		{DialectCodex, nil, `{"plan":[{"status":"in_progress","step":"read code"},{"status":"pending","step":"fix bug"}]}`},
		{DialectGemini, nil, `{"todos":[{"description":"read code","status":"in_progress"},{"description":"fix bug","status":"pending"}]}`},
		{DialectClaude, nil, `{"todos":[{"activeForm":"Working on: read code","content":"read code","status":"in_progress"},{"activeForm":"Working on: fix bug","content":"fix bug","status":"pending"}]}`},
		{DialectOpencode, nil, `{"todos":[{"content":"read code","id":"1","priority":"medium","status":"in_progress"},{"content":"fix bug","id":"2","priority":"medium","status":"pending"}]}`},
		// The agent's schema declares no id: none is sent.
		{DialectOpencode, map[string]bool{"content": true, "status": true, "priority": true}, `{"todos":[{"content":"read code","priority":"medium","status":"in_progress"},{"content":"fix bug","priority":"medium","status":"pending"}]}`},
	} {
		b, _ := json.Marshal(get(tc.dialect).TranslateArgs(canon, tc.props))
		if string(b) != tc.want {
			t.Errorf("%s: %s\nwant %s", tc.dialect, b, tc.want)
		}
	}
	// Malformed arguments are carried over so they stay rejectable.
	bad := map[string]any{"todos": "not a list"}
	if got := get(DialectCodex).TranslateArgs(bad, nil); !reflect.DeepEqual(got, map[string]any{"plan": "not a list"}) {
		t.Errorf("malformed: %v", got)
	}
}

func TestItemProperties(t *testing.T) {
	d, _ := DialectByName(DialectOpencode)
	got := d.ItemProperties(json.RawMessage(`{"type":"object","properties":{"todos":{"type":"array","items":{"type":"object","properties":{"content":{},"status":{},"priority":{}}}}}}`))
	if !reflect.DeepEqual(got, map[string]bool{"content": true, "status": true, "priority": true}) {
		t.Errorf("%v", got)
	}
	if d.ItemProperties(json.RawMessage(`{}`)) != nil {
		t.Error("no schema should mean unknown (nil)")
	}
}

// A todo_write whose items require an id (Qwen Code's) is the qwen
// dialect; the canonical schema stays todo_write (issue 41.5).
func TestDialectForSchema(t *testing.T) {
	canonical, err := DialectByName(DialectTodoWrite)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ schema, want string }{
		{`{"type":"object","properties":{"todos":{"type":"array","items":{"type":"object","properties":{"content":{"type":"string"},"status":{"type":"string"}},"required":["content","status"]}}}}`, DialectTodoWrite},
		{`{"type":"object","properties":{"todos":{"type":"array","items":{"type":"object","properties":{"content":{"type":"string"},"status":{"type":"string"},"id":{"type":"string"}},"required":["content","status","id"]}}}}`, DialectQwen},
		{`{"type":"object","properties":{"todos":{"type":"array","items":{"type":"object","required":["content","status","owner"]}}}}`, DialectTodoWrite},
		{`not json`, DialectTodoWrite},
	} {
		if got := canonical.ForSchema([]byte(tc.schema)).Name; got != tc.want {
			t.Errorf("%s: %s, want %s", tc.schema, got, tc.want)
		}
	}
	q, _ := DialectByName(DialectQwen)
	args := map[string]any{"todos": []any{map[string]any{"content": "a", "status": "pending"}}}
	got := q.TranslateArgs(args, map[string]bool{"content": true, "status": true, "id": true})
	if item := got.(map[string]any)["todos"].([]any)[0].(map[string]any); item["id"] != "1" {
		t.Errorf("qwen item %v, want id \"1\"", item)
	}
}
