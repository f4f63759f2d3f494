package conformance

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoharness/todoharness/conformance/breakage"
	"github.com/todoharness/todoharness/driver"
	conformancefixtures "github.com/todoharness/todoharness/fixtures/conformance"
	"github.com/todoharness/todoharness/harness/llm"
)

func builtinCases(t *testing.T) []*Case {
	t.Helper()
	cs, err := LoadCases(conformancefixtures.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	return cs
}

// sharedValidator is compiled once for the package's runs.
func sharedValidator(t *testing.T) *driver.SchemaValidator {
	t.Helper()
	validatorOnce.Do(func() { validatorVal, validatorErr = driver.NewSchemaValidator() })
	if validatorErr != nil {
		t.Fatal(validatorErr)
	}
	return validatorVal
}

var (
	validatorOnce sync.Once
	validatorVal  *driver.SchemaValidator
	validatorErr  error
)

// testSettle is the settle window of the runner tests: short, since the
// settle waits for the model turns an agent still has coming whatever the
// window (see caseRun.settle).
const testSettle = 50 * time.Millisecond

func runFake(t *testing.T, mode string, mod func(*Config)) *Report {
	t.Helper()
	cfg := Config{Agent: fakeTarget(t, mode), Cases: builtinCases(t), Timeout: time.Minute, Grace: 2 * time.Second, Parallel: runtime.NumCPU(), Validator: Compiled(sharedValidator(t)),
		Settle: testSettle}
	if mod != nil {
		mod(&cfg)
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// dumpFailures logs the checks that did not pass and the cases that did
// not complete (the summary is package report's).
func dumpFailures(t *testing.T, rep *Report) {
	t.Helper()
	for _, c := range rep.Checks {
		if c.Outcome != Pass && c.Outcome != NA {
			t.Logf("%s (%s): %s %s", c.ID, c.Level, c.Outcome, c.Reason)
		}
	}
	for _, c := range rep.Cases {
		if c.Error != "" {
			t.Logf("case %s: %s; stderr: %v", c.ID, c.Error, c.StderrTail)
		}
	}
}

func TestRunFakeAgentPasses(t *testing.T) {
	t.Parallel()
	var progress bytes.Buffer
	rep := runFake(t, "ok", func(c *Config) { c.Progress, c.Parallel = &progress, len(c.Cases) })
	// The progress lines are numbered in the order they are printed.
	lines := strings.Split(strings.TrimSpace(progress.String()), "\n")
	for i, l := range lines {
		if want := fmt.Sprintf("[%2d/%d] ", i+1, len(rep.Cases)); !strings.HasPrefix(l, want) {
			t.Errorf("progress line %d is %q, want it to start %q", i+1, l, want)
		}
	}
	if len(lines) != len(rep.Cases) {
		t.Errorf("%d progress lines for %d cases:\n%s", len(lines), len(rep.Cases), progress.String())
	}
	if !rep.OK || len(rep.FailedIDs()) > 0 {
		dumpFailures(t, rep)
		t.Fatalf("failed: %v", rep.FailedIDs())
	}
	if rep.Dialect != driver.DialectTodoWrite || rep.DialectSource != "detected" {
		t.Errorf("dialect %s (%s)", rep.Dialect, rep.DialectSource)
	}
	for _, c := range rep.Checks {
		// A process and a session per case: no session shares a
		// process, a Shared check applies to none.
		if c.Outcome != Pass && !(c.Shared && c.Outcome == NA) {
			t.Errorf("%s: %s %s", c.ID, c.Outcome, c.Reason)
		}
	}
	if len(rep.Checks) != len(Catalogue()) {
		t.Errorf("%d checks judged, catalogue has %d", len(rep.Checks), len(Catalogue()))
	}
}

// Each breakage of the fake agent must fail exactly the checks the registry
// (conformance/breakage) lists, with a process per case and with pooled
// agent processes; the ones that fail RUN-1 are run by
// TestRunBrokenAgents, with a short timeout. With $TODOHARNESS_POOL_TABLE
// set, the rows of both modes are written to fake.md in that folder
// (scripts/pool-table.sh).
func TestRunFakeAgentFaults(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	rows := map[string]*breakage.PoolRow{}
	t.Cleanup(func() { writePoolTable(t, "fake.md", breakage.In(breakage.Fake), rows) })
	for _, b := range breakage.In(breakage.Fake) {
		if b.FailsCheck("RUN-1") {
			continue
		}
		mu.Lock()
		rows[b.Name] = &breakage.PoolRow{Breakage: b}
		mu.Unlock()
		for _, pool := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/pool=%v", b.Name, pool), func(t *testing.T) {
				t.Parallel()
				rep := runFake(t, b.Name, func(c *Config) { c.Pool, c.Offer.ACPVersion = pool, b.ACPVersion })
				got := rep.FailedIDs()
				mu.Lock()
				if pool {
					rows[b.Name].On, rows[b.Name].Cases, rows[b.Name].Alone = got, len(rep.Cases), ranAlone(rep)
				} else {
					rows[b.Name].Off = got
				}
				mu.Unlock()
				if !reflect.DeepEqual(got, b.Fails) {
					dumpFailures(t, rep)
					t.Fatalf("pool %v: failed %v, want %v (%s)", pool, got, b.Fails, b.Why)
				}
			})
		}
	}
}

