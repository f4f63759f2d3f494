package snapshot_test

import (
	"context"
	"encoding/json"
	"encoding/xml"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/todoharness/todoharness/cmd/todoharness/cli"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/driver/acpnorm"
	"github.com/todoharness/todoharness/internal/testutil"
	"github.com/todoharness/todoharness/internal/testutil/selfexec"
	. "github.com/todoharness/todoharness/snapshot"
)

func TestMain(m *testing.M) {
	selfexec.Main(m, selfexec.Programs{"todoharness": cli.Main})
}

// referenceAgent is the reference agent (this test binary running
// todoharness, see selfexec) as a target, with extra agent flags.
func referenceAgent(t *testing.T, extra ...string) driver.Target {
	t.Helper()
	argv := append([]string{selfexec.Path(), "agent", "--model-url", "{{.BaseURL}}", "--sessions", "{{.Home}}/sessions"}, extra...)
	return driver.Target{Name: "reference", Command: argv, Env: selfexec.Environ("todoharness")}
}

// parallelAgent is the reference agent with allowParallelInProgress set,
// its composition written into the working directory as --file does and
// named by a templated argument.
func parallelAgent(t *testing.T) driver.Target {
	a := referenceAgent(t, "--composition", "{{.Cwd}}/parallel.yaml")
	a.Files = []driver.File{{Dest: "parallel.yaml", Src: "test",
		Content: "plugins:\n  - name: todo\n    config:\n      allowParallelInProgress: true\n"}}
	return a
}

func fixture(name string) string {
	return filepath.Join(testutil.RepoRoot(), "fixtures", "interop", "deepseek-harness", name)
}

func run(t *testing.T, dir string, agent driver.Target, update bool) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	return Run(ctx, dir, Options{Agent: agent, Timeout: 30 * time.Second, Grace: 2 * time.Second, Update: update})
}

// obj parses one canonical line.
func obj(t *testing.T, line string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("%v: %s", err, line)
	}
	return m
}

func updateKind(m map[string]any) string {
	p, _ := m["params"].(map[string]any)
	u, _ := p["update"].(map[string]any)
	k, _ := u["sessionUpdate"].(string)
	return k
}

// sameInitialize: the two initialize answers differ only in the documented
// agentInfo and agentCapabilities.
func sameInitialize(t *testing.T, want, got string) {
	t.Helper()
	w, g := obj(t, want), obj(t, got)
	for _, m := range []map[string]any{w, g} {
		r := m["result"].(map[string]any)
		delete(r, "agentInfo")
		delete(r, "agentCapabilities")
	}
	wb, _ := json.Marshal(w)
	gb, _ := json.Marshal(g)
	if string(wb) != string(gb) {
		t.Errorf("the initialize answers differ beyond agentInfo and agentCapabilities:\nwant %s\n got %s", want, got)
	}
	if info := obj(t, got)["result"].(map[string]any)["agentInfo"].(map[string]any); info["name"] != "todoharness" {
		t.Errorf("agentInfo %v, want todoharness's", info)
	}
}

// expectedAndOurs reads the expected file and the agent's stdout of a
// result as canonical lines.
func expectedAndOurs(t *testing.T, res *Result) (want, got []string) {
	t.Helper()
	data, err := os.ReadFile(res.Expected)
	if err != nil {
		t.Fatal(err)
	}
	if want, err = acpnorm.Canonical(data, res.Expected); err != nil {
		t.Fatal(err)
	}
	if got, err = acpnorm.Canonical([]byte(res.Stdout), "stdout"); err != nil {
		t.Fatal(err)
	}
	return want, got
}

// todo-plan was recorded at the RFC commit, whose bridge streamed thought
// and message chunks, tool_call, plan and tool_call_update as ours does:
// the documented difference is the initialize answer, and nothing else.
func TestTodoPlanDiffersOnlyInTheInitializeAnswer(t *testing.T) {
	res := run(t, fixture("todo-plan"), referenceAgent(t), false)
	if res.Status != Fail {
		t.Fatalf("status %s (%s), want fail on the initialize answer; notes %q", res.Status, res.Reason, res.Notes)
	}
	if len(res.Notes) != 0 {
		t.Errorf("notes %q, want none (every rebuilt answer asked for, the agent exited cleanly)", res.Notes)
	}
	want, got := expectedAndOurs(t, res)
	if len(want) != len(got) {
		t.Fatalf("%d lines, want %d:\n%s", len(got), len(want), res.Diff)
	}
	sameInitialize(t, want[0], got[0])
	for i := 1; i < len(want); i++ {
		if want[i] != got[i] {
			t.Errorf("line %d differs (only the initialize answer may):\nwant %s\n got %s", i+1, want[i], got[i])
		}
	}
	if !strings.Contains(res.Diff, "--- stdout.golden.jsonl (expected)") || !strings.Contains(res.Diff, `+{"id":1,`) {
		t.Errorf("diff %q, want a unified diff of the initialize answer", res.Diff)
	}
}

