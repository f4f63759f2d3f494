package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/mockmodel"
)

// The in-process target (driver.Target.InProcess): the runner calls a function on
// pipes instead of starting Command. These tests drive small in-process
// agents (stubServe) through Run and Launch, and check what the function
// gets and how each way of ending is recorded. The reference agent run in
// process over the whole catalogue is in cmd/todoharness/cli (environ_test.go):
// cmd/todoharness/cli imports this package.

func TestProcIOLookupEnv(t *testing.T) {
	p := driver.ProcIO{Env: []string{"A=1", "B=two", "A=3", "EMPTY=", "NOEQUALS", "EQ=x=y", "LATE=1", "LATE="}}
	for _, tc := range []struct {
		k    string
		want string
		ok   bool
	}{
		{"A", "3", true},                // the last entry wins
		{"B", "two", true},              // a single entry
		{"EMPTY", "", true},             // set, empty
		{"LATE", "", true},              // the last entry wins, even empty
		{"EQ", "x=y", true},             // the value keeps its own '='
		{"NOEQUALS", "", false},         // not K=V: not an entry
		{"MISSING", "", false},          // unset
		{"a", "", false},                // keys are case-sensitive
		{"", "", false},                 // no empty key
		{"A=1", "", false},              // a whole entry is no key
		{driver.ModelURLEnv, "", false}, // nothing but Env is read
		{"PATH", "", false},             // not even the process's own
		{"TODOHARNESS_FAULT", "", false},
	} {
		got, ok := p.LookupEnv(tc.k)
		if got != tc.want || ok != tc.ok {
			t.Errorf("LookupEnv(%q) = %q, %v; want %q, %v", tc.k, got, ok, tc.want, tc.ok)
		}
		if g := p.Getenv(tc.k); g != tc.want {
			t.Errorf("Getenv(%q) = %q, want %q", tc.k, g, tc.want)
		}
	}
	if v, ok := (driver.ProcIO{}).LookupEnv("HOME"); v != "" || ok {
		t.Errorf("an empty Env gives HOME %q, %v; want \"\", false", v, ok)
	}
}

// stubServe is an in-process agent's ACP loop: it answers initialize and
// session/new, calls onPrompt for session/prompt (nil: answers end_turn),
// answers anything else with "method not found", and returns when its
// stdin ends (or its read fails: the runner closed the pipe). seen, if
// given, is called with each request's method before it is answered.
func stubServe(p driver.ProcIO, onPrompt func(), seen ...func(method string)) {
	in := bufio.NewScanner(p.Stdin)
	in.Buffer(make([]byte, 64<<10), 4<<20)
	for in.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(in.Bytes(), &m) != nil || len(m.ID) == 0 {
			continue
		}
		for _, f := range seen {
			f(m.Method)
		}
		var res any
		switch m.Method {
		case "initialize":
			res = map[string]any{"protocolVersion": 1, "agentCapabilities": map[string]any{"loadSession": false},
				"agentInfo": map[string]any{"name": "stub", "version": "0"}, "authMethods": []any{}}
		case "session/new":
			res = map[string]any{"sessionId": "stub-session"}
		case "session/prompt":
			if onPrompt != nil {
				onPrompt()
			}
			res = map[string]any{"stopReason": "end_turn"}
		default:
			b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "error": map[string]any{"code": -32601, "message": "method not found"}})
			_, _ = p.Stdout.Write(append(b, '\n'))
			continue
		}
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": res})
		if _, err := p.Stdout.Write(append(b, '\n')); err != nil {
			return
		}
	}
}

// holdAgent is for an agent that does not return by itself: release is
// closed when the test ends, and the test then waits (bounded) for the
// function to report, with returned, that it has returned: no goroutine of
// the test outlives it.
func holdAgent(t *testing.T) (release <-chan struct{}, returned func()) {
	t.Helper()
	rel, ret := make(chan struct{}), make(chan struct{})
	t.Cleanup(func() {
		close(rel)
		select {
		case <-ret:
		case <-time.After(time.Minute):
			t.Error("the in-process agent did not return once released")
		}
	})
	return rel, func() { close(ret) }
}

// stubCase is initialize and newSession, and with prompt a prompt (the
// script's one turn, which the stub never asks for: it does not matter,
// the prompt steps of these tests are never answered).
func stubCase(prompt bool) *Case {
	c := &Case{ID: "inproc", Title: "an in-process agent", Source: "(test)", Checks: []string{"RUN-1"},
		Steps: []driver.Step{{Op: driver.OpInitialize}, {Op: driver.OpNewSession}}}
	if prompt {
		c.Steps = append(c.Steps, driver.Step{Op: driver.OpPrompt, Text: "hello"})
		c.Script = []mockmodel.Turn{{Text: "OK"}}
	}
	return c
}

