package conformance

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/conformance"
	conformancefixtures "github.com/todoharness/todoharness/fixtures/conformance"
	"github.com/todoharness/todoharness/internal/breakage"
	"github.com/todoharness/todoharness/internal/cli"
	"github.com/todoharness/todoharness/internal/testutil/selfexec"
	mutantagent "github.com/todoharness/todoharness/suites/conformance/mutant"
)

// referenceArgs runs the reference agent against the mock, sessions kept in
// the case's directory (what `todoharness conform` does without --agent).
func referenceArgs(extra ...string) []string {
	return append([]string{bins.todoharness, "agent", "--model-url", "{{.BaseURL}}", "--sessions", "{{.Cwd}}/.sessions"}, extra...)
}

// The reference agent and the mutant run in this process
// (conformance.Target.InProcess: the same command line, environment and
// working directory, on pipes), as etcd's framework runs one test body
// against in-process and subprocess members: a suite of a hundred catalogue
// runs then starts no process for most of them. asProcess gives the same
// agent as a process (this test binary, see TestMain), for the specs about
// processes; "one body, two targets" proves both get the same verdicts.
func reference() conformance.Target {
	return conformance.Target{Name: "reference", Command: referenceArgs(), Env: selfexec.Environ("todoharness"),
		InProcess: cli.InProcessAgent}
}

func withFault(fault string) conformance.Target {
	t := reference()
	t.Name, t.Env = "fault "+fault, append(t.Env, "TODOHARNESS_FAULT="+fault)
	return t
}

func mutant(m string) conformance.Target {
	return conformance.Target{Name: "mutant " + m, Command: []string{bins.mutant, "--model-url", "{{.BaseURL}}", "--sessions", "{{.Cwd}}/.sessions"},
		Env: append(selfexec.Environ("mutant"), "TODOHARNESS_MUTANT="+m), InProcess: mutantagent.InProcess}
}

// asProcess is t started as a process (the test binary running the
// program its Env names).
func asProcess(t conformance.Target) conformance.Target {
	t.InProcess = nil
	t.Name += " (process)"
	return t
}

func cases() []*conformance.Case {
	cs, err := conformance.LoadCases(conformancefixtures.FS, ".")
	Expect(err).NotTo(HaveOccurred())
	return cs
}

// casesE is cases for background work (no Expect).
func casesE() ([]*conformance.Case, error) { return conformance.LoadCases(conformancefixtures.FS, ".") }

// The case timeouts. An agent that finishes its cases never waits for the
// timeout, so caseTimeout is generous: under the race detector on a loaded
// 2-core machine a case of eight steps has taken over 3 s, and a timeout is
// a failed check (RUN-1), never a slow pass. hangTimeout is for the agents
// that are meant to hang: each such run costs it once (every case at once),
// and it still leaves seconds for the steps before the hang.
const (
	caseTimeout = 60 * time.Second
	hangTimeout = 5 * time.Second
	// settleWindow is short: the runner waits for the model turns an agent
	// still has coming whatever the window.
	settleWindow = 50 * time.Millisecond
	// graceWindow is how long an agent has to exit once its stdin closed
	// (ACP-EXIT-1): generous, as the case timeout, because the suite runs
	// some hundred agents at once on two cores (a Python agent has taken
	// over a second to exit there), and agents that exit never wait for it.
	graceWindow = 5 * time.Second
)

// timeoutFor is the case timeout of a breakage's run: short only for a
// breakage that hangs or crashes the agent (it fails RUN-1).
func timeoutFor(b breakage.Breakage) time.Duration {
	if b.FailsCheck("RUN-1") {
		return hangTimeout
	}
	return caseTimeout
}

// run runs the catalogue against t, every case at once (a run then takes
// as long as its longest case).
func run(t conformance.Target, mod func(*conformance.Config)) *conformance.Report {
	rep, err := runE(t, mod)
	Expect(err).NotTo(HaveOccurred())
	return rep
}

// runE is run for background work (no Expect).
func runE(t conformance.Target, mod func(*conformance.Config)) (*conformance.Report, error) {
	cs, err := casesE()
	if err != nil {
		return nil, err
	}
	cfg := conformance.Config{Agent: t, Cases: cs, Timeout: caseTimeout, Grace: graceWindow, Parallel: len(cs), Validator: validator,
		Settle: settleWindow}
	if mod != nil {
		mod(&cfg)
	}
	rep, err := conformance.Run(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", t.Name, err)
	}
	return rep, nil
}

// runEachE calls one(i) for every i in [0, n), at most `at` of them at
// once, and returns the reports in order of i (or the first error).
func runEachE(at, n int, one func(i int) (*conformance.Report, error)) ([]*conformance.Report, error) {
	reps, errs := make([]*conformance.Report, n), make([]error, n)
	sem := make(chan struct{}, at)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			reps[i], errs[i] = one(i)
		}()
	}
	wg.Wait()
	return reps, errors.Join(errs...)
}

