package acp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/todoharness/todoharness/harness/acp"
	"github.com/todoharness/todoharness/harness/acp/acptest"
	"github.com/todoharness/todoharness/harness/builtin"
	"github.com/todoharness/todoharness/harness/session"
)

const cwd = "/tmp/project"

type rig struct {
	t    *testing.T
	dir  string
	conn *acptest.Served
	ctx  context.Context
}

type rigOpt func(*acp.Config)

func withFaults(names string) rigOpt {
	return func(c *acp.Config) {
		fs, err := acp.ParseFaults(names)
		if err != nil {
			panic(err)
		}
		c.Faults = fs
	}
}

func withMaxSteps(n int) rigOpt { return func(c *acp.Config) { c.MaxSteps = n } }

// start serves a fresh bridge over dir (a new temp dir when empty) and
// initializes it.
func start(t *testing.T, dir string, model *fakeModel, opts ...rigOpt) *rig {
	t.Helper()
	r := serve(t, dir, model, opts...)
	if _, err := r.conn.Init(r.ctx); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return r
}

// startUninitialized serves a fresh bridge and sends nothing.
func startUninitialized(t *testing.T, model *fakeModel, opts ...rigOpt) *rig {
	t.Helper()
	return serve(t, "", model, opts...)
}

func serve(t *testing.T, dir string, model *fakeModel, opts ...rigOpt) *rig {
	t.Helper()
	b, dir := bridgeIn(t, dir, model, opts...)
	// The connection's lifetime: it bounds a test that hangs, never one
	// that is slow (the over-long lines take seconds under -race).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	r := &rig{t: t, dir: dir, conn: acptest.Serve(ctx, b), ctx: ctx}
	t.Cleanup(func() {
		r.close()
		cancel()
	})
	return r
}

// bridgeIn makes a bridge over dir (a new temp dir when empty) with the
// shipped tools and model, returning it and its sessions directory.
func bridgeIn(t testing.TB, dir string, model *fakeModel, opts ...rigOpt) (*acp.Bridge, string) {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	reg, err := builtin.Compose("")
	if err != nil {
		t.Fatal(err)
	}
	cfg := acp.Config{Sessions: session.Dir{Path: dir}, Model: model, Tools: reg}
	for _, o := range opts {
		o(&cfg)
	}
	b, err := acp.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return b, dir
}

func (r *rig) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := r.conn.Close(ctx); err != nil {
		r.t.Errorf("close bridge: %v", err)
	}
}

func (r *rig) newSession() string {
	r.t.Helper()
	id, err := r.conn.NewSessionIn(r.ctx, cwd)
	if err != nil {
		r.t.Fatalf("session/new: %v", err)
	}
	return id
}

func (r *rig) prompt(id, text string) sdk.StopReason {
	r.t.Helper()
	sr, err := r.conn.PromptText(r.ctx, id, text)
	if err != nil {
		r.t.Fatalf("session/prompt: %v", err)
	}
	return sr
}

