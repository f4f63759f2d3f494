package acp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/todoharness/todoharness/harness/acp"
)

// acpSchema compiles the definitions of a schema copy in
// testdata/acp-schema (see its README for source and licence).
type acpSchema struct {
	c    *jsonschema.Compiler
	url  string
	mu   sync.Mutex
	defs map[string]*jsonschema.Schema
}

func loadSchema(t testing.TB, file string) *acpSchema {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "acp-schema", file))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	doc, err := jsonschema.UnmarshalJSON(f)
	if err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	c := jsonschema.NewCompiler()
	url := "https://agentclientprotocol.com/" + file
	if err := c.AddResource(url, doc); err != nil {
		t.Fatal(err)
	}
	return &acpSchema{c: c, url: url, defs: map[string]*jsonschema.Schema{}}
}

// validate checks the JSON text raw against the schema's $defs/def.
func (s *acpSchema) validate(def string, raw []byte) error {
	s.mu.Lock()
	sch, ok := s.defs[def]
	if !ok {
		var err error
		if sch, err = s.c.Compile(s.url + "#/$defs/" + def); err != nil {
			s.mu.Unlock()
			return fmt.Errorf("compile %s: %w", def, err)
		}
		s.defs[def] = sch
	}
	s.mu.Unlock()
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return fmt.Errorf("%s: %w", def, err)
	}
	if err := sch.Validate(v); err != nil {
		return fmt.Errorf("%s: %w", def, err)
	}
	return nil
}

// v2ResultDefs names the v2 schema's definition of each method's result.
var v2ResultDefs = map[string]string{
	"initialize":     "InitializeResponse",
	"session/new":    "NewSessionResponse",
	"session/prompt": "PromptResponse",
	"session/resume": "ResumeSessionResponse",
	"session/list":   "ListSessionsResponse",
	"session/close":  "CloseSessionResponse",
}

// wireMsg is one line from the agent.
type wireMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	raw    []byte
}

// update is the params of a session/update line.
type update struct {
	SessionID string         `json:"sessionId"`
	Update    map[string]any `json:"update"`
}

func (m wireMsg) update(t testing.TB) (update, bool) {
	if m.Method != "session/update" {
		return update{}, false
	}
	var u update
	if err := json.Unmarshal(m.Params, &u); err != nil {
		t.Fatalf("session/update params: %v: %s", err, m.raw)
	}
	return u, true
}

func (u update) kind() string { s, _ := u.Update["sessionUpdate"].(string); return s }

// v2client is a raw JSON-lines client of a bridge served in process: it
// validates every line the agent sends against the v2 schema (once the
// connection negotiated 2), by the method of the request it answers.
type v2client struct {
	t      testing.TB
	ctx    context.Context
	in     *io.PipeWriter
	lines  chan []byte
	schema *acpSchema // nil: no validation (a v1 connection)
	// close ends the input and waits for the bridge to stop.
	close func()

	mu      sync.Mutex
	nextID  int
	methods map[string]string // request id -> method
	seen    []wireMsg
}

func serveRaw(t testing.TB, dir string, model *fakeModel, opts ...rigOpt) *v2client {
	t.Helper()
	b, _ := bridgeIn(t, dir, model, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- b.Serve(ctx, inR, outW)
		_ = outW.Close()
	}()
	c := &v2client{t: t, ctx: ctx, in: inW, lines: make(chan []byte, 1024), methods: map[string]string{}}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 16<<20)
		for sc.Scan() {
			c.lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	var once sync.Once
	c.close = func() {
		once.Do(func() {
			_ = inW.Close()
			for range c.lines { // drain: the bridge may still be writing
			}
			select {
			case err := <-served:
				if err != nil {
					t.Errorf("serve: %v", err)
				}
			case <-time.After(time.Minute):
				t.Errorf("the bridge did not stop within a minute of its input's end")
			}
			cancel()
		})
	}
	t.Cleanup(c.close)
	return c
}

// send writes one message.
func (c *v2client) send(v any) {
	c.t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		c.t.Fatal(err)
	}
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