// headBridgeView is what the original's bridge at HEAD sends of a stdout
// like ours (docs/snapshots.md): no agent_thought_chunk, tool_call,
// tool_call_update or plan updates, and each agent message as one
// agent_message_chunk (the consecutive chunks joined). dropped are the
// updates it leaves out.
func headBridgeView(t *testing.T, lines []string) (kept []string, dropped []map[string]any) {
	t.Helper()
	var text *strings.Builder
	var msg map[string]any
	flush := func() {
		if msg == nil {
			return
		}
		msg["params"].(map[string]any)["update"].(map[string]any)["content"].(map[string]any)["text"] = text.String()
		b, _ := json.Marshal(msg)
		c, err := acpnorm.Canonical(b, "joined")
		if err != nil {
			t.Fatal(err)
		}
		kept = append(kept, c[0])
		msg, text = nil, nil
	}
	for _, l := range lines {
		m := obj(t, l)
		switch updateKind(m) {
		case "agent_thought_chunk", "tool_call", "tool_call_update", "plan":
			dropped = append(dropped, m)
			continue
		case "agent_message_chunk":
			chunk := m["params"].(map[string]any)["update"].(map[string]any)["content"].(map[string]any)["text"].(string)
			if msg == nil {
				msg, text = m, &strings.Builder{}
			}
			text.WriteString(chunk)
			continue
		}
		flush()
		kept = append(kept, l)
	}
	flush()
	return kept, dropped
}

// assertHEADView: the expected stdout is exactly the HEAD bridge's view of
// ours, the initialize answer aside; it returns what that view drops.
func assertHEADView(t *testing.T, res *Result) []map[string]any {
	t.Helper()
	if res.Status != Fail {
		t.Fatalf("status %s (%s), want fail on the documented differences; notes %q", res.Status, res.Reason, res.Notes)
	}
	want, got := expectedAndOurs(t, res)
	view, dropped := headBridgeView(t, got)
	if len(view) != len(want) {
		t.Fatalf("HEAD's view of our stdout has %d lines, the expected file %d:\n%s", len(view), len(want), strings.Join(view, "\n"))
	}
	sameInitialize(t, want[0], view[0])
	for i := 1; i < len(want); i++ {
		if want[i] != view[i] {
			t.Errorf("line %d differs beyond the documented differences:\nwant %s\n got %s", i+1, want[i], view[i])
		}
	}
	return dropped
}

func kinds(dropped []map[string]any) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for _, m := range dropped {
		k := updateKind(m)
		out[k] = append(out[k], m["params"].(map[string]any)["update"].(map[string]any))
	}
	return out
}

// head-todo-write: two tasks in_progress (the original's default allows
// parallel work). The parallel reference agent accepts the call and shows
// the plan HEAD's bridge dropped; the shipped one (single) refuses it and
// shows none. The text the model answered is the same either way.
func TestHeadTodoWriteDiffersOnlyAsDocumented(t *testing.T) {
	dir := fixture("head-todo-write")
	t.Run("parallel", func(t *testing.T) {
		k := kinds(assertHEADView(t, run(t, dir, parallelAgent(t), false)))
		if len(k["plan"]) != 1 {
			t.Fatalf("%d plan updates, want the one HEAD's bridge dropped", len(k["plan"]))
		}
		entries, _ := json.Marshal(k["plan"][0]["entries"])
		want := `[{"content":"read the code","priority":"medium","status":"in_progress"},{"content":"watch the background build","priority":"medium","status":"in_progress"},{"content":"write the fix","priority":"medium","status":"pending"}]`
		if string(entries) != want {
			t.Errorf("plan entries %s, want %s", entries, want)
		}
		if u := k["tool_call_update"]; len(u) != 1 || u[0]["status"] != "completed" {
			t.Errorf("tool_call_update %v, want one completed", u)
		}
	})
	t.Run("single", func(t *testing.T) {
		k := kinds(assertHEADView(t, run(t, dir, referenceAgent(t), false)))
		if len(k["plan"]) != 0 {
			t.Errorf("plan updates %v, want none: the shipped policy refuses two in_progress tasks", k["plan"])
		}
		u := k["tool_call_update"]
		if len(u) != 1 || u[0]["status"] != "failed" || !strings.Contains(fmt.Sprint(u[0]["content"]), "at most one task may be in_progress, got 2") {
			t.Errorf("tool_call_update %v, want one failed, naming the rule", u)
		}
	})
}

