package driver

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The embedded schema is a verbatim copy of the SDK module's.
func TestEmbeddedSchemaMatchesModule(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/coder/acp-go-sdk").Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		t.Skipf("go list: %v (module cache unavailable)", err)
	}
	dir := strings.TrimSpace(string(out))
	want, err := os.ReadFile(filepath.Join(dir, "schema", "schema.json"))
	if err != nil {
		t.Skipf("module schema not in the cache: %v", err)
	}
	if !strings.Contains(ACPSchemaSource, filepath.Base(dir)) {
		t.Errorf("ACPSchemaSource %q does not name the module version in go.mod (%s)", ACPSchemaSource, filepath.Base(dir))
	}
	if !bytes.Equal(ACPSchema(), want) {
		t.Errorf("driver/acp-schema.json differs from %s: copy it again", filepath.Join(dir, "schema", "schema.json"))
	}
}

func msg(line, replyTo string) WireMsg {
	_, m := Classify([]byte(line))
	m.ReplyTo = replyTo
	return m
}

func TestSchemaValidator(t *testing.T) {
	v, err := NewSchemaValidator()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, line, replyTo string
		fromAgent           bool
		bad                 string // substring of the error; "" = valid
	}{
		{"plan", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[{"content":"a","priority":"medium","status":"pending"}]}}}`, "", true, ""},
		{"empty plan", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}}`, "", true, ""},
		{"null entries", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":null}}}`, "", true, "/update/entries: got null, want array"},
		{"no priority", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[{"content":"a","status":"pending"}]}}}`, "", true, "missing property 'priority'"},
		{"bad status", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[{"content":"a","priority":"medium","status":"done"}]}}}`, "", true, "SessionNotification"},
		{"unknown update kind", `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"todo_list","items":[]}}}`, "", true, "SessionNotification"},
		{"init response", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true},"authMethods":[]}}`, "initialize", true, ""},
		{"init response without version", `{"jsonrpc":"2.0","id":1,"result":{"agentCapabilities":{}}}`, "initialize", true, "InitializeResponse"},
		{"prompt response", `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"end_turn"}}`, "session/prompt", true, ""},
		{"bad stop reason", `{"jsonrpc":"2.0","id":3,"result":{"stopReason":"finished"}}`, "session/prompt", true, "PromptResponse"},
		{"error response", `{"jsonrpc":"2.0","id":3,"error":{"code":-32603,"message":"boom"}}`, "session/prompt", true, ""},
		{"response to nothing", `{"jsonrpc":"2.0","id":9,"result":{}}`, "", true, "unknown request"},
		{"permission request", `{"jsonrpc":"2.0","id":7,"method":"session/request_permission","params":{"sessionId":"s","toolCall":{"toolCallId":"t"},"options":[{"optionId":"y","name":"Yes","kind":"allow_once"}]}}`, "", true, ""},
		{"unknown method", `{"jsonrpc":"2.0","method":"session/todos","params":{}}`, "", true, "not an ACP method"},
		{"extension method", `{"jsonrpc":"2.0","method":"_acme/ping","params":{}}`, "", true, ""},
		{"wrong jsonrpc", `{"jsonrpc":"1.0","method":"session/update","params":{}}`, "", true, "not a JSON-RPC message"},
		{"client initialize", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":false}}}`, "", false, ""},
		{"client new session with null mcpServers", `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/tmp","mcpServers":null}}`, "", false, "NewSessionRequest"},
		{"client permission answer", `{"jsonrpc":"2.0","id":7,"result":{"outcome":{"outcome":"selected","optionId":"y"}}}`, "session/request_permission", false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := v.Validate(msg(tc.line, tc.replyTo), tc.fromAgent)
			switch {
			case tc.bad == "" && err != nil:
				t.Errorf("want valid, got %v", err)
			case tc.bad != "" && err == nil:
				t.Errorf("want an error mentioning %q, got valid", tc.bad)
			case tc.bad != "" && !strings.Contains(err.Error(), tc.bad):
				t.Errorf("error %q does not mention %q", err, tc.bad)
			}
		})
	}
}