// ranAlone counts the cases of rep that failed in a pooled process and
// ran again alone.
func ranAlone(rep *Report) int {
	n := 0
	for _, c := range rep.Cases {
		if ev := c.Evidence(); ev != nil && ev.PooledFailure != nil {
			n++
		}
	}
	return n
}

// writePoolTable writes the rows of bs found in rows (in bs's order) as
// breakage.PoolTable to name in the folder $TODOHARNESS_POOL_TABLE names
// (nothing when it is unset).
func writePoolTable(t *testing.T, name string, bs []breakage.Breakage, rows map[string]*breakage.PoolRow) {
	dir := os.Getenv("TODOHARNESS_POOL_TABLE")
	if dir == "" {
		return
	}
	var out []breakage.PoolRow
	for _, b := range bs {
		if r := rows[b.Name]; r != nil {
			out = append(out, *r)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, name), []byte(breakage.PoolTable(out)), 0o644); err != nil {
		t.Error(err)
	}
}

// Load is part of the contract: an agent that does not advertise
// loadSession fails the load checks, saying what to do.
func TestRunNoLoadFailsLoadChecks(t *testing.T) {
	t.Parallel()
	rep := runFake(t, "no-load", nil)
	for _, id := range []string{"TW-LOAD-1", "TW-LOAD-2"} {
		c, _ := rep.Check(id)
		if c.Outcome != Fail || !strings.Contains(c.Reason, "does not advertise agentCapabilities.loadSession; the spec makes the plan durable across session/load") {
			t.Errorf("%s: %s %q, want a failure naming loadSession", id, c.Outcome, c.Reason)
		}
	}
	if rep.OK || rep.Verdict != VerdictFail {
		t.Errorf("verdict %s: an agent that cannot load passed", rep.Verdict)
	}
}

// A request answered with a JSON-RPC error fails the checks that needed
// it, quoting the error; RUN-1 is for hung, crashing and protocol-breaking
// agents only.
func TestRunErrorAnswerFailsTheCheckThatNeededIt(t *testing.T) {
	t.Parallel()
	rep := runFake(t, "load-error", nil)
	for _, id := range []string{"TW-LOAD-1", "TW-LOAD-2"} {
		c, _ := rep.Check(id)
		if c.Outcome != Fail || !strings.Contains(c.Reason, "session/load was answered with an error: JSON-RPC error -32603: cannot load: no such session") {
			t.Errorf("%s: %s %q, want a failure quoting the error", id, c.Outcome, c.Reason)
		}
	}
	if c, _ := rep.Check("RUN-1"); c.Outcome != Pass {
		t.Errorf("RUN-1: %s %q: an error answer is no hang or crash", c.Outcome, c.Reason)
	}
	if got, want := rep.FailedIDs(), []string{"TW-LOAD-1", "TW-LOAD-2"}; !reflect.DeepEqual(got, want) {
		dumpFailures(t, rep)
		t.Errorf("failed %v, want %v", got, want)
	}
	// A prompt answered with an error: the checks its writes feed could
	// not be judged, and fail saying why.
	rep = runFake(t, "prompt-error", func(c *Config) { c.Cases = oneCase(t, "reject-duplicate") })
	c, _ := rep.Check("TW-VALID-DUP")
	if c.Outcome != Fail || !strings.Contains(c.Reason, "step 3 (prompt) was answered with JSON-RPC error -32000: rate limited, try later") {
		t.Errorf("TW-VALID-DUP: %s %q", c.Outcome, c.Reason)
	}
	if c, _ := rep.Check("RUN-1"); c.Outcome != Pass {
		t.Errorf("RUN-1: %s %q", c.Outcome, c.Reason)
	}
}