// head-packed-chunks: the model calls bash, a tool the reference agent
// does not have: the call fails with "unknown tool" where the original's
// hook blocked it, and the model's recorded answer is served anyway.
func TestHeadPackedChunksDiffersOnlyAsDocumented(t *testing.T) {
	dir := fixture("head-packed-chunks")
	k := kinds(assertHEADView(t, run(t, dir, referenceAgent(t), false)))
	if c := k["tool_call"]; len(c) != 1 || c[0]["title"] != "bash" {
		t.Errorf("tool_call %v, want the one bash call", c)
	}
	if u := k["tool_call_update"]; len(u) != 1 || u[0]["status"] != "failed" || !strings.Contains(fmt.Sprint(u[0]["content"]), `unknown tool "bash"`) {
		t.Errorf("tool_call_update %v, want one failed: unknown tool", u)
	}
	if len(k["plan"]) != 0 {
		t.Errorf("plan updates %v, want none", k["plan"])
	}
}

// copyScenario copies a fixture folder (input.json, logs) without its
// expected stdout.
func copyScenario(t *testing.T, name string) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"input.json", SessionFile} {
		data, err := os.ReadFile(filepath.Join(fixture(name), f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// --update writes stdout.expected.jsonl; the next run then passes.
func TestUpdateWritesTheExpectedFileThenPasses(t *testing.T) {
	dir := copyScenario(t, "todo-plan")
	if res := run(t, dir, referenceAgent(t), false); res.Status != Error || !strings.Contains(res.Reason, "--update writes stdout.expected.jsonl") {
		t.Fatalf("without an expected file: %s (%s), want could-not-run pointing at --update", res.Status, res.Reason)
	}
	res := run(t, dir, referenceAgent(t), true)
	if res.Status != Updated || res.Expected != filepath.Join(dir, ExpectedFile) {
		t.Fatalf("update: %s %s (%s)", res.Status, res.Expected, res.Reason)
	}
	data, err := os.ReadFile(res.Expected)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), `{"jsonrpc":"2.0","id":1,"result":{`) || !strings.Contains(string(data), `"sessionUpdate":"plan"`) {
		t.Fatalf("written file:\n%s", data)
	}
	if res := run(t, dir, referenceAgent(t), false); res.Status != Pass {
		t.Fatalf("rerun: %s (%s)\n%s", res.Status, res.Reason, res.Diff)
	}
}

// A run that cannot happen says why; the report and the JUnit file carry
// each verdict.
func TestCouldNotRunAndReports(t *testing.T) {
	noLog := t.TempDir()
	if err := os.WriteFile(filepath.Join(noLog, "input.json"), []byte(`{"steps":[{"op":"initialize"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	broken := driver.Target{Name: "missing", Command: []string{filepath.Join(t.TempDir(), "no-such-agent")}}
	r1 := run(t, noLog, broken, false)
	r2 := run(t, fixture("todo-plan"), broken, false)
	r3 := run(t, fixture("todo-plan"), referenceAgent(t), false)
	if r1.Status != Error || !strings.Contains(r1.Reason, "no session.jsonl") {
		t.Errorf("no log: %s (%s)", r1.Status, r1.Reason)
	}
	if r2.Status != Error || !strings.Contains(r2.Reason, "start the agent") {
		t.Errorf("no agent: %s (%s)", r2.Status, r2.Reason)
	}
	rep := &Report{Agent: "test", Results: []*Result{r1, r2, r3}}
	if rep.OK() {
		t.Error("a report with failures is OK")
	}
	var text strings.Builder
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"COULD NOT RUN " + filepath.Base(noLog), "FAIL todo-plan", "  --- stdout.golden.jsonl (expected)", "3 scenario(s) against test: 0 pass, 1 fail, 2 could not run"} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("report lacks %q:\n%s", want, text.String())
		}
	}
	var junit strings.Builder
	if err := rep.WriteJUnit(&junit); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
			Errors   int `xml:"errors,attr"`
			Cases    []struct {
				Name    string `xml:"name,attr"`
				Failure *struct {
					Body string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(junit.String()), &doc); err != nil {
		t.Fatalf("%v\n%s", err, junit.String())
	}
	s := doc.Suites[0]
	if s.Tests != 3 || s.Failures != 1 || s.Errors != 2 || s.Cases[2].Failure == nil || !strings.Contains(s.Cases[2].Failure.Body, "+++ stdout") {
		t.Errorf("JUnit %+v", s)
	}
}