// A schema error is reported against the branch the message selects (its
// sessionUpdate), at the place that is wrong, with what was allowed.
func TestSchemaErrorsNameTheSelectedBranch(t *testing.T) {
	v, err := NewSchemaValidator()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ update, want string }{
		{`{"sessionUpdate":"plan","entries":[{"content":"a","status":"pending","priority":"medium"},{"content":"b","status":"done","priority":"medium"}]}`,
			`invalid SessionNotification (plan): /update/entries/1/status: "done" is not one of pending, in_progress, completed`},
		{`{"sessionUpdate":"plan","entries":[{"content":"a","status":"pending"}]}`,
			`invalid SessionNotification (plan): /update/entries/0: missing property 'priority'`},
		{`{"sessionUpdate":"plan","entries":[{"content":"a","status":"pending","priority":"urgent"}]}`,
			`invalid SessionNotification (plan): /update/entries/0/priority: "urgent" is not one of high, medium, low`},
		{`{"sessionUpdate":"plans","entries":[]}`,
			`invalid SessionNotification: /update/sessionUpdate: "plans" is not one of user_message_chunk, agent_message_chunk, `},
	} {
		m := msg(`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":`+tc.update+`}}`, "")
		err := v.Validate(m, true)
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("%s:\n got %v\nwant %s", tc.update, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "toolCallId") {
			t.Errorf("%s: the error names another kind of update: %v", tc.update, err)
		}
	}
}