// request sends a request and returns its id.
func (c *v2client) request(method string, params any) string {
	c.t.Helper()
	c.mu.Lock()
	c.nextID++
	id := fmt.Sprint(c.nextID)
	c.methods[id] = method
	c.mu.Unlock()
	c.send(map[string]any{"jsonrpc": "2.0", "id": c.nextID, "method": method, "params": params})
	return id
}

// next reads the agent's next line, validated.
func (c *v2client) next() wireMsg {
	c.t.Helper()
	select {
	case l, ok := <-c.lines:
		if !ok {
			c.t.Fatal("the agent closed its output")
		}
		var m wireMsg
		if err := json.Unmarshal(l, &m); err != nil {
			c.t.Fatalf("agent line is not JSON: %v: %s", err, l)
		}
		m.raw = l
		c.check(m)
		c.mu.Lock()
		c.seen = append(c.seen, m)
		c.mu.Unlock()
		return m
	case <-time.After(time.Minute):
		c.t.Fatal("no line from the agent within a minute")
	}
	return wireMsg{}
}

// check validates m against the v2 schema.
func (c *v2client) check(m wireMsg) {
	c.t.Helper()
	if c.schema == nil {
		return
	}
	var err error
	switch {
	case m.Method == "session/update":
		err = c.schema.validate("UpdateSessionNotification", m.Params)
	case m.Method != "":
		err = fmt.Errorf("unexpected request or notification %s", m.Method)
	case m.Error != nil:
		err = c.schema.validate("Error", m.Error)
	default:
		c.mu.Lock()
		method := c.methods[strings.Trim(string(m.ID), `"`)]
		c.mu.Unlock()
		def, ok := v2ResultDefs[method]
		if !ok {
			err = fmt.Errorf("a response to no request the client sent (id %s)", m.ID)
			break
		}
		err = c.schema.validate(def, m.Result)
	}
	if err != nil {
		c.t.Errorf("v2 schema: %v\nline: %s", err, m.raw)
	}
}

// until reads lines until stop holds for one, returning the updates read
// before it (and its own when it is one).
func (c *v2client) until(stop func(wireMsg) bool) []update {
	c.t.Helper()
	var ups []update
	for {
		m := c.next()
		if u, ok := m.update(c.t); ok {
			ups = append(ups, u)
		}
		if stop(m) {
			return ups
		}
	}
}

// call sends a request and reads until its response, which it returns
// with the updates read before it.
func (c *v2client) call(method string, params any) (wireMsg, []update) {
	c.t.Helper()
	id := c.request(method, params)
	var resp wireMsg
	ups := c.until(func(m wireMsg) bool {
		if m.Method == "" && strings.Trim(string(m.ID), `"`) == id {
			resp = m
			return true
		}
		return false
	})
	return resp, ups
}

// mustCall is call failing the test on an error response.
func (c *v2client) mustCall(method string, params any) (json.RawMessage, []update) {
	c.t.Helper()
	resp, ups := c.call(method, params)
	if resp.Error != nil {
		c.t.Fatalf("%s: error %s", method, resp.Error)
	}
	return resp.Result, ups
}

// initV2 initializes the connection offering version 2.
func (c *v2client) initV2(t testing.TB) json.RawMessage {
	t.Helper()
	c.schema = loadSchema(t, "v2-schema.json")
	res, _ := c.mustCall("initialize", map[string]any{
		"protocolVersion": 2, "info": map[string]any{"name": "test", "version": "0"}, "capabilities": map[string]any{},
	})
	return res
}