// stubTarget is f with a command line (the runner never starts it).
func stubTarget(f driver.InProcessFunc) driver.Target {
	return driver.Target{Name: "stub", Command: []string{"stub-agent", "--acp"}, InProcess: f}
}

// runStub runs case c against the in-process agent tg. The grace is long:
// an agent that returns at its stdin's end never waits for it (a test of
// the grace sets its own).
func runStub(t *testing.T, tg driver.Target, c *Case, mod func(*Config)) *Report {
	t.Helper()
	cfg := Config{Agent: tg, Cases: []*Case{c}, Dialect: driver.DialectTodoWrite, Timeout: time.Minute,
		Grace: 10 * time.Second, Settle: testSettle, Validator: Compiled(sharedValidator(t))}
	if mod != nil {
		mod(&cfg)
	}
	rep := runBounded(t, "Run of an in-process agent", cfg)
	if len(rep.Cases) != 1 || len(rep.Cases[0].ev.Procs) != 1 {
		t.Fatalf("%d cases, want 1 with 1 agent: %+v", len(rep.Cases), rep.Cases)
	}
	return rep
}

// runBounded runs cfg, failing the test when Run hangs (what names it) or
// returns an error.
func runBounded(t *testing.T, what string, cfg Config) *Report {
	t.Helper()
	var rep *Report
	hangCheck(t, hangLimit, what, func() {
		var err error
		if rep, err = Run(context.Background(), cfg); err != nil {
			t.Error(err)
		}
	})
	if rep == nil {
		t.FailNow()
	}
	return rep
}

// The function gets the templated Command as Args, the environment the
// process would get (the runner's, TODOHARNESS_MODEL_URL, the target's
// templated Env, the marker) and the case's directory.
func TestInProcessGetsArgsEnvDir(t *testing.T) {
	t.Parallel()
	got := make(chan driver.ProcIO, 1)
	f := func(ctx context.Context, p driver.ProcIO) int {
		got <- p
		stubServe(p, nil)
		return 0
	}
	tg := driver.Target{Name: "stub", InProcess: f,
		Command: []string{"stub-agent", "--url", "{{.BaseURL}}", "--cwd={{.Cwd}}", "{{.Case}}/{{.Model}}"},
		Env:     []string{"STUB_PORT={{.Port}}", "STUB_HOST={{.Host}}", "STUB_HOME={{.Home}}"}}
	environ := os.Environ()
	rep := runStub(t, tg, stubCase(false), nil)
	p := <-got
	ev := rep.Cases[0].ev
	base := p.Getenv(driver.ModelURLEnv)
	u, err := url.Parse(base)
	if err != nil || u.Hostname() != "127.0.0.1" || u.Port() == "" || u.Path != "/v1" {
		t.Fatalf("%s=%q (%v), want the mock's http://127.0.0.1:PORT/v1", driver.ModelURLEnv, base, err)
	}
	if want := []string{"stub-agent", "--url", base, "--cwd=" + ev.Cwd, "inproc/mock"}; !reflect.DeepEqual(p.Args, want) {
		t.Errorf("Args %q, want %q", p.Args, want)
	}
	if p.Dir != ev.Cwd || ev.Cwd == "" {
		t.Errorf("Dir %q, want the case's directory %q", p.Dir, ev.Cwd)
	}
	want := append(slices.Clone(environ), driver.ModelURLEnv+"="+base, "STUB_PORT="+u.Port(), "STUB_HOST=127.0.0.1", "STUB_HOME="+ev.Home)
	if n := len(p.Env); n != len(want)+1 || !reflect.DeepEqual(p.Env[:n-1], want) {
		t.Errorf("Env:\n%q\nwant the runner's environment, then:\n%q", p.Env, want[len(environ):])
	} else if !strings.HasPrefix(p.Env[n-1], driver.ProcMarkerEnv+"=") {
		t.Errorf("the last Env entry is %q, want the marker %s=…", p.Env[n-1], driver.ProcMarkerEnv)
	}
	if p.Stdin == nil || p.Stdout == nil || p.Stderr == nil {
		t.Errorf("stdio %v %v %v", p.Stdin, p.Stdout, p.Stderr)
	}
	pr := ev.Procs[0]
	if !pr.InProcess || !reflect.DeepEqual(pr.Argv, p.Args) {
		t.Errorf("ProcResult InProcess %v Argv %q, want true and %q", pr.InProcess, pr.Argv, p.Args)
	}
	if c, _ := rep.Check("RUN-1"); c.Outcome != Pass {
		t.Errorf("RUN-1: %s %q", c.Outcome, c.Reason)
	}
}