func TestRunForcedDialect(t *testing.T) {
	t.Parallel()
	// The fake speaks todo_write; forced to codex, the mock calls
	// update_plan, the fake still executes it as a todo write (it ignores
	// names) but the translated arguments ({plan: [{step, status}]}) hold
	// no todos: the todo_write-only checks are n/a.
	rep := runFake(t, "ok", func(c *Config) { c.Dialect = "codex" })
	if rep.Dialect != driver.DialectCodex || rep.DialectSource != "forced" {
		t.Fatalf("dialect %s (%s)", rep.Dialect, rep.DialectSource)
	}
	for _, id := range []string{"TW-SCHEMA-1", "TW-VALID-DUP", "TW-COUNTS-1"} {
		if c, _ := rep.Check(id); c.Outcome != NA {
			t.Errorf("%s: %s, want n/a", id, c.Outcome)
		}
	}
	if c, _ := rep.Check("TW-TOOL-1"); c.Outcome != Fail || !strings.Contains(c.Reason, "update_plan") {
		t.Errorf("TW-TOOL-1: %s %q", c.Outcome, c.Reason)
	}
}

func shellTarget(script string) driver.Target {
	return driver.Target{Command: []string{"/bin/sh", "-c", script}}
}

func oneCase(t *testing.T, id string) []*Case {
	for _, c := range builtinCases(t) {
		if c.ID == id {
			return []*Case{c}
		}
	}
	t.Fatalf("no case %s", id)
	return nil
}