// plannedRun is a catalogue run a spec of an Ordered container judges.
type plannedRun struct {
	target conformance.Target
	mod    func(*conformance.Config)
}

// runsBeforeAll declares, in an Ordered container, the runs its specs
// judge: a BeforeAll runs them all, four at a time (each starts every case
// at once), and each spec takes its report by name. The runs then cost
// about one round instead of one run each; they start only when a spec of
// the container runs.
func runsBeforeAll(plan func() map[string]plannedRun) func(name string) *conformance.Report {
	var reps map[string]*conformance.Report
	BeforeAll(func() {
		runs := plan()
		names := make([]string, 0, len(runs))
		for n := range runs {
			names = append(names, n)
		}
		slices.Sort(names)
		got, err := runEachE(4, len(names), func(i int) (*conformance.Report, error) {
			return runE(runs[names[i]].target, runs[names[i]].mod)
		})
		Expect(err).NotTo(HaveOccurred())
		reps = map[string]*conformance.Report{}
		for i, n := range names {
			reps[n] = got[i]
		}
	})
	return func(name string) *conformance.Report {
		rep, ok := reps[name]
		Expect(ok).To(BeTrue(), "no planned run %q", name)
		return rep
	}
}

// explain is the summary table, for failure messages.
func explain(rep *conformance.Report) string {
	var b strings.Builder
	_ = rep.WriteSummary(&b)
	for _, c := range rep.Cases {
		if c.Error != "" {
			fmt.Fprintf(&b, "case %s: %s\n", c.ID, c.Error)
		}
	}
	return b.String()
}

var _ = Describe("the reference agent", func() {
	It("passes every MUST and SHOULD check (and the INFO ones)", func() {
		rep := run(reference(), nil)
		Expect(rep.Dialect).To(Equal(conformance.DialectTodoWrite))
		Expect(rep.DialectSource).To(Equal("detected"))
		for _, c := range rep.Checks {
			Expect(c.Outcome).To(Equal(conformance.Pass), "%s (%s): %s\n%s", c.ID, c.Level, c.Reason, explain(rep))
		}
		Expect(rep.OK).To(BeTrue())
		Expect(rep.Checks).To(HaveLen(len(conformance.Catalogue())))
	})
})

// suiteBreakages are the registry's breakages of the agents this suite
// runs (all but the runner tests' fake agent).
func suiteBreakages() []breakage.Breakage {
	var out []breakage.Breakage
	for _, b := range breakage.All() {
		if b.Layer != breakage.Fake {
			out = append(out, b)
		}
	}
	return out
}

// breakageTarget is the agent that carries b.
func breakageTarget(b breakage.Breakage) conformance.Target {
	t, err := breakageTargetE(b)
	Expect(err).NotTo(HaveOccurred())
	return t
}

// breakageTargetE is breakageTarget for background work (no Expect).
func breakageTargetE(b breakage.Breakage) (conformance.Target, error) {
	switch b.Layer {
	case breakage.Bridge:
		if b.FailsCheck("RUN-1") {
			// Hanging and crashing are about the process: the runner's
			// timeout kills its group, the crash is its exit status.
			return asProcess(withFault(b.Name)), nil
		}
		return withFault(b.Name), nil
	case breakage.Tool:
		return mutant(b.Name), nil
	case breakage.Composition:
		configs := map[string]string{"allow-parallel-in-progress": "allowParallelInProgress: true"}
		cfg, ok := configs[b.Name]
		if !ok {
			return conformance.Target{}, fmt.Errorf("no composition for breakage %s", b.Name)
		}
		t := reference()
		t.Name = "composition " + b.Name
		t.Command = referenceArgs("--composition", "{{.Cwd}}/composition.yaml")
		t.Files = []conformance.File{{Dest: "composition.yaml", Src: "inline",
			Content: "plugins:\n  - name: todo\n    config:\n      " + cfg + "\n"}}
		return t, nil
	case breakage.Protocol:
		commands := map[string][]string{
			"silent-on-initialize": {"/bin/sh", "-c", "cat >/dev/null"},
			"banner-on-stdout":     append([]string{"/bin/sh", "-c", `echo "agent starting..."; exec "$0" "$@"`}, referenceArgs()...),
		}
		cmd, ok := commands[b.Name]
		if !ok {
			return conformance.Target{}, fmt.Errorf("no command for breakage %s", b.Name)
		}
		// The banner agent execs the reference agent: it needs its environment.
		return conformance.Target{Name: "protocol " + b.Name, Command: cmd, Env: selfexec.Environ("todoharness")}, nil
	case breakage.Example:
		return exampleAgentE(b.Name)
	}
	return conformance.Target{}, fmt.Errorf("breakage %s: no agent of this suite carries layer %s", b.Label(), b.Layer)
}