func TestClassify(t *testing.T) {
	for line, kind := range map[string]string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}`: KindRequest,
		`{"jsonrpc":"2.0","method":"session/update","params":{}}`:    KindNotification,
		`{"jsonrpc":"2.0","id":1,"result":null}`:                     KindResponse,
		`{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"x"}}`:  KindResponse,
		`hello`:                KindInvalid,
		`[1,2]`:                KindInvalid,
		`{"jsonrpc":"2.0"}`:    KindInvalid,
		`{"id":1,"result":{}}`: KindInvalid,
	} {
		if _, m := Classify([]byte(line)); m.Kind != kind {
			t.Errorf("%s: %s, want %s (%s)", line, m.Kind, kind, m.Problem)
		}
	}
}

// The embedded unstable schema is a verbatim copy of the SDK module's too.
func TestEmbeddedUnstableSchemaMatchesModule(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/coder/acp-go-sdk").Output()
	if err != nil || len(bytes.TrimSpace(out)) == 0 {
		t.Skipf("go list: %v (module cache unavailable)", err)
	}
	path := filepath.Join(strings.TrimSpace(string(out)), "schema", "schema.unstable.json")
	want, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("module schema not in the cache: %v", err)
	}
	if !bytes.Equal(ACPUnstableSchema(), want) {
		t.Errorf("driver/acp-schema.unstable.json differs from %s: copy it again", path)
	}
}

// updateLines gathers session/update lines the repository holds: the
// original implementation's transcripts and every saved evidence's wire.
func updateLines(t *testing.T) []string {
	t.Helper()
	var lines []string
	seen, perKind := map[string]bool{}, map[string]int{}
	add := func(s string) {
		if !strings.Contains(s, `"session/update"`) || seen[s] {
			return
		}
		seen[s] = true
		// Up to 25 distinct lines of each update kind: the lines repeat
		// few shapes, and each is broken about thirty ways below.
		if k := msg(s, "").UpdateKind(); perKind[k] < 25 {
			perKind[k]++
			lines = append(lines, s)
		}
	}
	paths, _ := filepath.Glob("../fixtures/interop/deepseek-harness/*/stdout*.jsonl")
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(string(b), "\n") {
			add(l)
		}
	}
	archives := savedWireLines(t, add)
	if len(paths) == 0 || archives == 0 || len(lines) < 60 {
		t.Fatalf("found %d transcripts, %d evidence archives, %d session/update lines: the corpus moved", len(paths), archives, len(lines))
	}
	return lines
}

// mutations are session/update lines changed the ways an agent gets them
// wrong: each update kind given to another's fields, envelope fields gone
// or mistyped, stray fields, nulls.
func mutations(t *testing.T, line string, kinds []string) []string {
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		return nil
	}
	params, _ := m["params"].(map[string]any)
	update, _ := params["update"].(map[string]any)
	if update == nil {
		return nil
	}
	var out []string
	with := func(change func(p, u map[string]any)) {
		var c map[string]any
		b, _ := json.Marshal(m)
		_ = json.Unmarshal(b, &c)
		p := c["params"].(map[string]any)
		change(p, p["update"].(map[string]any))
		b, _ = json.Marshal(c)
		out = append(out, string(b))
	}
	for _, k := range kinds {
		with(func(_, u map[string]any) { u["sessionUpdate"] = k })
	}
	with(func(p, _ map[string]any) { delete(p, "sessionId") })
	with(func(p, _ map[string]any) { p["sessionId"] = 7 })
	with(func(p, _ map[string]any) { p["_meta"] = "x" })
	with(func(p, _ map[string]any) { p["extra"] = true })
	with(func(p, _ map[string]any) { p["update"] = nil })
	with(func(_, u map[string]any) { delete(u, "sessionUpdate") })
	for f := range update {
		if f != "sessionUpdate" {
			with(func(_, u map[string]any) { delete(u, f) })
			with(func(_, u map[string]any) { u[f] = nil })
			with(func(_, u map[string]any) { u[f] = "x" })
		}
	}
	return out
}

// Validate checks a session/update against the one branch its
// sessionUpdate names (updateByBranch); on every line the repository
// holds, and on each line broken many ways, that says valid exactly when
// the whole SessionUpdate union does, in the stable and the unstable
// schema.
func TestUpdateByBranchAgreesWithTheUnion(t *testing.T) {
	lines := updateLines(t)
	for _, schemaJSON := range [][]byte{acpSchemaJSON, acpUnstableSchemaJSON} {
		fast, err := newSchemaValidator(schemaJSON)
		if err != nil {
			t.Fatal(err)
		}
		full, err := newSchemaValidator(schemaJSON)
		if err != nil {
			t.Fatal(err)
		}
		if !fast.updateByBranch {
			t.Fatal("the schema's SessionUpdate branches are no longer told apart by sessionUpdate: Validate tries the whole union")
		}
		full.updateByBranch, full.quick = false, nil
		agree(t, [2]string{"by branch", "whole union"}, fast, full, lines, func(l string) []string { return mutations(t, l, fast.updateKinds) }, false)
	}
}

// agree checks that a and b (named by names) call the same of lines
// valid, each line and the variants of it; with sameError, that they say
// the same error too. Enough of both must be compared.
func agree(t *testing.T, names [2]string, a, b *SchemaValidator, lines []string, variants func(string) []string, sameError bool) {
	t.Helper()
	valid, invalid := 0, 0
	for _, l := range lines {
		for _, c := range append([]string{l}, variants(l)...) {
			m := msg(c, "")
			ea, eb := a.Validate(m, true), b.Validate(m, true)
			if (ea == nil) != (eb == nil) || sameError && fmt.Sprint(ea) != fmt.Sprint(eb) {
				t.Fatalf("%s: %v; %s: %v; line %s", names[0], ea, names[1], eb, c)
			}
			if ea == nil {
				valid++
			} else {
				invalid++
			}
		}
	}
	if valid < 50 || invalid < 1000 {
		t.Fatalf("only %d valid and %d invalid lines compared", valid, invalid)
	}
	t.Logf("%d valid and %d invalid session/update lines agree", valid, invalid)
}

// savedWireLines calls add with every wire line of the evidence archives
// under conformance/testdata/evidence, and returns how many archives it
// read.
func savedWireLines(t *testing.T, add func(string)) int {
	t.Helper()
	archives, _ := filepath.Glob("../conformance/testdata/evidence/*.jsonl.gz")
	for _, p := range archives {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		dec := json.NewDecoder(zr)
		for {
			var ev struct {
				Wire []struct {
					Line string `json:"line"`
				} `json:"wire"`
			}
			if err := dec.Decode(&ev); err != nil {
				break
			}
			for _, w := range ev.Wire {
				add(w.Line)
			}
		}
		f.Close()
	}
	return len(archives)
}