// A misbehaving agent is a failed case within the timeout, never a hung
// runner.
func TestRunBrokenAgents(t *testing.T) {
	t.Parallel()
	type brokenAgent struct {
		name   string
		target func(t *testing.T) driver.Target
		want   []string // failed check IDs
		reason string   // in RUN-1's reason
		// slow: the agent is this test binary (race-instrumented, a
		// process start of its own), not a shell script of milliseconds.
		slow bool
		// pool runs the case pooled (Config.Pool); row is the fake
		// agent's breakage the agent carries, for the pool table.
		pool bool
		row  *breakage.Breakage
	}
	agents := []brokenAgent{
		{"hang", func(*testing.T) driver.Target { return shellTarget("echo starting >&2; sleep 600") }, []string{"ACP-INIT-1", "RUN-1"}, "deadline", false, false, nil},
		{"hang-with-child", func(*testing.T) driver.Target { return shellTarget("sleep 600 & echo child started >&2; wait") }, []string{"ACP-INIT-1", "RUN-1"}, "child started", false, false, nil},
		{"crash", func(*testing.T) driver.Target { return shellTarget("read line; echo boom >&2; exit 3") }, []string{"ACP-INIT-1", "RUN-1"}, "exit status 3", false, false, nil},
		{"not-json", func(*testing.T) driver.Target { return shellTarget("echo 'Welcome to my agent!'; cat >/dev/null") }, []string{"ACP-INIT-1", "ACP-JSONRPC-1", "RUN-1"}, "deadline", false, false, nil},
		{"no-such-command", func(*testing.T) driver.Target { return driver.Target{Command: []string{"/nonexistent/agent"}} }, []string{"ACP-INIT-1", "RUN-1"}, "nonexistent", false, false, nil},
	}
	// The fake agent's breakages that fail RUN-1, and what it says on
	// stderr when it breaks.
	says := map[string]string{"hang-on-prompt": "hanging on purpose", "crash-on-prompt": "crashing on purpose"}
	var mu sync.Mutex
	rows := map[string]*breakage.PoolRow{}
	t.Cleanup(func() { writePoolTable(t, "fake-run1.md", breakage.In(breakage.Fake), rows) })
	for _, b := range breakage.In(breakage.Fake) {
		if b.FailsCheck("RUN-1") {
			rows[b.Name] = &breakage.PoolRow{Breakage: b}
			for _, pool := range []bool{false, true} {
				agents = append(agents, brokenAgent{fmt.Sprintf("fake %s/pool=%v", b.Name, pool), func(t *testing.T) driver.Target { return fakeTarget(t, b.Name) },
					b.Fails, says[b.Name], true, pool, &b})
			}
		}
	}
	for _, tc := range agents {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The case timeout is what ends these agents: short, but far
			// above what the steps before the break take.
			timeout := 2 * time.Second
			if tc.slow {
				timeout = 10 * time.Second
			}
			var rep *Report
			hangCheck(t, hangLimit, "Run with a short case timeout", func() {
				var err error
				cases := oneCase(t, "plan-basic")
				if tc.row != nil {
					// With the dialect forced the first case is pooled
					// too; a second one, started once the first's
					// initialize is answered, gets a pooled process of
					// its own (the first holds its process).
					cases = append(cases, oneCase(t, "reject-duplicate")...)
				}
				rep, err = Run(context.Background(), Config{Agent: tc.target(t), Cases: cases,
					Dialect: driver.DialectTodoWrite, Timeout: timeout, Grace: 200 * time.Millisecond, Pool: tc.pool})
				if err != nil {
					t.Error(err)
				}
			})
			if rep == nil {
				return
			}
			if tc.row != nil {
				mu.Lock()
				if r := rows[tc.row.Name]; tc.pool {
					r.On, r.Cases, r.Alone = rep.FailedIDs(), len(rep.Cases), ranAlone(rep)
				} else {
					r.Off = rep.FailedIDs()
				}
				mu.Unlock()
			}
			if got := rep.FailedIDs(); !reflect.DeepEqual(got, tc.want) {
				dumpFailures(t, rep)
				t.Errorf("failed %v, want %v", got, tc.want)
			}
			run, _ := rep.Check("RUN-1")
			if !strings.Contains(run.Reason, tc.reason) {
				t.Errorf("RUN-1 reason %q does not mention %q", run.Reason, tc.reason)
			}
			if rep.OK {
				t.Error("report OK for a broken agent")
			}
			if rep.Cases[0].Completed {
				t.Error("case reported completed")
			}
			// Each case is the first and only session of the pooled
			// process started for it: it ran alone in a fresh process,
			// and is reported from that session, not run again.
			if tc.pool && (ranAlone(rep) != 0 || !slices.Equal(rep.PoolFirstFailed, []string{"plan-basic", "reject-duplicate"})) {
				t.Errorf("%d case(s) failed pooled and ran again alone, %v failed as the first and only session of a fresh pooled process; want none and both", ranAlone(rep), rep.PoolFirstFailed)
			}
			// Checks the case feeds are not run, not failed.
			if c, _ := rep.Check("TW-PLAN-1"); c.Outcome != NotRun {
				t.Errorf("TW-PLAN-1: %s, want not-run", c.Outcome)
			}
		})
	}
}

func TestRunShutdownEscalation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ mode, want string }{
		{"slow-exit", "SIGTERM"},
		{"ignore-term", "SIGKILL"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			rep, err := Run(context.Background(), Config{Agent: fakeTarget(t, tc.mode), Cases: oneCase(t, "plan-basic"),
				Timeout: time.Minute, Grace: 200 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			c, _ := rep.Check("ACP-EXIT-1")
			if c.Outcome != Fail || !strings.Contains(c.Reason, tc.want) {
				t.Errorf("ACP-EXIT-1: %s %q, want a failure naming %s", c.Outcome, c.Reason, tc.want)
			}
			// One case: the verdict is INCOMPLETE, never FAIL.
			if rep.Verdict != VerdictIncomplete {
				t.Errorf("verdict %s: a SHOULD failure failed the run: %v", rep.Verdict, rep.Failing)
			}
		})
	}
}