// Its specs wait for background work (early): they run last, after the
// specs that keep the cores busy meanwhile.
var _ = Describe("breaking one behaviour at a time", Ordered, ContinueOnFailure, SpecPriority(-1), func() {
	var (
		mu      sync.Mutex
		results = map[string]*conformance.Report{}
	)
	// The runs are independent: they run in the background from the start
	// of the suite (early), several at once, the hanging ones first (each
	// waits out its timeout; the others finish meanwhile).
	breakageRuns := earlyWork("the breakage table's runs", true, func() (map[string]*conformance.Report, error) {
		var bs []breakage.Breakage
		for _, b := range suiteBreakages() {
			if _, missing := python3(); missing != "" && b.Layer == breakage.Example {
				continue // skipped below, saying why
			}
			bs = append(bs, b)
		}
		slices.SortStableFunc(bs, func(a, b breakage.Breakage) int {
			return cmp.Compare(timeoutFor(b), timeoutFor(a))
		})
		reps, err := runEachE(6, len(bs), func(i int) (*conformance.Report, error) {
			t, err := breakageTargetE(bs[i])
			if err != nil {
				return nil, err
			}
			return runE(t, func(c *conformance.Config) {
				c.Timeout = timeoutFor(bs[i])
				if bs[i].FailsCheck("RUN-1") {
					// The agent cannot show its tools when it hangs
					// or dies: no probe to wait out first.
					c.Dialect = conformance.DialectTodoWrite
				}
			})
		})
		if err != nil {
			return nil, err
		}
		out := map[string]*conformance.Report{}
		for i, b := range bs {
			out[b.Label()] = reps[i]
		}
		return out, nil
	})
	BeforeAll(func() {
		got := breakageRuns()
		mu.Lock()
		defer mu.Unlock()
		maps.Copy(results, got)
	})

	var entries []TableEntry
	for _, b := range suiteBreakages() {
		entries = append(entries, Entry(b.Label(), b))
	}
	DescribeTable("fails exactly these checks", func(b breakage.Breakage) {
		if _, missing := python3(); missing != "" && b.Layer == breakage.Example {
			Skip(missing)
		}
		rep := results[b.Label()]
		Expect(rep).NotTo(BeNil())
		Expect(rep.FailedIDs()).To(Equal(b.Fails), "%s\n%s", b.Why, explain(rep))
		// The run fails exactly when a MUST check does (a breakage of a
		// SHOULD rule is reported, the run passes).
		failsMust := false
		for _, c := range conformance.Catalogue() {
			failsMust = failsMust || (c.Level == conformance.MUST && b.FailsCheck(c.ID))
		}
		Expect(rep.OK).To(Equal(!failsMust), "verdict %s\n%s", rep.Verdict, explain(rep))
	}, entries)

	It("fails every MUST check with at least one breakage", func() {
		var never []string
		for _, c := range conformance.Catalogue() {
			if c.Level != conformance.MUST {
				continue
			}
			failed := false
			for _, b := range suiteBreakages() {
				if rep := results[b.Label()]; rep != nil && b.FailsCheck(c.ID) && slices.Contains(rep.FailedIDs(), c.ID) {
					failed = true
				}
			}
			if !failed {
				never = append(never, c.ID)
			}
		}
		Expect(never).To(BeEmpty(), "MUST checks no breakage of the registry (internal/breakage) fails")
	})
})

var _ = Describe("the expected-failures baseline", func() {
	baseline := []conformance.ExpectedFailure{{ID: "TW-COUNTS-1", Reason: "this agent words its counts differently"}}

	It("lets a listed failure pass the run", func() {
		rep := run(withFault("wrong-counts"), func(c *conformance.Config) { c.Expected = baseline })
		c, _ := rep.Check("TW-COUNTS-1")
		Expect(c.Outcome).To(Equal(conformance.XFail))
		Expect(c.Expected).NotTo(BeEmpty())
		Expect(rep.OK).To(BeTrue(), explain(rep))
	})

	It("fails the run on a stale entry (a listed check that passes)", func() {
		rep := run(reference(), func(c *conformance.Config) { c.Expected = baseline })
		Expect(rep.Stale).To(Equal([]string{"TW-COUNTS-1"}))
		Expect(rep.OK).To(BeFalse())
		Expect(explain(rep)).To(ContainSubstring("STALE"))
	})
})

