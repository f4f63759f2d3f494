package cli

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/breakage"
	"github.com/todoharness/todoharness/conformance/report"
	"github.com/todoharness/todoharness/driver"
	conformancefixtures "github.com/todoharness/todoharness/fixtures/conformance"
	"github.com/todoharness/todoharness/harness/acp"
)

// The reference agent run in process (InProcessAgent, conformance's
// Target.InProcess): the whole catalogue judges it as it judges the
// process (suites/conformance runs the process), and the agent command
// reads its variables and resolves its paths through the ProcIO, not the
// process it runs in.

// inProcessReference is the reference agent as the conformance suite runs
// it, in process; env is added to its environment.
func inProcessReference(env ...string) driver.Target {
	return driver.Target{Name: "reference (in process)", InProcess: InProcessAgent, Env: env,
		Command: []string{"todoharness-not-started", "agent", "--model-url", "{{.BaseURL}}", "--sessions", "{{.Cwd}}/.sessions"}}
}

// inProcessSettle is TestInProcessAgentCatalogue's settle window: a
// settle that waited it out would show as ten seconds of a case, and fail
// the test's settle assertion.
const inProcessSettle = 10 * time.Second

// One body, two targets: the catalogue's verdicts on the in-process
// reference agent are the process's (every check passes; with the no-plan
// fault exactly the registry's row fails).
func TestInProcessAgentCatalogue(t *testing.T) {
	t.Parallel()
	cases, err := conformance.LoadCases(conformancefixtures.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	validator, err := driver.NewSchemaValidator()
	if err != nil {
		t.Fatal(err)
	}
	run := func(t *testing.T, tg driver.Target) *conformance.Report {
		t.Helper()
		start := time.Now()
		// Grace bounds how long an agent may take to exit after its stdin
		// closes; one that exits at once (as here) never waits it out, and
		// a loaded machine can take more than a second to schedule the exit.
		// Pooled, as conform runs by default, four cases at once: each
		// pooled process serves several cases, one after the other (so
		// ACP-ISOLATION-1 is judged, and every settle ends on the idle
		// report of a process that serves one session at a time).
		// Settle is the quiet window a settle ends on when nothing says
		// the agent is done: long, so that on a loaded machine, where the
		// agent's idle report can come a scheduling delay after its
		// answer, no settle ends on a window instead (each one here ends
		// as soon as nothing is in flight).
		rep, err := conformance.Run(context.Background(), conformance.Config{Agent: tg, Cases: cases, Timeout: 60 * time.Second,
			Grace: 30 * time.Second, Parallel: 4, Validator: conformance.Compiled(validator), Settle: inProcessSettle, Pool: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%d cases in %s", len(rep.Cases), time.Since(start))
		for _, c := range rep.Cases {
			ev := c.Evidence()
			if len(ev.Procs) == 0 {
				t.Errorf("case %s: no agent started (%s)", c.ID, c.Error)
			}
			for _, p := range ev.Procs {
				if !p.InProcess || p.Exit != "exit status 0" || !strings.HasPrefix(p.Shutdown, "exited after stdin closed") {
					t.Errorf("case %s agent %d: in process %v, %s, %s; want in process, exited after stdin closed, exit status 0",
						c.ID, p.Index+1, p.InProcess, p.Shutdown, p.Exit)
				}
			}
		}
		return rep
	}
	summary := func(rep *conformance.Report) string {
		var b strings.Builder
		_ = report.WriteSummary(&b, rep, false)
		return b.String()
	}
	t.Run("reference", func(t *testing.T) {
		t.Parallel()
		rep := run(t, inProcessReference())
		if rep.Dialect != driver.DialectTodoWrite || rep.DialectSource != "detected" {
			t.Errorf("dialect %s (%s), want %s detected", rep.Dialect, rep.DialectSource, driver.DialectTodoWrite)
		}
		for _, c := range rep.Checks {
			if c.Outcome != conformance.Pass {
				t.Errorf("%s (%s): %s %s", c.ID, c.Level, c.Outcome, c.Reason)
			}
		}
		if len(rep.Checks) != len(conformance.Catalogue()) || !rep.OK {
			t.Errorf("%d checks judged of %d, OK %v:\n%s", len(rep.Checks), len(conformance.Catalogue()), rep.OK, summary(rep))
		}
		// The reference agent writes its idle reports: no settle
		// waits out its window (the bridge's late work, which the
		// breakage table's updates-after-response row has, keeps it
		// busy). Each ends on the idle report, or, when a loaded machine
		// delays that report past the turn's end, on nothing being in
		// flight (no model request open, no tool call open, every turn
		// taken): never on a fixed period of quiet.
		// The idle reports are read: of the run's many settles, at least
		// one ended on one.
		onIdle := 0
		for _, c := range rep.Cases {
			for _, st := range c.Evidence().Steps {
				switch {
				case strings.HasPrefix(st.Settled, "the agent reported it had nothing more to send"):
					onIdle++
				case st.Settled != "" && !strings.Contains(st.Settled, "no tool call of the turn is open and the model took every turn"):
					t.Errorf("case %s step %d (%s): the settle ended: %s; want: by the agent's idle report, or with nothing in flight", c.ID, st.Index+1, st.Op, st.Settled)
				}
			}
		}
		if onIdle == 0 {
			t.Error("no settle ended on the agent's idle report")
		}
		// The cases that restart the agent ran pooled too: their first
		// part in a pooled process their restart retired, their load in a
		// fresh process started in its folders (which then served later
		// cases), and they pass there.
		restarts := 0
		for _, c := range rep.Cases {
			ev := c.Evidence()
			if !ev.Case.Restarts() {
				continue
			}
			restarts++
			if len(ev.Procs) != 2 || ev.Procs[0].Retired == "" || ev.Procs[1].Loader == "" || ev.Procs[0].PoolStore != ev.Procs[1].PoolStore {
				t.Errorf("case %s restarts: %d processes, the first retired %q, the second loading %q; want a pooled process retired and a fresh one in its folders",
					c.ID, len(ev.Procs), ev.Procs[0].Retired, ev.Procs[len(ev.Procs)-1].Loader)
			}
		}
		if restarts == 0 {
			t.Error("no case of the catalogue restarts the agent")
		}
	})
	t.Run("fault no-plan", func(t *testing.T) {
		t.Parallel()
		var row *breakage.Breakage
		for _, b := range breakage.In(breakage.Bridge) {
			if b.Name == "no-plan" {
				row = &b
			}
		}
		if row == nil || len(row.Fails) == 0 {
			t.Fatal("conformance/breakage has no bridge no-plan row")
		}
		rep := run(t, inProcessReference(acp.FaultEnv+"="+row.Name))
		if got := rep.FailedIDs(); !reflect.DeepEqual(got, row.Fails) {
			t.Errorf("failed %v, want %v (%s):\n%s", got, row.Fails, row.Label(), summary(rep))
		}
		if rep.OK {
			t.Error("the run is OK with the no-plan fault")
		}
	})
}

// withoutProcessEnv unsets k in the test process for the test (restored
// after it).
func withoutProcessEnv(t *testing.T, k string) {
	t.Helper()
	t.Setenv(k, "")
	if err := os.Unsetenv(k); err != nil {
		t.Fatal(err)
	}
}

// launched is the reference agent started in process in dir by Launch,
// initialized, with a session.
type launched struct {
	a       *driver.Agent
	session string
}

// launchReference starts InProcessAgent on `agent args...` in dir, with
// only env (and PATH, HOME, TMPDIR: CleanEnv) for environment, and opens
// a session.
func launchReference(t *testing.T, dir string, env []string, args ...string) launched {
	t.Helper()
	tg := driver.Target{Name: "reference", InProcess: InProcessAgent, CleanEnv: true, Env: env,
		Command: append([]string{"todoharness-not-started", "agent"}, args...)}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	a, err := tg.Launch(ctx, driver.Vars{BaseURL: "http://127.0.0.1:1/v1", Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Step(ctx, driver.OpInitialize, "", ""); err != nil {
		how, stderr := a.Stop(time.Second)
		t.Fatalf("initialize: %v (%s); stderr:\n%s", err, how, stderr)
	}
	res, err := a.Step(ctx, driver.OpNewSession, "", "")
	var ns struct {
		SessionID string `json:"sessionId"`
	}
	if err != nil || json.Unmarshal(res, &ns) != nil || ns.SessionID == "" {
		how, stderr := a.Stop(time.Second)
		t.Fatalf("newSession: %s %v (%s); stderr:\n%s", res, err, how, stderr)
	}
	return launched{a: a, session: ns.SessionID}
}

const oneTurnScript = "name: one-turn\nturns:\n  - text: DONE\n"

// Relative --sessions, --script and --composition name files in the
// ProcIO's directory, not in the process's working directory; the
// sessions directory from the ProcIO's variables.
func TestInProcessAgentPaths(t *testing.T) {
	cwd := t.TempDir()
	t.Chdir(cwd) // the process's: nothing may land here
	home, state := t.TempDir(), t.TempDir()
	for _, tc := range []struct {
		name string
		env  []string
		args []string
		want string // the sessions directory, relative to the case's dir unless absolute
	}{
		{"--sessions", nil, []string{"--sessions", "rel/s"}, "rel/s"},
		{"$TODOHARNESS_SESSIONS", []string{sessionsEnv + "=relenv"}, nil, "relenv"},
		{"--sessions over $TODOHARNESS_SESSIONS", []string{sessionsEnv + "=relenv"}, []string{"--sessions", "flag"}, "flag"},
		{"$XDG_STATE_HOME", []string{"XDG_STATE_HOME=" + state}, nil, filepath.Join(state, "todoharness", "sessions")},
		{"HOME", []string{"HOME=" + home}, nil, filepath.Join(home, ".local", "state", "todoharness", "sessions")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			args := append([]string{"--model-url", "http://127.0.0.1:1/v1"}, tc.args...)
			l := launchReference(t, dir, tc.env, args...)
			how, stderr := l.a.Stop(time.Second)
			if how != "exited after stdin closed, exit status 0" {
				t.Errorf("stop: %s; stderr:\n%s", how, stderr)
			}
			want := tc.want
			if !filepath.IsAbs(want) {
				want = filepath.Join(dir, want)
			}
			if _, err := os.Stat(filepath.Join(want, l.session+".jsonl")); err != nil {
				t.Errorf("no session log in %s: %v", want, err)
			}
			if left, _ := os.ReadDir(cwd); len(left) > 0 {
				t.Errorf("the agent wrote into the process's working directory: %v", left)
			}
		})
	}
	t.Run("--script and --composition", func(t *testing.T) {
		dir := t.TempDir()
		for name, body := range map[string]string{
			"script.yaml":      oneTurnScript,
			"composition.yaml": "plugins:\n  - name: todo\n    config:\n      allowParallelInProgress: true\n",
		} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		l := launchReference(t, dir, nil, "--script", "script.yaml", "--composition", "composition.yaml", "--sessions", "s")
		res, err := l.a.Step(context.Background(), driver.OpPrompt, "hello", l.session)
		how, stderr := l.a.Stop(time.Second)
		if err != nil || !strings.Contains(string(res), `"stopReason":"end_turn"`) {
			t.Errorf("prompt: %s %v (%s); stderr:\n%s", res, err, how, stderr)
		}
		if left, _ := os.ReadDir(cwd); len(left) > 0 {
			t.Errorf("the agent wrote into the process's working directory: %v", left)
		}
	})
}

// The sessions directory is resolved from the environ alone: an
// in-process agent without HOME has no home (the process's is not its).
func TestSessionsDirFromEnviron(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, flag string
		env        []string
		want       string
		err        string
	}{
		{"flag", "rel", nil, filepath.Join(dir, "rel"), ""},
		{"absolute flag", "/abs/s", []string{sessionsEnv + "=x"}, "/abs/s", ""},
		{"variable", "", []string{sessionsEnv + "=x", "XDG_STATE_HOME=/state"}, filepath.Join(dir, "x"), ""},
		{"last entry wins", "", []string{sessionsEnv + "=x", sessionsEnv + "=y"}, filepath.Join(dir, "y"), ""},
		{"XDG_STATE_HOME", "", []string{"XDG_STATE_HOME=/state", "HOME=/home/u"}, "/state/todoharness/sessions", ""},
		{"relative XDG_STATE_HOME is ignored", "", []string{"XDG_STATE_HOME=state", "HOME=/home/u"}, "/home/u/.local/state/todoharness/sessions", ""},
		{"HOME", "", []string{"HOME=/home/u"}, "/home/u/.local/state/todoharness/sessions", ""},
		{"no HOME", "", []string{"PATH=/bin"}, "", "$HOME is not defined"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := environ{lookup: driver.ProcIO{Env: tc.env}.LookupEnv, dir: dir}
			got, err := sessionsDir(env, tc.flag)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("got %q, %v; want an error saying %q", got, err, tc.err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// The DeepSeek variables are read from the environ: set there, the
// model is DeepSeek's; set only in the process, there is no model.
func TestAgentModelFromEnviron(t *testing.T) {
	for _, k := range []string{"DEEPSEEK_API_KEY", "DEEPSEEK_BASE_URL", "DEEPSEEK_MODEL"} {
		t.Setenv(k, "process-"+k)
	}
	env := environ{lookup: driver.ProcIO{Env: []string{"DEEPSEEK_API_KEY=k", "DEEPSEEK_BASE_URL=http://127.0.0.1:1/v1", "DEEPSEEK_MODEL=m"}}.LookupEnv}
	_, name, desc, err := agentModel(env, agentFlags{})
	if err != nil || name != "m" || desc != "m at http://127.0.0.1:1/v1" {
		t.Errorf("got %q %q %v, want m at http://127.0.0.1:1/v1", name, desc, err)
	}
	env = environ{lookup: driver.ProcIO{Env: []string{"PATH=/bin"}}.LookupEnv}
	if _, name, desc, err := agentModel(env, agentFlags{}); err == nil || !strings.Contains(err.Error(), "no model") {
		t.Errorf("got %q %q %v, want no model (the process's DEEPSEEK_API_KEY is not the agent's)", name, desc, err)
	}
}

// $TODOHARNESS_FAULT is the ProcIO's: crash-on-prompt set there (and not
// in the process) makes InProcessAgent return 3, its stdout closed, the
// test process alive; set in the process only, the agent does not crash.
func TestInProcessAgentFault(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "script.yaml"), []byte(oneTurnScript), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"--script", "script.yaml", "--sessions", "s"}
	t.Run("in the ProcIO", func(t *testing.T) {
		withoutProcessEnv(t, acp.FaultEnv)
		l := launchReference(t, dir, []string{acp.FaultEnv + "=crash-on-prompt"}, args...)
		res, err := l.a.Step(context.Background(), driver.OpPrompt, "hello", l.session)
		if !errors.Is(err, driver.ErrAgentExited) || !strings.Contains(err.Error(), "exit status 3") {
			t.Errorf("prompt: %s %v, want no answer: the agent exited with status 3", res, err)
		}
		how, stderr := l.a.Stop(time.Second)
		if !strings.HasSuffix(how, ", exit status 3") || !strings.Contains(stderr, "fault crash-on-prompt") {
			t.Errorf("stop: %s; stderr:\n%s", how, stderr)
		}
	})
	t.Run("in the process only", func(t *testing.T) {
		t.Setenv(acp.FaultEnv, "crash-on-prompt")
		l := launchReference(t, dir, nil, args...)
		res, err := l.a.Step(context.Background(), driver.OpPrompt, "hello", l.session)
		how, stderr := l.a.Stop(time.Second)
		if err != nil || !strings.Contains(string(res), `"stopReason":"end_turn"`) || how != "exited after stdin closed, exit status 0" {
			t.Errorf("prompt: %s %v, stop: %s; want an answer and exit status 0; stderr:\n%s", res, err, how, stderr)
		}
	})
}