func (c *v2client) newSession() string {
	c.t.Helper()
	res, _ := c.mustCall("session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
	var r struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(res, &r); err != nil || r.SessionID == "" {
		c.t.Fatalf("session/new result %s: %v", res, err)
	}
	return r.SessionID
}

// v1Prompt initializes a v1 connection (no client capability), makes a
// session and prompts it, returning the answer and the turn's updates.
func (c *v2client) v1Prompt() (json.RawMessage, []update) {
	c.t.Helper()
	c.mustCall("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	sid := c.newSession()
	return c.mustCall("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "x"}}})
}

// isIdle reports whether m is an idle state_update.
func isIdle(t testing.TB, m wireMsg) bool {
	u, ok := m.update(t)
	return ok && u.kind() == "state_update" && u.Update["state"] == "idle"
}

// promptTurn sends a prompt, checks its answer is the empty
// acknowledgment, and reads the turn's updates to its idle state_update.
func (c *v2client) promptTurn(sid, text string) []update {
	c.t.Helper()
	res, before := c.mustCall("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}})
	if string(res) != "{}" {
		c.t.Errorf("session/prompt result = %s, want {} (v2's answer only acknowledges)", res)
	}
	if len(before) != 0 {
		c.t.Errorf("%d updates before the prompt's answer, want none: %v", len(before), before)
	}
	return c.until(func(m wireMsg) bool { return isIdle(c.t, m) })
}

func kindsOf(ups []update) []string {
	out := make([]string, 0, len(ups))
	for _, u := range ups {
		out = append(out, u.kind())
	}
	return out
}

func plansOf(ups []update) []map[string]any {
	var out []map[string]any
	for _, u := range ups {
		if u.kind() == "plan_update" {
			p, _ := u.Update["plan"].(map[string]any)
			out = append(out, p)
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestV2InitializeNegotiatesPerConnection(t *testing.T) {
	for _, offered := range []int{2, 3} {
		t.Run(fmt.Sprint("offered ", offered), func(t *testing.T) {
			c := serveRaw(t, "", newFake())
			c.schema = loadSchema(t, "v2-schema.json")
			res, _ := c.mustCall("initialize", map[string]any{"protocolVersion": offered, "info": map[string]any{"name": "t", "version": "0"}})
			var r struct {
				ProtocolVersion int `json:"protocolVersion"`
				Info            struct {
					Name, Version string
				} `json:"info"`
				Capabilities struct {
					Session map[string]any `json:"session"`
				} `json:"capabilities"`
				AgentCapabilities any `json:"agentCapabilities"`
			}
			if err := json.Unmarshal(res, &r); err != nil {
				t.Fatal(err)
			}
			if r.ProtocolVersion != 2 || r.Info.Name != acp.AgentName || r.Capabilities.Session == nil || r.AgentCapabilities != nil {
				t.Errorf("initialize offering %d = %s, want protocolVersion 2, info, capabilities.session and no v1 agentCapabilities", offered, res)
			}
		})
	}
	t.Run("offered 1", func(t *testing.T) {
		c := serveRaw(t, "", newFake())
		res, _ := c.mustCall("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
		var r struct {
			ProtocolVersion   int `json:"protocolVersion"`
			AgentCapabilities struct {
				LoadSession bool `json:"loadSession"`
			} `json:"agentCapabilities"`
		}
		if err := json.Unmarshal(res, &r); err != nil || r.ProtocolVersion != 1 || !r.AgentCapabilities.LoadSession {
			t.Errorf("initialize offering 1 = %s (%v), want v1's answer: protocolVersion 1, loadSession", res, err)
		}
	})
}

// A v2 turn: the answer {} first, then user_message and running, the tool
// calls created by tool_call_update (no tool_call), the list as plan_update
// under one planId across writes, message chunks with messageIds, and the
// idle state_update with end_turn last; every line valid v2.
func TestV2PromptTurn(t *testing.T) {
	model := newFake(
		fakeTurn{reasoning: "plan it", calls: []fakeCall{{id: "c1", name: "todo_write", args: todos("a", "in_progress", "b", "pending")}}},
		fakeTurn{calls: []fakeCall{{id: "c2", name: "todo_write", args: todos("a", "completed", "b", "in_progress")}}},
		fakeTurn{text: "all done"},
	)
	c := serveRaw(t, "", model)
	c.initV2(t)
	sid := c.newSession()
	ups := c.promptTurn(sid, "do it")
	kinds := kindsOf(ups)
	if len(kinds) < 3 || kinds[0] != "user_message" || kinds[1] != "state_update" || ups[1].Update["state"] != "running" {
		t.Errorf("turn starts %v, want user_message, state_update running", kinds)
	}
	last := ups[len(ups)-1]
	if last.Update["state"] != "idle" || last.Update["stopReason"] != "end_turn" {
		t.Errorf("last update %v, want idle with stopReason end_turn", last.Update)
	}
	for _, banned := range []string{"tool_call", "plan"} {
		if contains(kinds, banned) {
			t.Errorf("v2 turn sent %q (v1 only): %v", banned, kinds)
		}
	}
	plans := plansOf(ups)
	if len(plans) != 2 {
		t.Fatalf("%d plan_updates, want 2 (one per write): %v", len(plans), kinds)
	}
	for i, p := range plans {
		if p["type"] != "items" || p["planId"] != acp.PlanID {
			t.Errorf("plan_update %d = %v, want type items, planId %q", i, p, acp.PlanID)
		}
	}
	if e := plans[1]["entries"].([]any)[0].(map[string]any); e["content"] != "a" || e["status"] != "completed" || e["priority"] != "medium" {
		t.Errorf("second plan's first entry = %v", e)
	}
	created := map[string]bool{}
	for _, u := range ups {
		if u.kind() != "tool_call_update" {
			continue
		}
		id, _ := u.Update["toolCallId"].(string)
		if !created[id] {
			created[id] = true
			if u.Update["title"] == nil || u.Update["status"] != "in_progress" {
				t.Errorf("the update creating %s = %v, want its title and status in_progress", id, u.Update)
			}
		}
	}
	if !created["c1"] || !created["c2"] {
		t.Errorf("tool calls created: %v, want c1 and c2", created)
	}
	for _, u := range ups {
		if k := u.kind(); strings.HasSuffix(k, "_chunk") && u.Update["messageId"] == nil {
			t.Errorf("%s without messageId: %v", k, u.Update)
		}
	}
}

// session/resume with replayFrom start replays the history (the user's
// message, the tool calls, the plan under the same planId) before its
// answer, in a new connection; without replayFrom it replays nothing; and
// v2 has no session/load.
func TestV2ResumeReplaysThePlan(t *testing.T) {
	dir := t.TempDir()
	model := newFake(
		fakeTurn{calls: []fakeCall{{id: "c1", name: "todo_write", args: todos("a", "in_progress")}}},
		fakeTurn{text: "ok"},
	)
	c := serveRaw(t, dir, model)
	c.initV2(t)
	sid := c.newSession()
	live := c.promptTurn(sid, "go")
	c.close()

	c2 := serveRaw(t, dir, newFake())
	c2.initV2(t)
	if resp, _ := c2.call("session/load", map[string]any{"sessionId": sid, "cwd": cwd, "mcpServers": []any{}}); resp.Error == nil {
		t.Errorf("session/load on v2 answered %s, want an error (v2 has no session/load)", resp.Result)
	}
	res, replay := c2.mustCall("session/resume", map[string]any{"sessionId": sid, "cwd": cwd, "replayFrom": map[string]any{"type": "start"}})
	if string(res) != "{}" {
		t.Errorf("session/resume result = %s", res)
	}
	plans := plansOf(replay)
	if len(plans) != 1 || plans[0]["planId"] != acp.PlanID {
		t.Errorf("replayed plans %v, want the one plan_update under %q", plans, acp.PlanID)
	}
	if livePlans := plansOf(live); len(livePlans) != 1 || fmt.Sprint(livePlans[0]) != fmt.Sprint(plans[0]) {
		t.Errorf("replayed plan %v, live plan %v: want the same", plans, livePlans)
	}
	kinds := kindsOf(replay)
	if len(kinds) == 0 || kinds[0] != "user_message" || contains(kinds, "state_update") || contains(kinds, "tool_call") {
		t.Errorf("replay %v: want the history from the user's message, no state_update, no tool_call", kinds)
	}
	for _, u := range replay {
		if u.SessionID != sid {
			t.Errorf("replayed under %q, want %q", u.SessionID, sid)
		}
	}
	// The resumed session is live: a prompt reaches it.
	c2.promptTurn(sid, "again")
	c2.close()

	c3 := serveRaw(t, dir, newFake())
	c3.initV2(t)
	if _, ups := c3.mustCall("session/resume", map[string]any{"sessionId": sid, "cwd": cwd}); len(ups) != 0 {
		t.Errorf("resume without replayFrom sent %d updates, want none", len(ups))
	}
	if resp, _ := c3.call("session/resume", map[string]any{"sessionId": sid, "cwd": cwd, "replayFrom": map[string]any{"type": "_later"}}); resp.Error == nil || !strings.Contains(string(resp.Error), "_later") {
		t.Errorf("an unknown replay cursor answered %s %s, want -32602 naming it", resp.Result, resp.Error)
	}
}

// A cancel is confirmed by the idle state_update with stopReason
// cancelled.
func TestV2CancelEndsIdleCancelled(t *testing.T) {
	c := serveRaw(t, "", newFake(fakeTurn{reasoning: "thinking", hang: true}))
	c.initV2(t)
	sid := c.newSession()
	c.mustCall("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "x"}}})
	c.until(func(m wireMsg) bool {
		u, ok := m.update(t)
		return ok && u.kind() == "agent_thought_chunk"
	})
	c.send(map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": sid}})
	ups := c.until(func(m wireMsg) bool { return isIdle(t, m) })
	if last := ups[len(ups)-1]; last.Update["stopReason"] != "cancelled" {
		t.Errorf("idle after cancel = %v, want stopReason cancelled", last.Update)
	}
}

// A model error ends the turn idle with the extension stop reason
// _model_error and the reason in _meta (v1 answered a JSON-RPC error).
func TestV2ModelErrorEndsIdle(t *testing.T) {
	c := serveRaw(t, "", newFake(fakeTurn{err: errBoom}))
	c.initV2(t)
	sid := c.newSession()
	ups := c.promptTurn(sid, "x")
	last := ups[len(ups)-1]
	meta, _ := last.Update["_meta"].(map[string]any)
	if last.Update["stopReason"] != "_model_error" || !strings.Contains(fmt.Sprint(meta), errBoom.Error()) {
		t.Errorf("idle after a model error = %v", last.Update)
	}
}

// Requests v2 refuses are answered with errors the schema accepts:
// unknown session, unknown method.
func TestV2Errors(t *testing.T) {
	c := serveRaw(t, "", newFake())
	c.initV2(t)
	if resp, _ := c.call("session/prompt", map[string]any{"sessionId": "nope", "prompt": []any{map[string]any{"type": "text", "text": "x"}}}); resp.Error == nil {
		t.Errorf("prompt of an unknown session answered %s", resp.Result)
	}
	if resp, _ := c.call("session/set_mode", map[string]any{"sessionId": "x", "modeId": "y"}); !strings.Contains(string(resp.Error), "-32601") {
		t.Errorf("session/set_mode (not in v2) answered %s %s, want -32601", resp.Result, resp.Error)
	}
	sid := c.newSession()
	res, _ := c.mustCall("session/list", map[string]any{})
	if !strings.Contains(string(res), sid) {
		t.Errorf("session/list = %s, want %s in it", res, sid)
	}
	c.mustCall("session/close", map[string]any{"sessionId": sid})
	if resp, _ := c.call("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "x"}}}); resp.Error == nil {
		t.Errorf("prompt of a closed session answered %s", resp.Result)
	}
}

// On v1 a client that advertised clientCapabilities.plan gets the list as
// plan_update (valid in v1's unstable schema); one that did not gets plan,
// never plan_update.
func TestV1PlanOperations(t *testing.T) {
	v1unstable := loadSchema(t, "v1-schema.unstable.json")
	turns := func() *fakeModel {
		return newFake(fakeTurn{calls: []fakeCall{{id: "c1", name: "todo_write", args: todos("a", "pending")}}}, fakeTurn{text: "ok"})
	}
	for _, tc := range []struct {
		name string
		caps map[string]any
		want string
	}{
		{"advertised", map[string]any{"plan": map[string]any{}}, "plan_update"},
		{"not advertised", map[string]any{}, "plan"},
		{"null", map[string]any{"plan": nil}, "plan"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := serveRaw(t, "", turns())
			res, _ := c.mustCall("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": tc.caps})
			if !strings.Contains(string(res), `"protocolVersion":1`) {
				t.Fatalf("initialize = %s", res)
			}
			sid := c.newSession()
			res, ups := c.mustCall("session/prompt", map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "x"}}})
			if !strings.Contains(string(res), "end_turn") {
				t.Errorf("v1 prompt answered %s, want its stop reason", res)
			}
			kinds := kindsOf(ups)
			other := map[string]string{"plan": "plan_update", "plan_update": "plan"}[tc.want]
			if !contains(kinds, tc.want) || contains(kinds, other) || contains(kinds, "state_update") {
				t.Errorf("updates %v: want %s, no %s, no state_update", kinds, tc.want, other)
			}
			for _, m := range c.seen {
				if u, ok := m.update(t); ok && u.kind() == "plan_update" {
					if err := v1unstable.validate("SessionNotification", m.Params); err != nil {
						t.Errorf("v1 unstable schema: %v", err)
					}
				}
			}
		})
	}
}

// The surface faults each break what they name, and nothing when the
// connection does not speak the surface they break.
func TestSurfaceFaults(t *testing.T) {
	for _, f := range acp.SurfaceFaults() {
		if fs, err := acp.ParseFaults(string(f)); err != nil || !fs.Has(f) {
			t.Errorf("ParseFaults(%q) = %v, %v", f, fs, err)
		}
	}
	twoWrites := func() *fakeModel {
		return newFake(
			fakeTurn{calls: []fakeCall{{id: "c1", name: "todo_write", args: todos("a", "in_progress")}}},
			fakeTurn{calls: []fakeCall{{id: "c2", name: "todo_write", args: todos("a", "completed")}}},
			fakeTurn{text: "done"},
		)
	}
	t.Run("no-idle", func(t *testing.T) {
		model := twoWrites()
		model.turns = append(model.turns, fakeTurn{text: "second"})
		c := serveRaw(t, "", model, withFaults("no-idle"))
		c.initV2(t)
		sid := c.newSession()
		prompt := map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": "x"}}}
		c.mustCall("session/prompt", prompt)
		// A second prompt is accepted only once the first turn has ended
		// (after its idle, were one sent).
		_, ups := c.mustCall("session/prompt", prompt)
		if kinds := kindsOf(ups); !contains(kinds, "plan_update") {
			t.Errorf("first turn %v: want its updates (its plans)", kinds)
		}
		for _, u := range ups {
			if u.Update["state"] == "idle" {
				t.Errorf("an idle state_update under no-idle: %v", u.Update)
			}
		}
	})
	t.Run("idle-without-stopreason", func(t *testing.T) {
		c := serveRaw(t, "", twoWrites(), withFaults("idle-without-stopreason"))
		c.initV2(t)
		ups := c.promptTurn(c.newSession(), "x")
		if last := ups[len(ups)-1]; last.Update["state"] != "idle" || last.Update["stopReason"] != nil {
			t.Errorf("last update %v, want idle without stopReason", last.Update)
		}
	})
	t.Run("new-planid-each-write", func(t *testing.T) {
		c := serveRaw(t, "", twoWrites(), withFaults("new-planid-each-write"))
		c.initV2(t)
		plans := plansOf(c.promptTurn(c.newSession(), "x"))
		if len(plans) != 2 || plans[0]["planId"] == plans[1]["planId"] {
			t.Errorf("plans %v: want two writes under two planIds", plans)
		}
	})
	t.Run("plan-on-v2", func(t *testing.T) {
		c := serveRaw(t, "", twoWrites(), withFaults("plan-on-v2"))
		c.initV2(t)
		c.schema = nil // v1's plan is what is broken; the schema's verdict is the conformance runner's
		kinds := kindsOf(c.promptTurn(c.newSession(), "x"))
		if !contains(kinds, "plan") || contains(kinds, "plan_update") {
			t.Errorf("updates %v: want v1's plan in place of plan_update", kinds)
		}
	})
	t.Run("plan-update-unadvertised", func(t *testing.T) {
		c := serveRaw(t, "", twoWrites(), withFaults("plan-update-unadvertised"))
		_, ups := c.v1Prompt()
		if kinds := kindsOf(ups); !contains(kinds, "plan_update") || contains(kinds, "plan") {
			t.Errorf("updates %v: want plan_update to a client that did not advertise plan", kinds)
		}
	})
	t.Run("v2 faults on v1", func(t *testing.T) {
		c := serveRaw(t, "", twoWrites(), withFaults("no-idle,new-planid-each-write,plan-on-v2"))
		res, ups := c.v1Prompt()
		if kinds := kindsOf(ups); !strings.Contains(string(res), "end_turn") || !contains(kinds, "plan") || contains(kinds, "plan_update") || contains(kinds, "state_update") {
			t.Errorf("v1 under v2 faults: %s %v, want v1 unchanged", res, kinds)
		}
	})
}