var _ = Describe("a broken agent is a failed case, never a hung runner", SpecPriority(-1), func() {
	type brokenRun struct {
		rep  *conformance.Report
		took time.Duration
	}
	// Each run waits out its case timeout: they run in the background from
	// the start of the suite (early).
	broken := func(script string) func() brokenRun {
		return earlyWork("broken agent "+script, true, func() (brokenRun, error) {
			start := time.Now()
			cs, err := casesE()
			if err != nil {
				return brokenRun{}, err
			}
			rep, err := runE(conformance.Target{Command: []string{"/bin/sh", "-c", script}}, func(c *conformance.Config) {
				c.Timeout, c.Grace, c.Dialect = 2*time.Second, 200*time.Millisecond, conformance.DialectTodoWrite
				for _, cs := range cs {
					if cs.ID == "plan-basic" {
						c.Cases = []*conformance.Case{cs}
					}
				}
			})
			return brokenRun{rep: rep, took: time.Since(start)}, err
		})
	}
	DescribeTable("within the case timeout",
		func(got func() brokenRun, reason string) {
			r := got()
			rep := r.rep
			Expect(r.took).To(BeNumerically("<", 6*time.Second))
			Expect(rep.Cases).To(HaveLen(1))
			Expect(rep.Cases[0].Completed).To(BeFalse())
			Expect(rep.OK).To(BeFalse())
			run1, _ := rep.Check("RUN-1")
			Expect(run1.Outcome).To(Equal(conformance.Fail))
			Expect(run1.Reason).To(ContainSubstring(reason))
		},
		Entry("hung (its whole process group is killed)", broken(`sleep 600 & echo "child started" >&2; wait`), "child started"),
		Entry("crashing", broken(`read line; echo "panic: boom" >&2; exit 2`), "exit status 2"),
		Entry("writing non-JSON to stdout", broken(`echo "Welcome!"; cat >/dev/null`), "deadline"),
	)
})

var _ = Describe("dialects", Ordered, ContinueOnFailure, func() {
	dialects := []string{conformance.DialectOpencode, conformance.DialectCodex, conformance.DialectGemini, conformance.DialectClaude}
	report := runsBeforeAll(func() map[string]plannedRun {
		runs := map[string]plannedRun{}
		for _, d := range dialects {
			runs[d] = plannedRun{target: mutant("as-" + d)}
		}
		return runs
	})
	DescribeTable("an agent speaking another dialect is detected and driven in it",
		func(dialect string) {
			Expect(dialects).To(ContainElement(dialect))
			rep := report(dialect)
			Expect(rep.Dialect).To(Equal(dialect))
			Expect(rep.DialectSource).To(Equal("detected"))
			for _, c := range rep.Checks {
				want := conformance.Pass
				if !c.AppliesTo(dialect) {
					want = conformance.NA
				}
				Expect(c.Outcome).To(Equal(want), "%s: %s\n%s", c.ID, c.Reason, explain(rep))
			}
			Expect(rep.OK).To(BeTrue())
		},
		Entry("opencode todowrite", conformance.DialectOpencode),
		Entry("codex update_plan", conformance.DialectCodex),
		Entry("gemini write_todos", conformance.DialectGemini),
		Entry("claude TodoWrite", conformance.DialectClaude),
	)
})

// conformCLI runs `todoharness conform --timeout caseTimeout ARGS` (this
// test binary) and returns its exit status and combined output.
// conformCLI runs `todoharness conform` with the suite's timeout, settle
// window and every case at once; args given later override them.
func conformCLI(args ...string) (int, string) { return conformCLIEnv(nil, args...) }

// conformWith runs conformCLI with the agent flags first.
func conformWith(agent []string, args ...string) (int, string) {
	return conformCLI(append(slices.Clone(agent), args...)...)
}

// inProcessFault is the conform flags that test the built-in reference
// agent in conform's own process with a fault: for the specs of the
// command line's reports and exit statuses, which need a failing agent,
// not a process per case (the subprocess path has its own specs).
func inProcessFault(fault string) []string {
	return []string{"--in-process", "--env", "TODOHARNESS_FAULT=" + fault}
}

// conformCLIEnv is conformCLI with env added to the command's environment.
func conformCLIEnv(env []string, args ...string) (int, string) {
	r, err := conformCLIE(env, args...)
	Expect(err).NotTo(HaveOccurred())
	return r.code, r.out
}

// cliRun is how a `todoharness conform` ended: its exit status and output.
type cliRun struct {
	code int
	out  string
}

// conformCLIE is conformCLIEnv for background work (no Expect).
func conformCLIE(env []string, args ...string) (cliRun, error) {
	base := []string{"conform", "--timeout", caseTimeout.String(), "--grace", graceWindow.String(), "--settle", settleWindow.String(), "--parallel", "12"}
	cmd := selfexec.Command("todoharness", append(base, args...)...)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return cliRun{ee.ExitCode(), string(out)}, nil
	}
	return cliRun{0, string(out)}, err
}

