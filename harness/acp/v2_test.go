package acp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/todoharness/todoharness/harness/acp"
	"github.com/todoharness/todoharness/harness/acp/acptest"
)

// schemaFile is one of ACP's schemas the repository keeps in
// fixtures/acp-schema (see its README for source, version and licence):
// "v2/schema.json", "v1/schema.unstable.json".
func schemaFile(t testing.TB, name string) *acptest.Schema {
	t.Helper()
	s, err := acptest.LoadSchema(filepath.Join("..", "..", "fixtures", "acp-schema", filepath.FromSlash(name)))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type update = acptest.Update

// v2client is acptest.RawConn failing the test on an error; on a v2
// connection (initV2) every line the agent sends is checked against the
// v2 schema.
type v2client struct {
	t    testing.TB
	ctx  context.Context
	conn *acptest.RawConn
}

func serveRaw(t testing.TB, dir string, model *fakeModel, opts ...rigOpt) *v2client {
	t.Helper()
	b, _ := bridgeIn(t, dir, model, opts...)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	c := &v2client{t: t, ctx: ctx, conn: acptest.ServeRaw(ctx, b)}
	t.Cleanup(func() {
		c.close()
		cancel()
	})
	return c
}

// close ends the input and waits for the bridge to stop.
func (c *v2client) close() {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := c.conn.Close(ctx); err != nil {
		c.t.Errorf("close: %v", err)
	}
}

func (c *v2client) send(v any) {
	c.t.Helper()
	if err := c.conn.Send(v); err != nil {
		c.t.Fatal(err)
	}
}

func (c *v2client) until(stop func(acptest.Msg) bool) []update {
	c.t.Helper()
	ups, err := c.conn.Until(c.ctx, stop)
	if err != nil {
		c.t.Fatal(err)
	}
	return ups
}

func (c *v2client) call(method string, params any) (acptest.Msg, []update) {
	c.t.Helper()
	resp, ups, err := c.conn.Call(c.ctx, method, params)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp, ups
}

func (c *v2client) mustCall(method string, params any) (json.RawMessage, []update) {
	c.t.Helper()
	res, ups, err := c.conn.Result(c.ctx, method, params)
	if err != nil {
		c.t.Fatal(err)
	}
	return res, ups
}

// initV2 initializes the connection offering version 2, checking every
// line from then on against the v2 schema.
func (c *v2client) initV2(t testing.TB) json.RawMessage {
	t.Helper()
	c.conn.Check = schemaFile(t, "v2/schema.json").CheckV2
	res, err := c.conn.InitV2(c.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func (c *v2client) newSession() string {
	c.t.Helper()
	id, err := c.conn.NewSession(c.ctx, cwd)
	if err != nil {
		c.t.Fatal(err)
	}
	return id
}

// v1Prompt initializes a v1 connection (no client capability), makes a
// session and prompts it, returning the answer and the turn's updates.
func (c *v2client) v1Prompt() (json.RawMessage, []update) {
	c.t.Helper()
	c.mustCall("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	return c.mustCall("session/prompt", acptest.TextPrompt(c.newSession(), "x"))
}

// promptTurn sends a prompt, checks its answer is the empty
// acknowledgment with no update before it, and returns the turn's updates
// to its idle state_update.
func (c *v2client) promptTurn(sid, text string) []update {
	c.t.Helper()
	res, before := c.mustCall("session/prompt", acptest.TextPrompt(sid, text))
	if string(res) != "{}" {
		c.t.Errorf("session/prompt result = %s, want {} (v2's answer only acknowledges)", res)
	}
	if len(before) != 0 {
		c.t.Errorf("%d updates before the prompt's answer, want none: %v", len(before), before)
	}
	return c.until(acptest.Msg.IsIdle)
}

func kindsOf(ups []update) []string {
	out := make([]string, 0, len(ups))
	for _, u := range ups {
		out = append(out, u.Kind())
	}
	return out
}

func plansOf(ups []update) []map[string]any {
	var out []map[string]any
	for _, u := range ups {
		if u.Kind() == "plan_update" {
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
			c.conn.Check = schemaFile(t, "v2/schema.json").CheckV2
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
		if u.Kind() != "tool_call_update" {
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
		if k := u.Kind(); strings.HasSuffix(k, "_chunk") && u.Update["messageId"] == nil {
			t.Errorf("%s without messageId: %v", k, u.Update)
		}
	}
	// Every update line is its own sorted-key encoding, as the SDK's v1
	// updates are: a scrubbed recording re-encodes lines that way.
	for _, l := range c.conn.Lines() {
		if !bytes.Contains(l, []byte(`"method":"session/update"`)) {
			continue
		}
		var v any
		if err := json.Unmarshal(l, &v); err != nil {
			t.Fatal(err)
		}
		if sorted, _ := json.Marshal(v); !bytes.Equal(sorted, l) {
			t.Errorf("update line not in sorted-key order:\n got %s\nwant %s", l, sorted)
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
	c.until(func(m acptest.Msg) bool {
		u, ok, _ := m.AsUpdate()
		return ok && u.Kind() == "agent_thought_chunk"
	})
	c.send(map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": sid}})
	ups := c.until(acptest.Msg.IsIdle)
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
	long := "_" + strings.Repeat("x", 10000)
	if resp, _ := c.call("session/resume", map[string]any{"sessionId": "s", "cwd": cwd, "replayFrom": map[string]any{"type": long}}); resp.Error == nil || len(resp.Error) > 1000 || !strings.Contains(string(resp.Error), "_xxx") {
		t.Errorf("a 10 kB replay cursor type answered %d bytes: %.200s, want -32602 naming it, cut", len(resp.Error), resp.Error)
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
	v1unstable := schemaFile(t, "v1/schema.unstable.json")
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
			for _, l := range c.conn.Lines() {
				var m acptest.Msg
				if err := json.Unmarshal(l, &m); err != nil {
					t.Fatal(err)
				}
				if u, ok, _ := m.AsUpdate(); ok && u.Kind() == "plan_update" {
					if err := v1unstable.Validate("SessionNotification", m.Params); err != nil {
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
		c.conn.Check = nil // v1's plan is what is broken; the schema's verdict is the conformance runner's
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

// The v2 schema check the tests rely on can fail: it rejects what v1 sends
// where v2 differs.
func TestV2SchemaCheckRejectsV1Shapes(t *testing.T) {
	s := schemaFile(t, "v2/schema.json")
	for name, m := range map[string]acptest.Msg{
		"chunk without messageId":    {Method: "session/update", Params: json.RawMessage(`{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"x"}}}`)},
		"plan_update without planId": {Method: "session/update", Params: json.RawMessage(`{"sessionId":"s","update":{"sessionUpdate":"plan_update","plan":{"type":"items","entries":[]}}}`)},
		"v1 initialize answer":       {Answers: "initialize", Result: json.RawMessage(`{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}`)},
		"a request":                  {Method: "fs/read_text_file", Params: json.RawMessage(`{}`)},
	} {
		if err := s.CheckV2(m); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	ok := acptest.Msg{Method: "session/update", Params: json.RawMessage(`{"sessionId":"s","update":{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}`)}
	if err := s.CheckV2(ok); err != nil {
		t.Errorf("idle end_turn: %v", err)
	}
}

// The first initialize decides the connection's version: a later one
// offering 2 leaves a v1 connection v1, and an initialize whose version is
// not a number is the SDK's to answer, as before.
func TestV2NegotiationIsTheFirstInitializes(t *testing.T) {
	c := serveRaw(t, "", newFake(fakeTurn{text: "hello"}))
	c.mustCall("initialize", map[string]any{"protocolVersion": 1, "clientCapabilities": map[string]any{}})
	res, _ := c.mustCall("initialize", map[string]any{"protocolVersion": 2, "info": map[string]any{"name": "t", "version": "0"}})
	if !strings.Contains(string(res), `"protocolVersion":1`) {
		t.Errorf("a second initialize offering 2 on a v1 connection answered %s, want v1's", res)
	}
	if _, ups := c.v1Prompt(); contains(kindsOf(ups), "state_update") {
		t.Errorf("a v1 connection sent v2's state_update: %v", kindsOf(ups))
	}

	c2 := serveRaw(t, "", newFake())
	resp, _ := c2.call("initialize", map[string]any{"protocolVersion": "2"})
	if strings.Contains(string(resp.Result), `"protocolVersion":2`) {
		t.Errorf("a string version got v2: %s", resp.Result)
	}
	c2.initV2(t)
	if _, err := c2.conn.NewSession(c2.ctx, cwd); err != nil {
		t.Errorf("after a refused initialize, v2 was not negotiated: %v", err)
	}
}

// session/close cancels the running turn (its idle says cancelled), and a
// prompt queued behind it is refused as not found, not left waiting.
func TestV2CloseEndsTheTurnAndRefusesTheQueue(t *testing.T) {
	c := serveRaw(t, "", newFake(fakeTurn{reasoning: "thinking", hang: true}))
	c.initV2(t)
	sid := c.newSession()
	c.mustCall("session/prompt", acptest.TextPrompt(sid, "first"))
	c.until(func(m acptest.Msg) bool {
		u, ok, _ := m.AsUpdate()
		return ok && u.Kind() == "agent_thought_chunk"
	})
	queued, err := c.conn.Request("session/prompt", acptest.TextPrompt(sid, "second"))
	if err != nil {
		t.Fatal(err)
	}
	resp, ups := c.call("session/close", map[string]any{"sessionId": sid})
	if resp.Error != nil {
		t.Fatalf("close: %s", resp.Error)
	}
	if last := ups[len(ups)-1]; last.Update["state"] != "idle" || last.Update["stopReason"] != "cancelled" {
		t.Errorf("before the close's answer: %v, want the turn's idle cancelled last", kindsOf(ups))
	}
	// The queued prompt's answer may come before the close's or after it.
	answered := func() (acptest.Msg, bool) {
		for _, l := range c.conn.Lines() {
			var m acptest.Msg
			if json.Unmarshal(l, &m) == nil && m.Method == "" && string(m.ID) == queued {
				return m, true
			}
		}
		return acptest.Msg{}, false
	}
	if _, ok := answered(); !ok {
		c.until(func(m acptest.Msg) bool { return m.Method == "" && string(m.ID) == queued })
	}
	if m, _ := answered(); !strings.Contains(string(m.Error), "-32002") {
		t.Errorf("the queued prompt answered %s %s, want -32002 (the session was closed)", m.Result, m.Error)
	}
}