// Launch gives the same, from the driver.Vars given; with CleanEnv the
// environment is exactly PATH, HOME, TMPDIR, the model URL and Env; a
// target with no Command gets its Name as Args (Run too).
func TestInProcessLaunch(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	v := driver.Vars{BaseURL: "http://127.0.0.1:9/v1", URL: "http://127.0.0.1:9", Host: "127.0.0.1", Port: "9", Cwd: dir, Case: "c1", Model: "m1"}
	launch := func(t *testing.T, tg driver.Target, code int) (driver.ProcIO, string) {
		t.Helper()
		got := make(chan driver.ProcIO, 1)
		tg.InProcess = func(ctx context.Context, p driver.ProcIO) int {
			got <- p
			stubServe(p, nil)
			return code
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		a, err := tg.Launch(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := a.Step(ctx, driver.OpInitialize, "", ""); err != nil {
			t.Fatalf("initialize: %v", err)
		}
		how, _ := a.Stop(time.Second)
		p := <-got
		if !reflect.DeepEqual(a.Argv(), p.Args) {
			t.Errorf("Argv %q, Args %q", a.Argv(), p.Args)
		}
		return p, how
	}
	t.Run("command", func(t *testing.T) {
		t.Parallel()
		p, how := launch(t, driver.Target{Command: []string{"agent", "{{.BaseURL}}", "{{.Cwd}}/s", "--model={{.Model}}"},
			Env: []string{"K={{.Case}}", "K=again", "EMPTY="}, CleanEnv: true}, 7)
		if want := []string{"agent", v.BaseURL, dir + "/s", "--model=m1"}; !reflect.DeepEqual(p.Args, want) {
			t.Errorf("Args %q, want %q", p.Args, want)
		}
		if p.Dir != dir {
			t.Errorf("Dir %q, want %q", p.Dir, dir)
		}
		var want []string
		for _, k := range []string{"PATH", "HOME", "TMPDIR"} {
			if val, ok := os.LookupEnv(k); ok {
				want = append(want, k+"="+val)
			}
		}
		want = append(want, driver.ModelURLEnv+"="+v.BaseURL, "K=c1", "K=again", "EMPTY=")
		if n := len(p.Env); n != len(want)+1 || !reflect.DeepEqual(p.Env[:n-1], want) || !strings.HasPrefix(p.Env[n-1], driver.ProcMarkerEnv+"=") {
			t.Errorf("Env %q, want %q and the marker", p.Env, want)
		}
		if got := p.Getenv("K"); got != "again" {
			t.Errorf("K=%q, want the last entry's value", got)
		}
		if want := "exited after stdin closed, exit status 7"; how != want {
			t.Errorf("Stop: %q, want %q", how, want)
		}
	})
	t.Run("no command", func(t *testing.T) {
		t.Parallel()
		if p, _ := launch(t, driver.Target{Name: "solo"}, 0); !reflect.DeepEqual(p.Args, []string{"solo"}) {
			t.Errorf("Args %q, want [solo]", p.Args)
		}
		if p, _ := launch(t, driver.Target{}, 0); !reflect.DeepEqual(p.Args, []string{"in-process agent"}) {
			t.Errorf("Args %q, want [in-process agent]", p.Args)
		}
	})
	t.Run("Run with no command", func(t *testing.T) {
		t.Parallel()
		got := make(chan []string, 1)
		tg := driver.Target{Name: "solo", InProcess: func(ctx context.Context, p driver.ProcIO) int {
			got <- p.Args
			stubServe(p, nil)
			return 0
		}}
		rep := runStub(t, tg, stubCase(false), nil)
		if args := <-got; !reflect.DeepEqual(args, []string{"solo"}) {
			t.Errorf("Args %q, want [solo]", args)
		}
		if c, _ := rep.Check("RUN-1"); c.Outcome != Pass {
			t.Errorf("RUN-1: %s %q", c.Outcome, c.Reason)
		}
	})
}

// A function that returns when its stdin ends exited after stdin closed,
// with the status it returned; one that returns before is an early exit.
func TestInProcessExitOnStdinEOF(t *testing.T) {
	t.Parallel()
	for _, code := range []int{0, 7} {
		t.Run(fmt.Sprint("status ", code), func(t *testing.T) {
			t.Parallel()
			eof := make(chan bool, 1)
			rep := runStub(t, stubTarget(func(ctx context.Context, p driver.ProcIO) int {
				stubServe(p, nil)
				eof <- ctx.Err() == nil // stdin ended, not the context
				return code
			}), stubCase(false), nil)
			pr := rep.Cases[0].ev.Procs[0]
			if !strings.HasPrefix(pr.Shutdown, "exited after stdin closed") {
				t.Errorf("Shutdown %q, want it to start %q", pr.Shutdown, "exited after stdin closed")
			}
			if want := fmt.Sprintf("exit status %d", code); pr.Exit != want {
				t.Errorf("Exit %q, want %q", pr.Exit, want)
			}
			if !pr.InProcess || pr.ExitedEarly {
				t.Errorf("InProcess %v ExitedEarly %v, want true, false", pr.InProcess, pr.ExitedEarly)
			}
			if !<-eof {
				t.Error("the function's context was cancelled before its stdin ended")
			}
			if c, _ := rep.Check("RUN-1"); c.Outcome != Pass {
				t.Errorf("RUN-1: %s %q", c.Outcome, c.Reason)
			}
		})
	}
	t.Run("before stdin closed", func(t *testing.T) {
		t.Parallel()
		c := stubCase(false)
		c.Steps = c.Steps[:1] // initialize only, then the function returns
		rep := runStub(t, stubTarget(func(ctx context.Context, p driver.ProcIO) int {
			in := bufio.NewScanner(p.Stdin)
			in.Scan()
			_, _ = p.Stdout.Write([]byte(`{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":1,"agentCapabilities":{},"authMethods":[]}}` + "\n"))
			return 4
		}), c, func(c *Config) { c.Settle = time.Second }) // the settle waits up to settleFast for the exit
		pr := rep.Cases[0].ev.Procs[0]
		if !pr.ExitedEarly || pr.Exit != "exit status 4" {
			t.Errorf("ExitedEarly %v Exit %q, want true and exit status 4", pr.ExitedEarly, pr.Exit)
		}
		run, _ := rep.Check("RUN-1")
		if want := "inproc: agent process 1 exited (exit status 4) before the client closed its stdin"; run.Outcome != Fail || run.Reason != want {
			t.Errorf("RUN-1: %s %q, want a failure %q", run.Outcome, run.Reason, want)
		}
	})
}

// A function that ignores its stdin's end but returns when its context is
// cancelled ends at the runner's SIGTERM, after the grace.
func TestInProcessExitOnCancel(t *testing.T) {
	t.Parallel()
	cause := make(chan error, 1)
	// The first grace is waited in full; the second is the function's
	// time to return once cancelled (long enough for a loaded machine).
	grace := 300 * time.Millisecond
	rep := runStub(t, stubTarget(func(ctx context.Context, p driver.ProcIO) int {
		stubServe(p, nil)
		<-ctx.Done()
		cause <- context.Cause(ctx)
		return 143
	}), stubCase(false), func(c *Config) { c.Grace = grace })
	pr := rep.Cases[0].ev.Procs[0]
	if want := "did not exit within 300ms of stdin closing: context cancelled (its SIGTERM)"; pr.Shutdown != want {
		t.Errorf("Shutdown %q, want %q", pr.Shutdown, want)
	}
	if pr.Exit != "exit status 143" {
		t.Errorf("Exit %q, want exit status 143", pr.Exit)
	}
	if err := <-cause; !errors.Is(err, driver.ErrTerminated) || !strings.Contains(err.Error(), "its SIGTERM") {
		t.Errorf("the context's cause is %v, want %v", err, driver.ErrTerminated)
	}
}

// A function that ignores its stdin's end and its context is abandoned
// driver.AbandonAfter after its pipes were closed; the run still ends.
func TestInProcessAbandoned(t *testing.T) {
	t.Parallel()
	release, returned := holdAgent(t)
	rep := runStub(t, stubTarget(func(ctx context.Context, p driver.ProcIO) int {
		defer returned()
		stubServe(p, nil)
		<-release
		return 0
	}), stubCase(false), func(c *Config) { c.Grace = 50 * time.Millisecond })
	pr := rep.Cases[0].ev.Procs[0]
	if want := "did not exit within 50ms of stdin closing nor 50ms of context cancelled (its SIGTERM): pipes closed (its SIGKILL)"; pr.Shutdown != want {
		t.Errorf("Shutdown %q, want %q", pr.Shutdown, want)
	}
	if want := fmt.Sprintf("did not return within %s of its context ending and its pipes closing: abandoned (an in-process agent cannot be killed)", driver.AbandonAfter); pr.Exit != want {
		t.Errorf("Exit %q, want %q", pr.Exit, want)
	}
	if !rep.Cases[0].Completed {
		t.Errorf("the case did not complete: %s", rep.Cases[0].Error)
	}
}

// goroutines returns every goroutine's stack, by goroutine ID.
func goroutines() map[string]string {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	out := map[string]string{}
	for _, g := range strings.Split(string(buf), "\n\n") {
		head, _, _ := strings.Cut(g, "\n")
		id, _, _ := strings.Cut(strings.TrimPrefix(head, "goroutine "), " ")
		out[id] = g
	}
	return out
}

// runnerGoroutines lists the goroutines not in before that run code of
// this package, the driver or the mock model, other than in-process agents' own
// (runInProc) and tests'.
func runnerGoroutines(before map[string]string) []string {
	var out []string
	for id, g := range goroutines() {
		if _, old := before[id]; old || strings.Contains(g, "driver.runInProc") || strings.Contains(g, "testing.tRunner") {
			continue
		}
		if strings.Contains(g, "todoharness/conformance.") || strings.Contains(g, "todoharness/driver.") || strings.Contains(g, "todoharness/mockmodel.") || strings.Contains(g, "net/http/httptest.") {
			out = append(out, g)
		}
	}
	return out
}

// A hung in-process agent (it ignores its context and its closed pipes)
// fails RUN-1 at the case timeout; the runner abandons it and leaves no
// goroutine of its own behind. Not parallel: it counts goroutines.
func TestInProcessHungAgentTimeout(t *testing.T) {
	release, returned := holdAgent(t)
	hung := make(chan struct{})
	before := goroutines()
	timeout := time.Second
	rep := runStub(t, stubTarget(func(ctx context.Context, p driver.ProcIO) int {
		defer returned()
		stubServe(p, func() {
			close(hung)
			<-release
		})
		return 0
	}), stubCase(true), func(c *Config) { c.Timeout = timeout })
	select {
	case <-hung:
	default:
		t.Fatal("the agent never got the prompt")
	}
	cr := rep.Cases[0]
	run, _ := rep.Check("RUN-1")
	if run.Outcome != Fail || !strings.Contains(run.Reason, "step 3 (prompt): no answer to session/prompt: context deadline exceeded") ||
		!strings.Contains(run.Reason, "case timeout 1s") {
		t.Errorf("RUN-1: %s %q, want a failure at the prompt naming the case timeout", run.Outcome, run.Reason)
	}
	if cr.Completed || cr.Duration < timeout {
		t.Errorf("case completed %v after %s, want it aborted at its timeout (%s)", cr.Completed, cr.Duration, timeout)
	}
	pr := cr.ev.Procs[0]
	if !strings.Contains(pr.Exit, "abandoned") || !strings.HasPrefix(pr.Shutdown, "killed") {
		t.Errorf("Shutdown %q Exit %q, want the kill and the abandon named", pr.Shutdown, pr.Exit)
	}
	t.Logf("case %s, exit %q", cr.Duration, pr.Exit)
	// Run has returned: what the runner started has ended (or is ending:
	// a goroutine that closed a channel may not have returned yet).
	// Polled on the wall clock: Run cannot go into a synctest bubble (an
	// in-process agent's stdin and stdout are OS pipes and the mock model
	// a TCP server, none of which a goroutine waits on durably).
	var left []string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if left = runnerGoroutines(before); len(left) == 0 || time.Now().After(deadline) {
			break
		}
	}
	if len(left) > 0 {
		t.Errorf("%d goroutine(s) of the runner left after Run returned:\n%s", len(left), strings.Join(left, "\n\n"))
	}
}

// An in-process agent that writes idle reports (ProcIO.IdleReport) ends
// the settle after its answer by saying it has nothing more to send: the
// settle then waits neither for quiet nor for the model turns the stub
// never asks for. One that reports a count short of what it wrote (it is
// still busy) settles as any agent does: it waits for those turns, then
// for quiet; so does one that never reports.
func TestInProcessIdleEndsTheSettle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, settled string
		short         int64 // how many bytes the report leaves out; -1: none sent
	}{
		{"idle", "the agent reported it had nothing more to send", 0},
		{"busy", "both wires quiet for 100ms (after waiting", 1},
		{"silent", "both wires quiet for 100ms (after waiting", -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := func(_ context.Context, p driver.ProcIO) int {
				if tc.short >= 0 {
					p.Stdout = &reportingWriter{w: p.Stdout, report: p.IdleReport, short: tc.short}
				}
				stubServe(p, nil)
				return 0
			}
			rep := runStub(t, stubTarget(f), stubCase(true), func(c *Config) { c.Settle = 100 * time.Millisecond })
			steps := rep.Cases[0].ev.Steps
			if got := steps[len(steps)-1].Settled; !strings.HasPrefix(got, tc.settled) {
				t.Errorf("the settle after the prompt ended: %q, want %q...", got, tc.settled)
			}
		})
	}
}