func TestRunTemplatingAndFiles(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	cfg := Config{
		Agent: driver.Target{
			Command: []string{"/bin/sh", "-c", `printf '%s %s %s\n' "$1" "$MOCK" "$(cat conf/agent.toml)" > seen.txt; exec "$2" -test.run='^$'`, "sh", "{{.BaseURL}}", os.Args[0]},
			Env:     []string{"MOCK=port={{.Port}}", fakeAgentEnv + "=1", fakeModeEnv + "=ok", "GORACE=atexit_sleep_ms=0"},
			Files:   []driver.File{{Dest: "conf/agent.toml", Content: "url = \"{{.BaseURL}}\" cwd = \"{{.Cwd}}\"", Src: "inline"}},
		},
		Cases: oneCase(t, "plan-basic"), Timeout: time.Minute, TempDir: tmp, KeepDirs: true,
	}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.OK {
		dumpFailures(t, rep)
	}
	ev := rep.Cases[0].Evidence()
	b, err := os.ReadFile(filepath.Join(ev.Cwd, "seen.txt"))
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.HasPrefix(s, "http://127.0.0.1:") || !strings.Contains(s, "/v1 port=") || !strings.Contains(s, `cwd = "`+ev.Cwd+`"`) {
		t.Errorf("templates expanded to %q", s)
	}
}