// wireUpdates returns the raw update objects of the session/update lines.
func wireUpdates(lines [][]byte) []map[string]any {
	var out []map[string]any
	for _, l := range lines {
		var m struct {
			Method string `json:"method"`
			Params struct {
				Update map[string]any `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal(l, &m) == nil && m.Method == "session/update" {
			out = append(out, m.Params.Update)
		}
	}
	return out
}

func kindsWithout(kinds []string, drop ...string) []string {
	var out []string
	for _, k := range kinds {
		skip := false
		for _, d := range drop {
			if k == d {
				skip = true
			}
		}
		if !skip {
			out = append(out, k)
		}
	}
	return out
}

func firstOf(ups []map[string]any, kind string) map[string]any {
	for _, u := range ups {
		if u["sessionUpdate"] == kind {
			return u
		}
	}
	return nil
}

func jsonEq(t *testing.T, what string, got any, want string) {
	t.Helper()
	gb, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var g, w any
	if err := json.Unmarshal(gb, &g); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("bad want JSON: %v", err)
	}
	if !reflect.DeepEqual(g, w) {
		t.Errorf("%s:\n got  %s\n want %s", what, gb, want)
	}
}

func threeTodos() map[string]any {
	return todos("read the code", "in_progress", "write the fix", "pending", "run the tests", "pending")
}

func writeThenDone(args any) *fakeModel {
	return newFake(
		fakeTurn{reasoning: "Plan first.", calls: []fakeCall{{id: "call_1", name: "todo_write", args: args}}},
		fakeTurn{text: "DONE"},
	)
}

func TestInitializeAdvertisesLoadSession(t *testing.T) {
	r := start(t, "", newFake())
	lines := r.conn.Wire.Lines()
	if len(lines) != 1 {
		t.Fatalf("want 1 line after initialize, got %d", len(lines))
	}
	var m struct {
		Result struct {
			ProtocolVersion   int            `json:"protocolVersion"`
			AgentCapabilities map[string]any `json:"agentCapabilities"`
			AgentInfo         map[string]any `json:"agentInfo"`
			AuthMethods       []any          `json:"authMethods"`
		} `json:"result"`
	}
	if err := json.Unmarshal(lines[0], &m); err != nil {
		t.Fatal(err)
	}
	if m.Result.ProtocolVersion != 1 {
		t.Errorf("protocolVersion = %d, want 1", m.Result.ProtocolVersion)
	}
	if m.Result.AgentCapabilities["loadSession"] != true {
		t.Errorf("loadSession = %v, want true (%s)", m.Result.AgentCapabilities["loadSession"], lines[0])
	}
	if m.Result.AgentInfo["name"] != "todoharness" || m.Result.AgentInfo["version"] != acp.Version {
		t.Errorf("agentInfo = %v", m.Result.AgentInfo)
	}
	if m.Result.AuthMethods == nil {
		t.Errorf("authMethods missing or null: %s", lines[0])
	}
}

func TestPromptStreamsToolCallPlanToolCallUpdateInOrder(t *testing.T) {
	model := writeThenDone(threeTodos())
	r := start(t, "", model)
	id := r.newSession()
	if sr := r.prompt(id, "plan it"); sr != sdk.StopReasonEndTurn {
		t.Fatalf("stopReason = %q, want end_turn", sr)
	}
	lines := r.conn.Wire.Lines()
	kinds := acptest.UpdateKinds(lines)
	want := []string{
		"agent_thought_chunk", "agent_thought_chunk",
		"tool_call", "plan", "tool_call_update",
		"agent_message_chunk",
	}
	if !reflect.DeepEqual(kinds, want) {
		t.Fatalf("update kinds:\n got  %v\n want %v", kinds, want)
	}
	ups := wireUpdates(lines)
	jsonEq(t, "thoughts", []any{ups[0]["content"], ups[1]["content"]}, `[{"type":"text","text":"Plan"},{"type":"text","text":" first."}]`)
	jsonEq(t, "tool_call", ups[2], `{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"Update todo list","kind":"other","status":"in_progress",
		"rawInput":[{"content":"read the code","status":"in_progress"},{"content":"write the fix","status":"pending"},{"content":"run the tests","status":"pending"}]}`)
	jsonEq(t, "plan", ups[3], `{"sessionUpdate":"plan","entries":[
		{"content":"read the code","priority":"medium","status":"in_progress"},
		{"content":"write the fix","priority":"medium","status":"pending"},
		{"content":"run the tests","priority":"medium","status":"pending"}]}`)
	jsonEq(t, "tool_call_update", ups[4], `{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"completed",
		"content":[{"type":"content","content":{"type":"text","text":"Updated todo list: 2 pending, 1 in progress, 0 completed."}}]}`)
	jsonEq(t, "message", ups[5]["content"], `{"type":"text","text":"DONE"}`)
	// The prompt's response is the last line, after every update.
	var last struct {
		Result struct{ StopReason string } `json:"result"`
	}
	if err := json.Unmarshal(lines[len(lines)-1], &last); err != nil || last.Result.StopReason != "end_turn" {
		t.Errorf("last line is not the end_turn response: %s", lines[len(lines)-1])
	}
	// Every update names the session.
	for _, n := range r.conn.Client.Updates() {
		if string(n.SessionId) != id {
			t.Errorf("update for session %q, want %q", n.SessionId, id)
		}
	}
}

func TestRejectedCallSendsFailedUpdateAndNoPlan(t *testing.T) {
	model := writeThenDone(todos("a", "pending", " a ", "pending"))
	r := start(t, "", model)
	id := r.newSession()
	r.prompt(id, "plan it")
	lines := r.conn.Wire.Lines()
	kinds := kindsWithout(acptest.UpdateKinds(lines), "agent_thought_chunk", "agent_message_chunk")
	if !reflect.DeepEqual(kinds, []string{"tool_call", "tool_call_update"}) {
		t.Fatalf("kinds = %v, want tool_call then tool_call_update and no plan", kinds)
	}
	u := firstOf(wireUpdates(lines), "tool_call_update")
	jsonEq(t, "failed update", u, `{"sessionUpdate":"tool_call_update","toolCallId":"call_1","status":"failed",
		"content":[{"type":"content","content":{"type":"text","text":"Error: invalid todos: duplicate content \"a\""}}]}`)
}

func TestEmptyListSendsEmptyEntriesNeverNull(t *testing.T) {
	r := start(t, "", writeThenDone(todos()))
	id := r.newSession()
	r.prompt(id, "clear it")
	var planLine []byte
	for _, l := range r.conn.Wire.Lines() {
		if bytes.Contains(l, []byte(`"sessionUpdate":"plan"`)) {
			planLine = l
		}
	}
	if planLine == nil {
		t.Fatal("no plan update for an empty list")
	}
	if !bytes.Contains(planLine, []byte(`"entries":[]`)) {
		t.Errorf("plan line does not carry entries: []: %s", planLine)
	}
}

func TestCancelAnswersCancelled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		model := newFake(fakeTurn{reasoning: "thinking", hang: true})
		r := start(t, "", model)
		id := r.newSession()
		done := make(chan sdk.StopReason, 1)
		go func() {
			sr, err := r.conn.PromptText(r.ctx, id, "go")
			if err != nil {
				t.Errorf("prompt: %v", err)
			}
			done <- sr
		}()
		settle(t, "an update before the cancel", func() bool { return len(r.conn.Client.Updates()) > 0 })
		if err := r.conn.Cancel(r.ctx, sdk.CancelNotification{SessionId: sdk.SessionId(id)}); err != nil {
			t.Fatal(err)
		}
		select {
		case sr := <-done:
			if sr != sdk.StopReasonCancelled {
				t.Errorf("stopReason = %q, want cancelled", sr)
			}
		case <-time.After(time.Minute):
			t.Fatal("prompt did not answer after session/cancel")
		}
	})
}

func TestMaxStepsAnswersMaxTurnRequests(t *testing.T) {
	model := newFake(fakeTurn{calls: []fakeCall{{id: "c1", name: "todo_write", args: todos("a", "pending")}}})
	r := start(t, "", model, withMaxSteps(1))
	id := r.newSession()
	if sr := r.prompt(id, "go"); sr != sdk.StopReasonMaxTurnRequests {
		t.Errorf("stopReason = %q, want max_turn_requests", sr)
	}
}

func TestModelErrorAnswersJSONRPCError(t *testing.T) {
	r := start(t, "", newFake(fakeTurn{err: errBoom}))
	id := r.newSession()
	_, err := r.conn.PromptText(r.ctx, id, "go")
	var re *sdk.RequestError
	if !errors.As(err, &re) {
		t.Fatalf("want a JSON-RPC error, got %v", err)
	}
	if re.Code != -32603 || !strings.Contains(re.Message, "model error") || !strings.Contains(re.Message, errBoom.Error()) {
		t.Errorf("error = %d %q, want -32603 naming the model error", re.Code, re.Message)
	}
}

func TestPromptUnknownSession(t *testing.T) {
	r := start(t, "", newFake())
	_, err := r.conn.PromptText(r.ctx, "nope", "go")
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != acp.ErrCodeResourceNotFound {
		t.Errorf("want -32002, got %v", err)
	}
}

func TestLoadReplaysBeforeAnswering(t *testing.T) {
	model := newFake(
		fakeTurn{calls: []fakeCall{{id: "c1", name: "todo_write", args: todos("a", "in_progress", "b", "pending")}}},
		fakeTurn{calls: []fakeCall{{id: "c2", name: "todo_write", args: todos("a", "completed", "b", "in_progress")}}},
		fakeTurn{text: "ok"},
	)
	r := start(t, "", model)
	id := r.newSession()
	r.prompt(id, "first")
	r.close()

	r2 := start(t, r.dir, newFake())
	if err := r2.conn.Load(r2.ctx, id, cwd); err != nil {
		t.Fatalf("session/load: %v", err)
	}
	// The SDK client returns only after handling the notifications that
	// came before the response: the plans are already recorded.
	plans := r2.conn.Client.Plans()
	if len(plans) != 2 {
		t.Fatalf("want 2 plans replayed, got %d", len(plans))
	}
	jsonEq(t, "last plan", plans[1].Entries, `[{"content":"a","priority":"medium","status":"completed"},{"content":"b","priority":"medium","status":"in_progress"}]`)
	lines := r2.conn.Wire.Lines()
	kinds := acptest.UpdateKinds(lines)
	want := []string{"user_message_chunk", "tool_call", "plan", "tool_call_update", "tool_call", "plan", "tool_call_update", "agent_message_chunk"}
	if !reflect.DeepEqual(kinds, want) {
		t.Errorf("replayed kinds:\n got  %v\n want %v", kinds, want)
	}
	last := lines[len(lines)-1]
	if !bytes.Contains(last, []byte(`"result":{}`)) {
		t.Errorf("the load response is not the last line: %s", last)
	}
}

func TestLoadUnknownSessionSaysNotFound(t *testing.T) {
	r := start(t, "", newFake())
	err := r.conn.Load(r.ctx, "no-such-session", cwd)
	var re *sdk.RequestError
	if !errors.As(err, &re) {
		t.Fatalf("want a JSON-RPC error, got %v", err)
	}
	if re.Code != acp.ErrCodeResourceNotFound || !strings.Contains(re.Message, "session not found") || !strings.Contains(re.Message, "no-such-session") {
		t.Errorf("error = %d %q", re.Code, re.Message)
	}
}

func TestLoadBrokenLogNamesLineAndReason(t *testing.T) {
	dir := t.TempDir()
	log := `{"type":"session","version":0,"id":"broken","createdAt":1}
{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"trigger":{"kind":"message"}}}
{"type":"step/end","seq":1,"time":1,"data":{"turn":1,"step":7}}
`
	if err := os.WriteFile(filepath.Join(dir, "broken.jsonl"), []byte(log), 0o644); err != nil {
		t.Fatal(err)
	}
	r := start(t, dir, newFake())
	err := r.conn.Load(r.ctx, "broken", cwd)
	var re *sdk.RequestError
	if !errors.As(err, &re) {
		t.Fatalf("want a JSON-RPC error, got %v", err)
	}
	if !strings.Contains(re.Message, "line 3") || !strings.Contains(re.Message, "step/end") {
		t.Errorf("error does not name the line and the reason: %q", re.Message)
	}
}

func TestMalformedInputGetsErrorAndAgentKeepsServing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := start(t, "", newFake())
		for _, raw := range []string{`this is not json`, `[1,2,3]`, `{"jsonrpc":"2.0","id":7,"method":42}`} {
			if err := r.conn.WriteRaw(raw); err != nil {
				t.Fatal(err)
			}
		}
		settle(t, "three answers", func() bool { return r.conn.Wire.Len() >= 4 })
		lines := r.conn.Wire.Lines()[1:4]
		wantCodes := []int{-32700, -32600, -32600}
		wantIDs := []string{"null", "null", "7"}
		for i, l := range lines {
			var m struct {
				ID    json.RawMessage `json:"id"`
				Error struct{ Code int }
			}
			if err := json.Unmarshal(l, &m); err != nil {
				t.Fatal(err)
			}
			if m.Error.Code != wantCodes[i] || string(m.ID) != wantIDs[i] {
				t.Errorf("answer %d = %s, want code %d id %s", i, l, wantCodes[i], wantIDs[i])
			}
		}
		// Still serving.
		if _, err := r.conn.NewSessionIn(r.ctx, cwd); err != nil {
			t.Errorf("session/new after malformed input: %v", err)
		}
	})
}

func TestSessionLogRecordsCwdAndPersists(t *testing.T) {
	r := start(t, "", writeThenDone(threeTodos()))
	id := r.newSession()
	r.prompt(id, "go")
	r.close()
	ld, err := session.LoadFile(filepath.Join(r.dir, id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if ld.Header.Cwd != cwd || ld.Header.ID != id {
		t.Errorf("header = %+v", ld.Header)
	}
	todos, ok := session.CurrentTodos(ld.Events)
	if !ok || len(todos) != 3 {
		t.Errorf("current todos = %v %v", todos, ok)
	}
}

// settle returns, in a synctest bubble, once every goroutine of the test
// is blocked (the bridge has done all it will do with what it was sent),
// and fails the test unless cond holds then.
func settle(t *testing.T, what string, cond func() bool) {
	t.Helper()
	synctest.Wait()
	if !cond() {
		t.Fatalf("the bridge went idle without %s", what)
	}
}

// waitFor waits for cond, polling what a real process (the agent child)
// sent: no fake clock reaches it. It fails the test after a minute.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute) // a failure bound, not a measurement
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("timed out waiting")
		}
		time.Sleep(5 * time.Millisecond) // polling a real process
	}
}

var _ = atomic.Int32{}