// reportingWriter writes to report, after each write to w, the bytes
// written so far less short: an agent idle after each line it writes.
type reportingWriter struct {
	w, report io.Writer
	n, short  int64
}

func (r *reportingWriter) Write(b []byte) (int, error) {
	n, err := r.w.Write(b)
	r.n += int64(n)
	fmt.Fprintf(r.report, "%d\n", r.n-r.short)
	return n, err
}

// A case's timeout counts the time it runs, not the time it waits for a
// parallel slot: two cases of five slow prompts (2 s of running each, the
// timeout 3 s) take turns at one slot, each waiting out the other's
// prompts (some 4 s from start to end), and neither times out.
func TestSlotWaitsDoNotCountAgainstTheTimeout(t *testing.T) {
	t.Parallel()
	f := func(_ context.Context, p driver.ProcIO) int {
		p.Stdout = &reportingWriter{w: p.Stdout, report: p.IdleReport}
		// Wall time, as the runner's (no synctest bubble: see
		// TestInProcessHungAgentTimeout).
		stubServe(p, func() { time.Sleep(400 * time.Millisecond) })
		return 0
	}
	var cases []*Case
	for i := range 2 {
		c := stubCase(true)
		c.ID = fmt.Sprintf("slow-%d", i)
		for range 4 {
			c.Steps = append(c.Steps, driver.Step{Op: driver.OpPrompt, Text: "again"})
			c.Script = append(c.Script, c.Script[0])
		}
		cases = append(cases, c)
	}
	cfg := Config{Agent: stubTarget(f), Cases: cases, Dialect: driver.DialectTodoWrite, Timeout: 3 * time.Second,
		Grace: 10 * time.Second, Settle: testSettle, Validator: Compiled(sharedValidator(t)), Parallel: 1}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Cases {
		if c.Error != "" {
			t.Errorf("case %s: %s", c.ID, c.Error)
		}
	}
}