var _ = Describe("todoharness conform", func() {
	conform := conformCLI

	It("tests the built-in reference agent without --agent, exits 0, and writes JSON and JUnit", func() {
		dir := GinkgoT().TempDir()
		code, out := conform("--json", filepath.Join(dir, "r.json"), "--junit", filepath.Join(dir, "r.xml"))
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("PASS: every MUST check passes"))
		Expect(out).To(MatchRegexp(`\[ ?\d+/\d+\] tool-offered`))
		b, err := os.ReadFile(filepath.Join(dir, "r.json"))
		Expect(err).NotTo(HaveOccurred())
		var rep struct{ OK bool }
		Expect(json.Unmarshal(b, &rep)).To(Succeed())
		Expect(rep.OK).To(BeTrue())
		Expect(filepath.Join(dir, "r.xml")).To(BeAnExistingFile())
	})

	It("exits 1 when a MUST check fails, writes a transcript per failing case, and 0 with the failure baselined", func() {
		dir := GinkgoT().TempDir()
		agent := inProcessFault("accept-duplicates")
		code, out := conformWith(agent, "--out", filepath.Join(dir, "t"))
		Expect(code).To(Equal(1), out)
		Expect(out).To(ContainSubstring("MUST failed: TW-VALID-DUP"))
		Expect(filepath.Join(dir, "t", "reject-duplicate", "transcript.txt")).To(BeAnExistingFile())

		baseline := filepath.Join(dir, "baseline.yaml")
		Expect(os.WriteFile(baseline, []byte("- id: TW-VALID-DUP\n  reason: this agent allows duplicates\n"), 0o644)).To(Succeed())
		code, out = conformWith(agent, "--expected-failures", baseline)
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("XFAIL"))

		// The saved evidence is judged again without starting the agent
		// (a command that cannot start proves it): the same verdicts.
		code, out = conform("--agent", "/nonexistent/agent", "--judge", filepath.Join(dir, "t"))
		Expect(code).To(Equal(1), out)
		Expect(out).To(ContainSubstring("MUST failed: TW-VALID-DUP"))
		Expect(out).To(ContainSubstring("no agent started"))
		code, out = conform("--judge", filepath.Join(dir, "t"), "--expected-failures", baseline)
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("XFAIL"))
	})

	It("runs a user's own cases from a folder", func() {
		dir := GinkgoT().TempDir()
		Expect(os.MkdirAll(filepath.Join(dir, "my-case"), 0o755)).To(Succeed())
		Expect(os.WriteFile(filepath.Join(dir, "my-case", "case.yaml"), []byte(`title: two writes in one prompt, the second completes the first task
checks: [TW-PLAN-1, TW-REPLACE-1]
steps:
  - op: initialize
  - op: newSession
  - op: prompt
    text: Plan, then mark progress, then reply DONE.
script:
  - toolCalls:
      - name: todo_write
        arguments: {todos: [{content: draft the release notes, status: in_progress}]}
  - toolCalls:
      - name: todo_write
        arguments: {todos: [{content: draft the release notes, status: completed}, {content: tag the release, status: in_progress}]}
  - text: DONE
`), 0o644)).To(Succeed())
		code, out := conform("--no-builtin", "--cases", dir)
		// Its checks pass; the MUST checks it does not feed are not judged:
		// INCOMPLETE (exit 3), never PASS.
		Expect(code).To(Equal(3), out)
		Expect(out).To(ContainSubstring("my-case"))
		Expect(out).To(MatchRegexp(`TW-REPLACE-1\s+MUST\s+PASS`))
		Expect(out).To(ContainSubstring("NOT RUN (no selected case feeds them): "))
		Expect(out).To(MatchRegexp(`INCOMPLETE: MUST checks not judged: .*TW-LOAD-1, TW-LOAD-2 \(no selected case feeds them\)`))
	})

	It("lists the presets, and explains one with the wire API, the dialect and every file and variable it writes", func() {
		code, out := conform("--list-presets")
		Expect(code).To(Equal(0), out)
		for _, p := range conformance.Presets() {
			Expect(out).To(MatchRegexp(`(?m)^%s\s.*%s\s+%s`, p.Name, p.Wire, p.Dialect))
		}
		code, out = conform("--preset", "codex", "--explain")
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("wire API:  openai-responses"))
		Expect(out).To(ContainSubstring("file ~/.codex/config.toml (in the throw-away home)"))
		Expect(out).To(ContainSubstring(`base_url = "http://127.0.0.1:PORT/v1"`))
		Expect(out).To(ContainSubstring("CODEX_HOME=/tmp/conform-CASE-home-XXXX/.codex"))
		Expect(out).To(ContainSubstring("timeout:   2m0s"))
		// --agent replaces the command, --env adds to the preset's.
		code, out = conform("--preset", "claude", "--agent", "my-claude-acp --flag", "--env", "EXTRA=1", "--explain")
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("command:   my-claude-acp --flag"))
		Expect(out).To(ContainSubstring("ANTHROPIC_BASE_URL=http://127.0.0.1:PORT\n"))
		Expect(out).To(ContainSubstring("    EXTRA=1"))
		code, out = conform("--preset", "nope")
		Expect(code).To(Equal(2), out)
		Expect(out).To(ContainSubstring("known: reference, opencode, codex, gemini, claude"))
	})

	It("runs the reference preset, and a preset's wiring with --agent replacing its command", func() {
		code, out := conform("--preset", "reference", "--case", "plan-basic")
		Expect(code).To(Equal(3), out) // narrowed: INCOMPLETE
		Expect(out).To(ContainSubstring("model API: openai-chat"))
		// The codex preset's home and config, with the mutant speaking
		// codex's dialect over OpenAI Responses standing in for codex-acp.
		agent := bins.mutant + " --wire responses --model-url {{.BaseURL}} --sessions {{.Cwd}}/.sessions"
		args := []string{"--preset", "codex", "--agent", agent, "--env", "TODOHARNESS_MUTANT=as-codex", "--timeout", caseTimeout.String()}
		for _, kv := range selfexec.Environ("mutant") {
			args = append(args, "--env", kv)
		}
		code, out = conform(args...)
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("dialect: codex (detected)"))
		Expect(out).To(ContainSubstring("model API: openai-responses"))
		Expect(out).To(ContainSubstring("agent: codex preset, " + bins.mutant))
	})

	It("warns when the agent command names a file relative to the runner's directory (the agent runs in the case's)", func() {
		wd, err := os.Getwd()
		Expect(err).NotTo(HaveOccurred())
		// doc.go is in this test's directory, not in a case's.
		code, out := conform("--agent", "/bin/sh doc.go", "--timeout", "5s", "--grace", "100ms")
		Expect(code).To(Equal(1), out)
		Expect(out).To(ContainSubstring(`conform: warning: "doc.go" in the agent command is a path relative to this directory, but the agent runs in each case's own temporary directory: give it as ` + filepath.Join(wd, "doc.go")))
	})

	It("exits 2 when the run cannot start", func() {
		code, out := conform("--expected-failures", "/nonexistent/baseline.yaml")
		Expect(code).To(Equal(2), out)
	})

	// Every mistake of the command line is found before any agent starts
	// (the agent would write started.txt): exit 2, the valid names listed,
	// the nearest one suggested.
	DescribeTable("refuses a bad command line before any agent starts",
		func(want string, args ...string) {
			dir := GinkgoT().TempDir()
			marker := filepath.Join(dir, "started.txt")
			agent := "/bin/sh -c 'touch " + marker + "; exec " + bins.todoharness + " agent --model-url {{.BaseURL}}'"
			args = slices.Clone(args)
			for i, a := range args {
				if body, ok := strings.CutPrefix(a, "BASELINE:"); ok {
					a = filepath.Join(dir, "baseline.yaml")
					Expect(os.WriteFile(a, []byte(body), 0o644)).To(Succeed())
				}
				args[i] = a
			}
			code, out := conform(append([]string{"--agent", agent, "--env", selfexec.Environ("todoharness")[0]}, args...)...)
			Expect(code).To(Equal(2), out)
			Expect(out).To(ContainSubstring(want))
			Expect(marker).NotTo(BeAnExistingFile(), "an agent started")
		},
		Entry("a mistyped template variable", "unknown template variable {{.Nope}}: did you mean", "--env", "X={{.Nope}}"),
		Entry("a close typo", "did you mean {{.BaseURL}}?", "--env", "X={{.BaseUrl}}"),
		Entry("--in-process beside --agent", "--in-process runs the built-in reference agent: not with --agent", "--in-process"),
		Entry("a --check that matches nothing", `--check "TW-PLAN-9" matches no check: did you mean TW-PLAN-1? (checks: `, "--check", "TW-PLAN-9"),
		Entry("a --case that matches nothing", `--case "plan-basc" matches no case: did you mean plan-basic? (cases: `, "--case", "plan-basc"),
		Entry("an unwritable --json", "--json /dev/null/r.json: cannot write there", "--json", "/dev/null/r.json"),
		Entry("an unknown --format", `unknown format "yaml" (formats: text, github)`, "--format", "yaml"),
		Entry("a mistyped --format", `unknown format "githb": did you mean github?`, "--format", "githb"),
		Entry("--json - outside --list", "--json -: stdout is the summary's; give a FILE", "--json", "-"),
		Entry("an unwritable --out", "--out /dev/null/t", "--out", "/dev/null/t"),
		Entry("a baseline naming an unknown check", `unknown check "TW-PLAN-9": did you mean TW-PLAN-1?`, "--expected-failures", "BASELINE:- id: TW-PLAN-9\n  reason: x\n"),
		Entry("a --repeat under 1", "--repeat 0: want at least 1", "--repeat", "0"),
		Entry("a --settle that is not positive", "--settle 0s: want a positive duration", "--settle", "0"),
		Entry("a baseline naming an unknown case", `no case matches "plan-basik": did you mean plan-basic?`, "--expected-failures", "BASELINE:- id: TW-PLAN-1\n  reason: x\n  cases: [plan-basik]\n"),
	)

	// Both runs wait out case timeouts: they run in the background from
	// the start of the suite (early).
	silent := []string{"--agent", "/bin/sh -c 'cat >/dev/null'", "--timeout", "1s", "--grace", "100ms"}
	stopRun := earlyWork("conform a silent agent", true, func() (cliRun, error) { return conformCLIE(nil, silent...) })
	keepGoingRun := earlyWork("conform a silent agent --keep-going", true, func() (cliRun, error) {
		return conformCLIE(nil, append(slices.Clone(silent), "--keep-going", "--parallel", "20")...)
	})
	It("stops at once, with one failure, when the first case cannot get initialize answered; --keep-going runs every case", SpecPriority(-1), func() {
		r := stopRun()
		code, out := r.code, r.out
		Expect(code).To(Equal(1), out)
		Expect(out).To(ContainSubstring("stopping: tool-offered could not get initialize answered; the other"))
		Expect(out).To(ContainSubstring("FAIL: MUST failed: RUN-1, ACP-INIT-1"))
		Expect(strings.Count(out, "ERROR ")).To(Equal(1), out)
		r = keepGoingRun()
		code, out = r.code, r.out
		Expect(code).To(Equal(1), out)
		Expect(strings.Count(out, "ERROR ")).To(BeNumerically(">", 1), out)
	})

	It("keeps and judges the updates an agent sends after its prompt answer, every run alike (--repeat, --settle), in the summary, JSON and JUnit", func() {
		dir := GinkgoT().TempDir()
		agent := inProcessFault("updates-after-response")
		code, out := conformWith(agent, "--case", "plan-basic", "--case", "replace", "--check", "TW-PLAN-1", "--check", "TW-REPLACE-1", "--check", "ACP-TURN-1",
			"--repeat", "3", "--settle", settleWindow.String(), "--json", filepath.Join(dir, "r.json"), "--junit", filepath.Join(dir, "r.xml"))
		Expect(code).To(Equal(1), out) // ACP-TURN-1 is a MUST check
		Expect(out).To(MatchRegexp(`TW-PLAN-1\s+MUST\s+PASS`))
		Expect(out).To(MatchRegexp(`ACP-TURN-1\s+MUST\s+FAIL\s+plan-basic: prompt 1: \d+ update\(s\) of the turn \(tool_call, plan, tool_call_update`))
		Expect(out).To(ContainSubstring("runs: every case 3 times; 0 check(s) flaky"))
		Expect(out).To(ContainSubstring("(run 3/3)"))
		var rep struct {
			Repeat int `json:"repeat"`
			Checks []struct {
				ID   string `json:"id"`
				Runs []struct {
					Run     int    `json:"run"`
					Outcome string `json:"outcome"`
				} `json:"runs"`
			} `json:"checks"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "r.json"))
		Expect(err).NotTo(HaveOccurred())
		Expect(json.Unmarshal(b, &rep)).To(Succeed())
		Expect(rep.Repeat).To(Equal(3))
		for _, c := range rep.Checks {
			Expect(c.Runs).To(HaveLen(3), c.ID)
		}
		x, err := os.ReadFile(filepath.Join(dir, "r.xml"))
		Expect(err).NotTo(HaveOccurred())
		Expect(string(x)).To(MatchRegexp(`(?s)<testcase name="ACP-TURN-1: [^"]*" classname="conformance.MUST"[^>]*>\s*<failure message="plan-basic: prompt 1: `))
	})

	It("reports only the --check checks, running only the cases that feed them", func() {
		agent := inProcessFault("accept-duplicates")
		code, out := conformWith(agent, "--check", "TW-VALID-D*", "--check", "TW-LOAD-1")
		Expect(code).To(Equal(1), out)
		Expect(out).To(MatchRegexp(`TW-VALID-DUP\s+MUST\s+FAIL`))
		Expect(out).To(MatchRegexp(`TW-LOAD-1\s+MUST\s+PASS`))
		Expect(out).To(ContainSubstring("2 checks: 1 pass, 1 fail"))
		Expect(out).NotTo(ContainSubstring("reject-empty"))
	})

	It("prints GitHub annotations next to the summary with --format github, and fails on SHOULD failures with --strict", func() {
		dir := GinkgoT().TempDir()
		agent := inProcessFault("no-priority")
		junit := filepath.Join(dir, "r.xml")
		code, out := conformWith(agent, "--check", "TW-PLAN-PRIORITY-*", "--format", "github", "--junit", junit, "--out", filepath.Join(dir, "t"))
		Expect(code).To(Equal(1), out)
		Expect(out).To(MatchRegexp(`TW-PLAN-PRIORITY-1\s+MUST\s+FAIL`)) // the summary is still there
		Expect(out).To(MatchRegexp(`(?m)^::error title=TW-PLAN-PRIORITY-1::MUST TW-PLAN-PRIORITY-1 fails: .*%0Acase \S+: `))
		Expect(out).To(MatchRegexp(`(?m)^::warning title=TW-PLAN-PRIORITY-2::SHOULD TW-PLAN-PRIORITY-2 fails: .*without --strict`))
		Expect(out).To(ContainSubstring("FAIL: MUST failed: TW-PLAN-PRIORITY-1\n"))
		b, err := os.ReadFile(junit)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(b)).To(ContainSubstring(`failures="1"`))

		// The same evidence under --strict: the SHOULD failure fails the run.
		code, out = conform("--judge", filepath.Join(dir, "t"), "--check", "TW-PLAN-PRIORITY-*", "--strict", "--format", "github", "--junit", junit)
		Expect(code).To(Equal(1), out)
		Expect(out).To(MatchRegexp(`(?m)^::error title=TW-PLAN-PRIORITY-2::`))
		Expect(out).To(ContainSubstring("FAIL: MUST failed: TW-PLAN-PRIORITY-1; SHOULD failed (--strict): TW-PLAN-PRIORITY-2\n"))
		b, err = os.ReadFile(junit)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(b)).To(ContainSubstring(`failures="2"`))
		// Without --format github: no annotations.
		_, out = conform("--judge", filepath.Join(dir, "t"))
		Expect(out).NotTo(ContainSubstring("::error"))
	})

	It("lists the catalogue and the cases, narrowed by --case and --check, as JSON with --json", func() {
		list := func(args ...string) (checks, cases []string, version int) {
			code, out := conform(append([]string{"--list", "--json", "-"}, args...)...)
			Expect(code).To(Equal(0), out)
			var l struct {
				CatalogueVersion int
				ToolVersion      string
				Checks           []struct{ ID string }
				Cases            []struct{ ID string }
			}
			Expect(json.Unmarshal([]byte(out), &l)).To(Succeed(), out)
			Expect(l.ToolVersion).NotTo(BeEmpty())
			for _, c := range l.Checks {
				checks = append(checks, c.ID)
			}
			for _, c := range l.Cases {
				cases = append(cases, c.ID)
			}
			return checks, cases, l.CatalogueVersion
		}
		checks, cs, version := list()
		Expect(version).To(Equal(conformance.CatalogueVersion))
		var all []string
		for _, c := range conformance.Catalogue() {
			all = append(all, c.ID)
		}
		Expect(checks).To(Equal(all))
		Expect(cs).To(HaveLen(len(cases())))

		checks, cs, _ = list("--check", "TW-LOAD-*")
		Expect(checks).To(Equal([]string{"TW-LOAD-CAP-1", "TW-LOAD-1", "TW-LOAD-2"}))
		Expect(cs).To(ConsistOf("load-replay", "load-after-several"))

		checks, cs, _ = list("--case", "reject-empty")
		Expect(cs).To(Equal([]string{"reject-empty"}))
		Expect(checks).To(ContainElements("RUN-1", "TW-VALID-EMPTY"))
		Expect(checks).NotTo(ContainElement("TW-LOAD-1"))

		// The table honours them too, and --json FILE writes the file.
		code, out := conform("--list", "--case", "reject-empty")
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("TW-VALID-EMPTY"))
		Expect(out).NotTo(ContainSubstring("TW-LOAD-1"))
		file := filepath.Join(GinkgoT().TempDir(), "list.json")
		code, out = conform("--list", "--json", file)
		Expect(code).To(Equal(0), out)
		Expect(file).To(BeAnExistingFile())
	})

	It("writes the failures as a baseline that makes the same agent pass, and says where --keep kept the cases", func() {
		dir := GinkgoT().TempDir()
		agent := inProcessFault("accept-duplicates")
		baseline := filepath.Join(dir, "b", "baseline.yaml")
		code, out := conformWith(agent, "--write-baseline", baseline, "--keep")
		Expect(code).To(Equal(1), out)
		Expect(out).To(MatchRegexp(`kept reject-duplicate: working directory (\S+), home \S+`))
		kept := regexp.MustCompile(`kept reject-duplicate: working directory (\S+),`).FindStringSubmatch(out)[1]
		Expect(kept).To(BeADirectory())
		DeferCleanup(os.RemoveAll, kept)
		b, err := os.ReadFile(baseline)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(b)).To(ContainSubstring("- id: TW-VALID-DUP\n  reason: TODO\n  cases: [reject-duplicate]\n"))
		code, out = conformWith(agent, "--expected-failures", baseline)
		Expect(code).To(Equal(0), out)
	})

	It("says it was interrupted on Ctrl-C, exits 130, and blames nothing on the agent", func() {
		cmd := selfexec.Command("todoharness", "conform", "--agent", "/bin/sh -c 'cat >/dev/null'", "--timeout", "10m")
		stderr, err := cmd.StderrPipe()
		Expect(err).NotTo(HaveOccurred())
		var stdout strings.Builder
		cmd.Stdout = &stdout
		Expect(cmd.Start()).To(Succeed())
		// Signal once the run has started (its first line).
		line, err := bufio.NewReader(stderr).ReadString('\n')
		Expect(err).NotTo(HaveOccurred())
		Expect(line).To(HavePrefix("conform: "))
		Expect(cmd.Process.Signal(os.Interrupt)).To(Succeed())
		go func() { _, _ = io.Copy(io.Discard, stderr) }()
		err = cmd.Wait()
		var ee *exec.ExitError
		Expect(errors.As(err, &ee)).To(BeTrue(), "exit: %v\n%s", err, stdout.String())
		Expect(ee.ExitCode()).To(Equal(130), stdout.String())
		Expect(stdout.String()).To(ContainSubstring("INTERRUPTED: the run was interrupted (context canceled)"))
		Expect(stdout.String()).NotTo(MatchRegexp(`RUN-1\s+MUST\s+FAIL`))
	})
})