// A target with Home gets a throw-away HOME per case, beside the cwd, the
// same for both processes of a load case, with its ~/ files in it; the
// runner removes it afterwards unless KeepDirs.
func TestRunThrowAwayHome(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, keep := range []bool{true, false} {
		tmp := t.TempDir()
		target := driver.Target{
			Command: []string{"/bin/sh", "-c", `echo "$HOME $XDG_CONFIG_HOME $(cat "$HOME/.agent/config")" >> homes.txt; exec "$0" -test.run='^$'`, exe},
			Env:     []string{fakeAgentEnv + "=1", fakeModeEnv + "=ok", "GORACE=atexit_sleep_ms=0"},
			Files:   []driver.File{{Dest: "~/.agent/config", Content: "url={{.URL}} home={{.Home}}", Src: "inline"}},
			Home:    true,
		}
		rep, err := Run(context.Background(), Config{Agent: target, Cases: oneCase(t, "load-replay"), Dialect: driver.DialectTodoWrite,
			Timeout: time.Minute, Grace: time.Second, TempDir: tmp, KeepDirs: keep, Validator: Compiled(sharedValidator(t))})
		if err != nil {
			t.Fatal(err)
		}
		ev := rep.Cases[0].Evidence()
		if ev.Home == "" || strings.HasPrefix(ev.Home, ev.Cwd) || filepath.Dir(ev.Home) != tmp {
			t.Fatalf("home %q (cwd %q, temp %q)", ev.Home, ev.Cwd, tmp)
		}
		if !keep {
			if _, err := os.Stat(ev.Home); !os.IsNotExist(err) {
				t.Errorf("home left behind: %v", err)
			}
			continue
		}
		if !rep.OK {
			dumpFailures(t, rep)
		}
		b, err := os.ReadFile(filepath.Join(ev.Cwd, "homes.txt"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(strings.TrimSpace(string(b)), "\n")
		if len(lines) != 2 {
			t.Fatalf("want one line per process (a load case restarts), got %q", lines)
		}
		want := ev.Home + " " + ev.Home + "/.config url=http://127.0.0.1:"
		for _, l := range lines {
			if !strings.HasPrefix(l, want) || !strings.HasSuffix(l, " home="+ev.Home) {
				t.Errorf("process saw %q, want %q... home=%s", l, want, ev.Home)
			}
		}
		if _, err := os.Stat(filepath.Join(ev.Cwd, ".agent")); err == nil {
			t.Error("a ~/ file was written into the cwd")
		}
	}
}

// On a wire without an error flag (OpenAI chat here), a call's verdict is
// read from what the agent says of it, never assumed from the case. Forced
// into another dialect, the fake offers todo_write and not that dialect's
// tool: no scripted call reaches a todo tool of the agent, so the checks of
// the calls are not judged (they say why), whatever the fake then did with
// them. Under todo_write, a refusal in words only is a refusal that fails
// the refusal checks (the model is told by "Error:"), and a flagged
// refusal whose list is shown anyway fails the plan checks.
func TestRunVerdictsOnFlaglessWire(t *testing.T) {
	t.Parallel()
	rep := runFake(t, "no-error-prefix", func(c *Config) { c.Dialect = driver.DialectOpencode })
	if got, want := rep.FailedIDs(), []string{"TW-TOOL-1"}; !reflect.DeepEqual(got, want) {
		dumpFailures(t, rep)
		t.Fatalf("failed %v, want %v (the calls reached no todo tool)", got, want)
	}
	for _, id := range []string{"TW-PLAN-1", "TW-REJECT-KEEP-1", "TW-FINAL-1"} {
		if c, _ := rep.Check(id); c.Outcome != NotRun || !strings.Contains(c.Reason, "the todowrite tool was offered in no model request of the case (see TW-TOOL-1)") {
			t.Errorf("%s: %s %q, want not run: the tool was not offered", id, c.Outcome, c.Reason)
		}
	}
	// Its own rules may also keep duplicates and show content untrimmed
	// (codex does): under todo_write's rules, that fails.
	rep = runFake(t, "accept-dup-raw", nil)
	for _, id := range []string{"TW-VALID-DUP", "TW-PLAN-1"} {
		if c, _ := rep.Check(id); c.Outcome != Fail {
			t.Errorf("todo_write dialect, untrimmed duplicates: %s %s, want fail", id, c.Outcome)
		}
	}
	// A flagged refusal ("Error:") whose list is still shown fails: the
	// flag wins over the plan.
	rep = runFake(t, "plan-on-reject", nil)
	for _, id := range []string{"TW-PLAN-1", "TW-REJECT-KEEP-1"} {
		if c, _ := rep.Check(id); c.Outcome != Fail {
			t.Errorf("%s: %s, want a failure for plans shown for flagged refusals", id, c.Outcome)
		}
	}
	// A refusal in words only (and failed over ACP) is a refusal: the
	// refusal check fails on its form alone.
	rep = runFake(t, "no-error-prefix", nil)
	if c, _ := rep.Check("TW-VALID-DUP"); c.Outcome != Fail || !strings.Contains(c.Reason, "call_2 was refused (") {
		t.Errorf("todo_write dialect: TW-VALID-DUP %s %q, want a failure saying the refusal did not reach the model as one", c.Outcome, c.Reason)
	}
	for _, id := range []string{"TW-PLAN-1", "TW-FINAL-1", "TW-HISTORY-1"} {
		if c, _ := rep.Check(id); c.Outcome != Pass {
			t.Errorf("todo_write dialect, refusals in words: %s %s %q, want pass", id, c.Outcome, c.Reason)
		}
	}
}

// A run given an earlier run's probe tools runs no probe: the dialect is
// detected from those tools, and the cases are judged as before.
func TestProbeToolsOfAnEarlierRun(t *testing.T) {
	t.Parallel()
	only := func(ids ...string) func(*Config) {
		return func(c *Config) {
			var cs []*Case
			for _, cc := range c.Cases {
				if slices.Contains(ids, cc.ID) {
					cs = append(cs, cc)
				}
			}
			c.Cases = cs
		}
	}
	first := runFake(t, "ok", only("plan-basic"))
	tools := first.ProbeTools()
	if len(tools) == 0 || len(first.Cases) != 2 {
		t.Fatalf("the first run: %d case(s), probe tools %v; want the probe and plan-basic, and its tools", len(first.Cases), tools)
	}
	rep := runFake(t, "ok", func(c *Config) { only("plan-basic", "replace")(c); c.ProbeTools = tools })
	for _, c := range rep.Cases {
		if ev := c.Evidence(); ev.Case.Probe {
			t.Errorf("case %s ran: a probe, with the probe's tools given", c.ID)
		}
	}
	if len(rep.Cases) != 2 || rep.Dialect != driver.DialectTodoWrite || rep.DialectSource != "detected (by an earlier run's probe)" || rep.ProbeTools() != nil {
		t.Errorf("%d case(s), dialect %s (%s), probe tools %v", len(rep.Cases), rep.Dialect, rep.DialectSource, rep.ProbeTools())
	}
	for _, id := range []string{"TW-PLAN-1", "TW-REPLACE-1"} {
		if c, _ := rep.Check(id); c.Outcome != Pass {
			t.Errorf("%s: %s %s", id, c.Outcome, c.Reason)
		}
	}
	// The dialect follows the tools given: codex's update_plan.
	rep = runFake(t, "ok", func(c *Config) {
		only("plan-basic")(c)
		c.ProbeTools = []llm.ToolSpec{{Name: "update_plan", Parameters: json.RawMessage(`{"type":"object"}`)}}
	})
	if rep.Dialect != driver.DialectCodex || len(rep.Cases) != 1 {
		t.Errorf("given update_plan: dialect %s (%s), %d case(s)", rep.Dialect, rep.DialectSource, len(rep.Cases))
	}
}

// Pooled, an agent that never answers initialize costs each case its
// timeout, as a process per case does, never a hung run: the pooled
// process's initialize is bounded by the case's timeout, and once it
// failed no case waits for another pooled process (each runs in a process
// of its own and fails there).
func TestPoolOfAnAgentThatNeverInitializes(t *testing.T) {
	t.Parallel()
	var rep *Report
	hangCheck(t, hangLimit, "a pooled run against an agent that never answers initialize", func() {
		var err error
		rep, err = Run(context.Background(), Config{Agent: shellTarget("cat >/dev/null"), Cases: builtinCases(t)[:6], KeepGoing: true, Pool: true,
			Dialect: driver.DialectTodoWrite, Parallel: 6, Timeout: time.Second, Grace: 100 * time.Millisecond})
		if err != nil {
			t.Error(err)
		}
	})
	if rep == nil {
		return
	}
	if got := rep.FailedIDs(); !reflect.DeepEqual(got, []string{"ACP-INIT-1", "RUN-1"}) {
		dumpFailures(t, rep)
		t.Errorf("failed %v, want ACP-INIT-1 and RUN-1", got)
	}
	for _, c := range rep.Cases {
		if ev := c.Evidence(); ev != nil && len(ev.Procs) > 0 && ev.Procs[0].Pooled != "" {
			t.Errorf("case %s ran as %s: no pooled process was ever initialized", c.ID, ev.Procs[0].Pooled)
		}
	}
}

// With the dialect forced the first case leases a pooled process too: one
// that cannot get its initialize answered fails the lease, the case runs
// in a process of its own, and the run stops there, the other cases not
// run, as without the pool.
func TestPoolStopsEarlyWhenTheFirstCaseCannotInitialize(t *testing.T) {
	t.Parallel()
	var rep *Report
	hangCheck(t, hangLimit, "a pooled run with a forced dialect against an agent that never answers initialize", func() {
		var err error
		rep, err = Run(context.Background(), Config{Agent: shellTarget("cat >/dev/null"), Cases: builtinCases(t)[:4], Pool: true,
			Dialect: driver.DialectTodoWrite, Parallel: 4, Timeout: time.Second, Grace: 100 * time.Millisecond})
		if err != nil {
			t.Error(err)
		}
	})
	if rep == nil {
		return
	}
	first := rep.Cases[0].Evidence()
	if !first.Case.Poolable() {
		t.Fatalf("the first case %s needs a process of its own: the spec tests nothing", first.Case.ID)
	}
	if len(first.Procs) != 1 || first.Procs[0].Pooled != "" {
		t.Errorf("the first case ran in %d process(es) (%+v): want one of its own, the pool's failed", len(first.Procs), first.Procs)
	}
	for _, c := range rep.Cases[1:] {
		if ev := c.Evidence(); ev == nil || !strings.Contains(ev.NotRun, "could not get initialize answered") {
			t.Errorf("case %s was run: the first case could not get initialize answered", c.ID)
		}
	}
}