// A run judges with the validator Config.Validator returns (its caller
// may have started the compilation before it loaded its cases), and fails
// with its error.
func TestRunJudgesWithTheValidatorGiven(t *testing.T) {
	t.Parallel()
	serve := func(ctx context.Context, p driver.ProcIO) int {
		stubServe(p, nil)
		return 0
	}
	t.Run("its validator", func(t *testing.T) {
		t.Parallel()
		var calls atomic.Int32
		rep := runStub(t, stubTarget(serve), stubCase(false), func(cfg *Config) {
			cfg.Validator = func() (*driver.SchemaValidator, error) {
				calls.Add(1)
				return sharedValidator(t), nil
			}
		})
		if calls.Load() == 0 {
			t.Error("Validator was not called")
		}
		if c, _ := rep.Check("ACP-SCHEMA-1"); c.Outcome != Pass {
			t.Errorf("ACP-SCHEMA-1: %s %q", c.Outcome, c.Reason)
		}
	})
	t.Run("its error", func(t *testing.T) {
		t.Parallel()
		cfg := Config{Agent: stubTarget(serve), Cases: []*Case{stubCase(false)}, Dialect: driver.DialectTodoWrite,
			Timeout: time.Minute, Grace: 10 * time.Second, Settle: testSettle,
			Validator: func() (*driver.SchemaValidator, error) { return nil, errors.New("no schema here") }}
		var err error
		hangCheck(t, hangLimit, "Run with a failing Validator", func() { _, err = Run(context.Background(), cfg) })
		if err == nil || !strings.Contains(err.Error(), "no schema here") {
			t.Errorf("Run: %v, want the Validator's error", err)
		}
	})
}
