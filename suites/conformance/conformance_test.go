package conformance

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/cmd/todoharness/cli"
	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/breakage"
	"github.com/todoharness/todoharness/conformance/report"
	"github.com/todoharness/todoharness/driver"
	conformancefixtures "github.com/todoharness/todoharness/fixtures/conformance"
	"github.com/todoharness/todoharness/internal/testutil/selfexec"
	mutantagent "github.com/todoharness/todoharness/suites/conformance/mutant"
)

// referenceArgs runs the reference agent against the mock, sessions kept in
// the case's directory (what `todoharness conform` does without --agent).
func referenceArgs(extra ...string) []string {
	return append([]string{bins.todoharness, "agent", "--model-url", "{{.BaseURL}}", "--sessions", "{{.Cwd}}/.sessions"}, extra...)
}

// The reference agent and the mutant run in this process
// (driver.Target.InProcess: the same command line, environment and
// working directory, on pipes), as etcd's framework runs one test body
// against in-process and subprocess members: a suite of a hundred catalogue
// runs then starts no process for most of them. The specs of `conform`
// without --agent run the same agent as a process (this test binary, see
// TestMain): "one body, two targets" gets the same verdicts.
func reference() driver.Target {
	return driver.Target{Name: "reference", Command: referenceArgs(), Env: selfexec.Environ("todoharness"),
		InProcess: cli.InProcessAgent}
}

func withFault(fault string) driver.Target {
	t := reference()
	t.Name, t.Env = "fault "+fault, append(t.Env, "TODOHARNESS_FAULT="+fault)
	return t
}

func mutant(m string) driver.Target {
	return driver.Target{Name: "mutant " + m, Command: []string{bins.mutant, "--model-url", "{{.BaseURL}}", "--sessions", "{{.Cwd}}/.sessions"},
		Env: append(selfexec.Environ("mutant"), "TODOHARNESS_MUTANT="+m), InProcess: mutantagent.InProcess}
}

func cases() []*conformance.Case {
	cs, err := casesE()
	Expect(err).NotTo(HaveOccurred())
	return cs
}

// casesE is cases for background work (no Expect): the built-in catalogue,
// parsed once for the suite's eighty runs (a run only reads its cases), in
// a slice of the caller's own.
func casesE() ([]*conformance.Case, error) {
	cs, err := builtinCases()
	return slices.Clone(cs), err
}

var builtinCases = sync.OnceValues(func() ([]*conformance.Case, error) {
	return conformance.LoadCases(conformancefixtures.FS, ".")
})

// The case timeouts bound a failure; no spec measures them. An agent that
// finishes its cases never waits for one, so caseTimeout is generous: a
// timeout is a failed check (RUN-1), never a slow pass. hangTimeout is for
// the agents that are meant to hang, whose runs wait it out: they are
// agents in this process or /bin/sh scripts, whose steps before the hang
// take milliseconds, so it is still a thousand times what it bounds. The
// specs about a hang prove its cause (the step the report says was waited
// for, the process group killed), not how long it took.
const (
	caseTimeout = 60 * time.Second
	hangTimeout = 5 * time.Second
	// settleWindow is short: the runner waits for the model turns an agent
	// still has coming whatever the window.
	settleWindow = 50 * time.Millisecond
	// graceWindow is how long an agent has to exit once its stdin closed
	// (ACP-EXIT-1): generous, as the case timeout; agents that exit never
	// wait for it.
	graceWindow = 5 * time.Second
	// lateSettle is the settle window of the runs of an agent that sends
	// updates after a prompt's answer (the CLI spec about them, the
	// breakage rows that fail ACP-TURN-1): generous, since they must arrive
	// within it, before the next step, on a loaded machine too.
	lateSettle = time.Second
)

// timeoutFor is the case timeout of a breakage's run: short only for a
// breakage that hangs or crashes the agent (it fails RUN-1).
func timeoutFor(b breakage.Breakage) time.Duration {
	if b.FailsCheck("RUN-1") {
		return hangTimeout
	}
	return caseTimeout
}

// settleFor is the settle window of a breakage's run: lateSettle for a
// breakage whose updates come after the answer (it fails ACP-TURN-1),
// settleWindow for the others.
func settleFor(b breakage.Breakage) time.Duration {
	if b.FailsCheck("ACP-TURN-1") {
		return lateSettle
	}
	return settleWindow
}

// parallelFor is how many of a run's n cases run at once: all of them for
// an agent in this process (goroutines that mostly wait on their settle
// windows and the file system), and no more agent processes than this
// machine has CPUs, so that each is served well within its timeout however
// slow the machine (the race detector, other work beside the suite).
func parallelFor(t driver.Target, n int) int {
	if t.InProcess != nil {
		return n
	}
	return max(1, min(n, runtime.NumCPU()))
}

// runE runs the catalogue against t (parallelFor's cases at once), for a
// spec's work (no Expect).
func runE(t driver.Target, mod func(*conformance.Config)) (*conformance.Report, error) {
	cs, err := casesE()
	if err != nil {
		return nil, err
	}
	cfg := conformance.Config{Agent: t, Cases: cs, Timeout: caseTimeout, Grace: graceWindow, Validator: conformance.Compiled(validator),
		Settle: settleWindow}
	if mod != nil {
		mod(&cfg)
	}
	if cfg.Parallel == 0 {
		cfg.Parallel = parallelFor(cfg.Agent, len(cfg.Cases))
	}
	rep, err := conformance.Run(context.Background(), cfg)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", t.Name, err)
	}
	return rep, nil
}

// plannedRun is a catalogue run a spec judges: target builds the agent
// when the run starts (the programs under test are known from BeforeSuite
// on).
type plannedRun struct {
	target func() driver.Target
	mod    func(*conformance.Config)
}

// plannedRuns gives the runs a container's specs judge, by name: each run
// is made the first time a spec asks for it (once), in that spec.
func plannedRuns(plan map[string]plannedRun) func(name string) *conformance.Report {
	runs := map[string]func() *conformance.Report{}
	for n, p := range plan {
		runs[n] = once(func() (*conformance.Report, error) { return runE(p.target(), p.mod) })
	}
	return func(name string) *conformance.Report {
		get, ok := runs[name]
		Expect(ok).To(BeTrue(), "no planned run %q", name)
		return get()
	}
}

// explained is a failure message for Expect: format and args, then the
// report's summary (explain), made only when the assertion fails. Made
// eagerly, the summaries of every check of every report were a twentieth of
// this suite's CPU (docs/performance.md).
func explained(rep *conformance.Report, format string, args ...any) func() string {
	return func() string {
		if format == "" {
			return explain(rep)
		}
		return fmt.Sprintf(format, args...) + "\n" + explain(rep)
	}
}

// explain is the summary table, for failure messages.
func explain(rep *conformance.Report) string {
	var b strings.Builder
	_ = report.WriteSummary(&b, rep, false)
	for _, c := range rep.Cases {
		if c.Error != "" {
			fmt.Fprintf(&b, "case %s: %s\n", c.ID, c.Error)
		}
	}
	return b.String()
}

var _ = Describe("the reference agent", func() {
	refRun := once(func() (*conformance.Report, error) { return runE(reference(), nil) })
	It("passes every MUST and SHOULD check (and the INFO ones)", func() {
		rep := refRun()
		Expect(rep.Dialect).To(Equal(driver.DialectTodoWrite))
		Expect(rep.DialectSource).To(Equal("detected"))
		for _, c := range rep.Checks {
			Expect(c.Outcome).To(Equal(cleanOutcome(rep, c.Check)), explained(rep, "%s (%s): %s", c.ID, c.Level, c.Reason))
		}
		Expect(rep.OK).To(BeTrue())
		Expect(rep.Checks).To(HaveLen(len(conformance.Catalogue())))
	})

	// Pooled, as conform runs by default: the same verdicts, and the
	// cases that restart the agent ran pooled too, at one start each: the
	// first part in a pooled process their restart retired, the load in a
	// fresh process started in its folders.
	refPooled := once(func() (*conformance.Report, error) {
		// Four cases at once, not every case (an in-process agent's
		// default): each pooled process serves several, one after another.
		return runE(reference(), func(c *conformance.Config) { c.Pool, c.Parallel = true, 4 })
	})
	It("passes every check pooled too, its restart cases loading in a fresh process that joins the pool", func() {
		rep, off := refPooled(), refRun()
		Expect(rep.Pool).To(Equal(conformance.PoolOn))
		Expect(rep.FailedIDs()).To(Equal(off.FailedIDs()), explained(rep, "pooled"))
		for _, c := range rep.Checks {
			Expect(c.Outcome).To(Equal(cleanOutcome(rep, c.Check)), explained(rep, "%s (%s): %s", c.ID, c.Level, c.Reason))
		}
		restarts := 0
		for _, cr := range rep.Cases {
			ev := cr.Evidence()
			if !ev.Case.Restarts() {
				continue
			}
			restarts++
			Expect(ev.Procs).To(HaveLen(2), "case %s", cr.ID)
			Expect(ev.Procs[0].Retired).NotTo(BeEmpty(), "case %s: its first process was not a pooled one its restart retired (%q)", cr.ID, ev.Procs[0].Pooled)
			Expect(ev.Procs[1].Loader).NotTo(BeEmpty(), "case %s: its load ran in %q", cr.ID, ev.Procs[1].Pooled)
			Expect(ev.Procs[1].PoolStore).To(Equal(ev.Procs[0].PoolStore), "case %s", cr.ID)
		}
		Expect(restarts).To(BeNumerically(">", 0), "no case of the catalogue restarts the agent")
	})

	// ACP v2 (Draft) on request: the same catalogue, each check judged on
	// the v2 surface; the v1 plan fallback rule has no counterpart there
	// and says so (n/a, never a pass).
	refV2 := once(func() (*conformance.Report, error) {
		return runE(reference(), func(c *conformance.Config) { c.Offer.ACPVersion = driver.ACPv2 })
	})
	It("negotiates protocol version 2 when offered it and passes every check there (ACP-PLAN-FALLBACK-1 n/a)", func() {
		rep := refV2()
		Expect(rep.Protocol.Offered).To(Equal(driver.ACPv2))
		Expect(rep.Protocol.Negotiated).To(Equal(driver.ACPv2), explained(rep, "protocol %s", rep.Protocol))
		for _, c := range rep.Checks {
			want := cleanOutcome(rep, c.Check)
			if c.ID == conformance.ACPPlanFallback1 {
				want = conformance.NA
			}
			Expect(c.Outcome).To(Equal(want), explained(rep, "%s (%s): %s", c.ID, c.Level, c.Reason))
		}
		Expect(rep.OK).To(BeTrue())
		for _, cr := range rep.Cases {
			for _, s := range cr.Evidence().Steps {
				if s.Op == driver.OpPrompt && s.Error == "" {
					Expect(s.IdleSeq).To(BeNumerically(">", 0), "case %s, prompt %d: no idle state_update ended the turn", cr.ID, s.Prompt+1)
				}
			}
		}
	})

	// v1 with clientCapabilities.plan: the agent sends plan_update, which
	// the plan checks read; the fallback rule is lifted (n/a), and the
	// v1 draft's plan_update is listed by ACP-SCHEMA-2 (INFO) only.
	refPlanOps := once(func() (*conformance.Report, error) {
		return runE(reference(), func(c *conformance.Config) { c.Offer.PlanOps = true })
	})
	It("sends plan_update to a v1 client that advertised plan, and passes every check there (ACP-PLAN-FALLBACK-1 n/a)", func() {
		rep := refPlanOps()
		Expect(rep.Protocol.Negotiated).To(Equal(driver.ACPv1))
		Expect(rep.Protocol.PlanOps).To(BeTrue())
		for _, c := range rep.Checks {
			want := cleanOutcome(rep, c.Check)
			switch c.ID {
			case conformance.ACPPlanFallback1:
				want = conformance.NA
			case conformance.ACPSchema2:
				want = conformance.Fail
			}
			Expect(c.Outcome).To(Equal(want), explained(rep, "%s (%s): %s", c.ID, c.Level, c.Reason))
		}
		Expect(rep.OK).To(BeTrue())
		updates, plans := 0, 0
		for _, cr := range rep.Cases {
			for _, m := range cr.Evidence().Wire {
				switch m.UpdateKind() {
				case "plan_update":
					updates++
				case "plan":
					plans++
				}
			}
		}
		Expect(updates).To(BeNumerically(">", 0))
		Expect(plans).To(BeZero(), "a v1 plan beside the plan_updates")
	})
})

// cleanOutcome is what a run of the built-in cases against an agent that
// keeps the contract gives check c: a pass, or n/a where c does not apply
// (another dialect; a check of sessions that share a process, when every
// case had a process of its own: no built-in case opens two sessions).
func cleanOutcome(rep *conformance.Report, c conformance.Check) conformance.Outcome {
	if !c.AppliesTo(rep.Dialect) || c.Shared && rep.Pool == conformance.PoolOff {
		return conformance.NA
	}
	return conformance.Pass
}

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
func breakageTarget(b breakage.Breakage) driver.Target {
	t, err := breakageTargetE(b)
	Expect(err).NotTo(HaveOccurred())
	return t
}

// breakageTargetE is breakageTarget for background work (no Expect).
func breakageTargetE(b breakage.Breakage) (driver.Target, error) {
	switch b.Layer {
	case breakage.Bridge:
		// Hanging and crashing in this process too: the runner ends a
		// hung in-process agent as it kills a process group, and the
		// crash is its exit status (the broken agents below are the
		// processes whose group is killed).
		return withFault(b.Name), nil
	case breakage.Tool:
		return mutant(b.Name), nil
	case breakage.Composition:
		configs := map[string]string{"allow-parallel-in-progress": "allowParallelInProgress: true"}
		cfg, ok := configs[b.Name]
		if !ok {
			return driver.Target{}, fmt.Errorf("no composition for breakage %s", b.Name)
		}
		t := reference()
		t.Name = "composition " + b.Name
		t.Command = referenceArgs("--composition", "{{.Cwd}}/composition.yaml")
		t.Files = []driver.File{{Dest: "composition.yaml", Src: "inline",
			Content: "plugins:\n  - name: todo\n    config:\n      " + cfg + "\n"}}
		return t, nil
	case breakage.Protocol:
		commands := map[string][]string{
			"silent-on-initialize": {"/bin/sh", "-c", "cat >/dev/null"},
			"banner-on-stdout":     append([]string{"/bin/sh", "-c", `echo "agent starting..."; exec "$0" "$@"`}, referenceArgs()...),
		}
		cmd, ok := commands[b.Name]
		if !ok {
			return driver.Target{}, fmt.Errorf("no command for breakage %s", b.Name)
		}
		// The banner agent execs the reference agent: it needs its environment.
		return driver.Target{Name: "protocol " + b.Name, Command: cmd, Env: selfexec.Environ("todoharness")}, nil
	case breakage.Example:
		return exampleAgentE(b.Name)
	}
	return driver.Target{}, fmt.Errorf("breakage %s: no agent of this suite carries layer %s", b.Label(), b.Layer)
}

var _ = Describe("breaking one behaviour at a time", Ordered, ContinueOnFailure, func() {
	// The runs are independent, one after another: those that hang wait
	// out hangTimeout once (every case at once, in this process). Each
	// row runs twice: with a process per case (results) and with pooled
	// agent processes, conform's default (pooled).
	type rowRun struct {
		label string
		pool  bool
		get   func() *conformance.Report
	}
	var runs []rowRun
	for _, b := range suiteBreakages() {
		for _, pool := range []bool{false, true} {
			runs = append(runs, rowRun{b.Label(), pool, once(func() (*conformance.Report, error) {
				if _, missing := python3(); missing != "" && b.Layer == breakage.Example {
					return nil, nil // skipped below, saying why
				}
				t, err := breakageTargetE(b)
				if err != nil {
					return nil, err
				}
				return runE(t, func(c *conformance.Config) {
					c.Timeout, c.Settle, c.Pool = timeoutFor(b), settleFor(b), pool
					c.Offer.ACPVersion = b.ACPVersion // a fault of the v2 surface runs on v2
					if b.FailsCheck("RUN-1") {
						// The agent cannot show its tools when it hangs
						// or dies: no probe to wait out first.
						c.Dialect = driver.DialectTodoWrite
					}
					if b.FailsPooled != nil {
						// One case at a time: the pooled processes serve
						// several sessions, one after another, in the
						// run's order. Two at once made which list a
						// session inherits (shared-todo-list) depend on the
						// schedule: one inherited list equal to the
						// session's own first write, which the isolation
						// check cannot tell from its own, left TW-PLAN-1
						// FLAKY once in 11 runs.
						c.Parallel = 1
					}
				})
			})})
		}
	}
	results, pooled := map[string]*conformance.Report{}, map[string]*conformance.Report{}
	BeforeAll(func() {
		for _, r := range runs {
			if r.pool {
				pooled[r.label] = r.get()
			} else {
				results[r.label] = r.get()
			}
		}
	})
	AfterAll(func() {
		// $TODOHARNESS_POOL_TABLE names a folder for the table of every
		// row's failing checks in both modes (docs/performance.md;
		// scripts/pool-table.sh).
		if dir := os.Getenv("TODOHARNESS_POOL_TABLE"); dir != "" {
			var rows []breakage.PoolRow
			for _, b := range suiteBreakages() {
				rows = append(rows, poolRow(b, results[b.Label()], pooled[b.Label()]))
			}
			Expect(os.WriteFile(filepath.Join(dir, "suite.md"), []byte(breakage.PoolTable(rows)), 0o644)).To(Succeed())
		}
	})

	var entries []TableEntry
	for _, b := range suiteBreakages() {
		entries = append(entries, Entry(b.Label(), b))
	}
	DescribeTable("fails exactly these checks, with a process per case and pooled", func(b breakage.Breakage) {
		if _, missing := python3(); missing != "" && b.Layer == breakage.Example {
			Skip(missing)
		}
		for mode, rep := range map[string]*conformance.Report{conformance.PoolOff: results[b.Label()], conformance.PoolOn: pooled[b.Label()]} {
			want := b.Fails
			if mode == conformance.PoolOn {
				want = b.Pooled()
			}
			// The run fails exactly when a MUST check does (a breakage
			// of a SHOULD rule is reported, the run passes).
			failsMust := slices.ContainsFunc(conformance.Catalogue(), func(c conformance.Check) bool {
				return c.Level == conformance.MUST && slices.Contains(want, c.ID)
			})
			Expect(rep).NotTo(BeNil(), "pool %s", mode)
			Expect(rep.Pool).To(Equal(mode))
			Expect(rep.FailedIDs()).To(Equal(want), explained(rep, "pool %s: %s", mode, b.Why))
			Expect(rep.OK).To(Equal(!failsMust), explained(rep, "pool %s: verdict %s", mode, rep.Verdict))
			if b.FailsPooled != nil {
				// What it failed pooled passed alone and is explained by
				// what the sessions showed: none is left flaky.
				Expect(rep.Flaky).To(BeEmpty(), explained(rep, "pool %s: flaky", mode))
			}
		}
	}, entries)

	It("runs the cases that restart the agent pooled in the pooled runs", func() {
		// Each at one start: its first part in a pooled process its
		// restart retired, its load in a fresh process in that one's
		// folders (or, failing there, again alone in fresh processes).
		n := 0
		for _, rep := range pooled {
			for _, cr := range rep.Cases {
				ev := cr.Evidence()
				if pf := ev.PooledFailure; pf != nil && pf.Evidence != nil {
					ev = pf.Evidence
				}
				if ev.Case.Restarts() && len(ev.Procs) == 2 && ev.Procs[0].Retired != "" && ev.Procs[1].Loader != "" {
					n++
				}
			}
		}
		Expect(n).To(BeNumerically(">", 0), "no case that restarts the agent ran pooled")
	})

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
				if rep := pooled[b.Label()]; rep != nil && slices.Contains(b.Pooled(), c.ID) && slices.Contains(rep.FailedIDs(), c.ID) {
					failed = true
				}
			}
			if !failed {
				never = append(never, c.ID)
			}
		}
		Expect(never).To(BeEmpty(), "MUST checks no breakage of the registry (conformance/breakage) fails")
	})
})

var _ = Describe("the expected-failures baseline", func() {
	baseline := []conformance.ExpectedFailure{{ID: "TW-COUNTS-1", Reason: "this agent words its counts differently"}}
	withBaseline := func(c *conformance.Config) { c.Expected = baseline }
	report := plannedRuns(map[string]plannedRun{
		"listed": {target: func() driver.Target { return withFault("wrong-counts") }, mod: withBaseline},
		"stale":  {target: reference, mod: withBaseline},
	})

	It("lets a listed failure pass the run", func() {
		rep := report("listed")
		c, _ := rep.Check("TW-COUNTS-1")
		Expect(c.Outcome).To(Equal(conformance.XFail))
		Expect(c.Expected).NotTo(BeEmpty())
		Expect(rep.OK).To(BeTrue(), explained(rep, ""))
	})

	It("fails the run on a stale entry (a listed check that passes)", func() {
		rep := report("stale")
		Expect(rep.Stale).To(Equal([]string{"TW-COUNTS-1"}))
		Expect(rep.OK).To(BeFalse())
		Expect(explain(rep)).To(ContainSubstring("STALE"))
	})
})

var _ = Describe("a broken agent is a failed case, never a hung runner", func() {
	// broken is the one-case run of a /bin/sh agent; those that hang wait
	// out hangTimeout (a /bin/sh script starts in milliseconds).
	broken := func(script string) func() *conformance.Report {
		return once(func() (*conformance.Report, error) {
			cs, err := casesE()
			if err != nil {
				return nil, err
			}
			return runE(driver.Target{Command: []string{"/bin/sh", "-c", script}}, func(c *conformance.Config) {
				c.Timeout, c.Grace, c.Dialect = hangTimeout, 200*time.Millisecond, driver.DialectTodoWrite
				for _, cs := range cs {
					if cs.ID == "plan-basic" {
						c.Cases = []*conformance.Case{cs}
					}
				}
			})
		})
	}
	// The cause of each ending is in the report: RUN-1's reason, and for a
	// hung agent the case timeout that ended it and the descendants that
	// were still running and killed with its group. No spec times it.
	DescribeTable("ends the case, says why, and leaves no process behind",
		func(got func() *conformance.Report, reasons []string, killed string) {
			rep := got()
			Expect(rep.Cases).To(HaveLen(1))
			Expect(rep.Cases[0].Completed).To(BeFalse())
			Expect(rep.OK).To(BeFalse())
			run1, _ := rep.Check("RUN-1")
			Expect(run1.Outcome).To(Equal(conformance.Fail))
			for _, r := range reasons {
				Expect(run1.Reason).To(ContainSubstring(r))
			}
			ev := rep.Cases[0].Evidence()
			Expect(ev.Procs).To(HaveLen(1))
			// (The others' `cat` may be the shell itself or its child,
			// as the shell decides: no claim about them.)
			if killed != "" {
				Expect(ev.Procs[0].Killed).To(ContainElement(ContainSubstring(killed)), "the descendants the runner killed")
			}
		},
		Entry("hung: the case timeout kills its whole process group, the child it started too",
			broken(`sleep 600 & echo "child started" >&2; wait`),
			[]string{"child started", "case timeout " + hangTimeout.String() + ": the agent's process group was killed"}, "(sleep)"),
		Entry("crashing: its exit status, long before any timeout",
			broken(`read line; echo "panic: boom" >&2; exit 2`), []string{"exit status 2"}, ""),
		Entry("writing non-JSON to stdout: the case timeout, waiting for initialize",
			broken(`echo "Welcome!"; cat >/dev/null`), []string{"deadline", "case timeout " + hangTimeout.String()}, ""),
	)
})

var _ = Describe("dialects", func() {
	dialects := []string{driver.DialectOpencode, driver.DialectCodex, driver.DialectGemini, driver.DialectClaude}
	plan := map[string]plannedRun{}
	for _, d := range dialects {
		plan[d] = plannedRun{target: func() driver.Target { return mutant("as-" + d) }}
	}
	report := plannedRuns(plan)
	DescribeTable("an agent speaking another dialect is detected and driven in it",
		func(dialect string) {
			Expect(dialects).To(ContainElement(dialect))
			rep := report(dialect)
			Expect(rep.Dialect).To(Equal(dialect))
			Expect(rep.DialectSource).To(Equal("detected"))
			for _, c := range rep.Checks {
				Expect(c.Outcome).To(Equal(cleanOutcome(rep, c.Check)), explained(rep, "%s: %s", c.ID, c.Reason))
			}
			Expect(rep.OK).To(BeTrue())
		},
		Entry("opencode todowrite", driver.DialectOpencode),
		Entry("codex update_plan", driver.DialectCodex),
		Entry("gemini write_todos", driver.DialectGemini),
		Entry("claude TodoWrite", driver.DialectClaude),
	)
})

// The conform specs run `todoharness conform` in this process (conformCLIE:
// cli.Run, stdout and stderr on one buffer as a process's combined output
// is): the same command line gets the same exit status and output, without
// a process start, runtime init and schema compilation per run. These stay
// processes (conformProcessE: this test binary running the todoharness
// program, see TestMain), for what only a process has:
//   - Ctrl-C: SIGINT goes to a process, whose Main turns it into the
//     cancelled run, the INTERRUPTED verdict and exit status 130;
//   - conform without --agent (the built-in reference agent, a user's own
//     cases) and the reference preset: their agent is `os.Executable()
//     agent`, which in this test binary runs the todoharness program only
//     when the environment the agents inherit (conformance builds it from
//     os.Environ()) has $TODOHARNESS_TEST_PROGRAM, as a child of
//     selfexec.Command has, and not this process;
//   - the example agent run the way the docs say: its PATH (the resolved
//     python3 first) must be the environment that conform's agents get,
//     and that their bare command is looked up in: a process's own;
//   - the updates an agent sends after its prompt answer (--repeat,
//     --settle): they must reach the runner within the settle window after
//     the last message, every run; an agent in conform's own process
//     (--in-process there) is not scheduled among this suite's goroutines.
//     Its settle window (lateSettle) is generous for the same reason.

// conformArgs is `conform` with the suite's timeout, grace and settle
// window, every case at once when its agent runs in conform's process
// (--in-process) and as many as this machine has CPUs when its agents are
// processes (parallelFor), then args (which override them).
func conformArgs(args []string) []string {
	parallel := runtime.NumCPU()
	if slices.Contains(args, "--in-process") {
		parallel = 64
	}
	base := []string{"conform", "--timeout", caseTimeout.String(), "--grace", graceWindow.String(), "--settle", settleWindow.String(),
		"--parallel", fmt.Sprint(parallel)}
	return append(base, args...)
}

// conformCLI runs `todoharness conform` (conformArgs) in this process and
// returns its exit status and combined output.
func conformCLI(args ...string) (int, string) {
	r := conformCLIE(args...)
	return r.code, r.out
}

// conformWithE runs conformCLIE with the agent flags first.
func conformWithE(agent []string, args ...string) cliRun {
	return conformCLIE(append(slices.Clone(agent), args...)...)
}

// inProcessFault is the conform flags that test the built-in reference
// agent in conform's own process with a fault: for the specs of the
// command line's reports and exit statuses, which need a failing agent,
// not a process per case (the subprocess path has its own specs).
func inProcessFault(fault string) []string {
	return []string{"--in-process", "--env", "TODOHARNESS_FAULT=" + fault}
}

// cliRun is how a `todoharness conform` ended: its exit status and output.
type cliRun struct {
	code int
	out  string
}

// conformCLIE is conformCLI for background work (no Expect): the command
// line in this process, on an empty stdin, stdout and stderr written to
// one buffer in the order written, as a process's combined output (conform
// writes both from its own goroutine, and its progress lines one at a time:
// conformance.Config.Progress need not be safe for concurrent use). Its
// runs validate with the suite's validator, compiled once.
func conformCLIE(args ...string) cliRun {
	var out strings.Builder
	ctx := cli.WithSchemaValidator(context.Background(), validator)
	code := cli.Run(ctx, conformArgs(args), strings.NewReader(""), &out, &out)
	return cliRun{code, out.String()}
}

// conformProcessE runs `todoharness conform` (conformArgs) as a process
// (this test binary), with env added to its environment, and returns its
// exit status and combined output (no Expect: background work calls it).
func conformProcessE(env []string, args ...string) (cliRun, error) {
	cmd := selfexec.Command("todoharness", conformArgs(args)...)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); ok {
		return cliRun{ee.ExitCode(), string(out)}, nil
	}
	if err != nil {
		return cliRun{}, fmt.Errorf("conform process: %w", err)
	}
	return cliRun{0, string(out)}, nil
}

// cliWork is how the conform runs of a spec's work ended, in order, and
// the folder they wrote in (workDir).
type cliWork struct {
	dir  string
	runs []cliRun
}

// onceCLI is once for work that runs conform command lines, one after
// another, in a folder of its own.
func onceCLI(fn func(dir string) ([]cliRun, error)) func() cliWork {
	return once(func() (cliWork, error) {
		dir, err := workDir()
		if err != nil {
			return cliWork{}, err
		}
		runs, err := fn(dir)
		return cliWork{dir: dir, runs: runs}, err
	})
}

// The specs that judge a run make it when they first ask for it (once,
// onceCLI).
var _ = Describe("todoharness conform", func() {
	conform := conformCLI

	// A process: without --agent (see conformCLIE).
	builtin := onceCLI(func(dir string) ([]cliRun, error) {
		r, err := conformProcessE(nil, "--json", filepath.Join(dir, "r.json"), "--junit", filepath.Join(dir, "r.xml"), "--out", filepath.Join(dir, "ev"))
		return []cliRun{r}, err
	})
	It("tests the built-in reference agent without --agent, exits 0, and writes JSON and JUnit", func() {
		w := builtin()
		dir, code, out := w.dir, w.runs[0].code, w.runs[0].out
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("PASS: every MUST check passes"))
		Expect(out).To(MatchRegexp(`\[ ?\d+/\d+\] tool-offered`))
		b, err := os.ReadFile(filepath.Join(dir, "r.json"))
		Expect(err).NotTo(HaveOccurred())
		var rep struct{ OK bool }
		Expect(json.Unmarshal(b, &rep)).To(Succeed())
		Expect(rep.OK).To(BeTrue())
		Expect(filepath.Join(dir, "r.xml")).To(BeAnExistingFile())
		// The built-in agent as a process reports when it is idle
		// (driver.Target.IdleReport): its settles end on that report. On
		// a loaded machine the agent can be descheduled between its answer
		// and its report for longer than the settle's quiet, so a step may
		// end on the wires' quiet instead; never on the case's timeout, and
		// most steps on the report (none would, were the report not wired).
		evs, err := filepath.Glob(filepath.Join(dir, "ev", "*", conformance.EvidenceFile))
		Expect(err).NotTo(HaveOccurred())
		Expect(evs).To(HaveLen(len(cases())))
		var byReport, otherwise int
		var others []string
		for _, f := range evs {
			b, err := os.ReadFile(f)
			Expect(err).NotTo(HaveOccurred())
			var ev struct{ Steps []driver.StepResult }
			Expect(json.Unmarshal(b, &ev)).To(Succeed())
			for _, st := range ev.Steps {
				switch {
				case st.Settled == "":
				case strings.HasPrefix(st.Settled, "the agent reported it had nothing more to send"):
					byReport++
				default:
					Expect(st.Settled).NotTo(ContainSubstring("timed out"), "%s step %d (%s)", f, st.Index+1, st.Op)
					otherwise++
					others = append(others, fmt.Sprintf("%s step %d (%s): %s", filepath.Base(filepath.Dir(f)), st.Index+1, st.Op, st.Settled))
				}
			}
		}
		Expect(byReport).To(BeNumerically(">", otherwise), "settles that did not end on the agent's idle report:\n%s", strings.Join(others, "\n"))
	})

	failing := onceCLI(func(dir string) ([]cliRun, error) {
		agent := inProcessFault("accept-duplicates")
		runs := []cliRun{conformWithE(agent, "--out", filepath.Join(dir, "t"))}
		baseline := filepath.Join(dir, "baseline.yaml")
		if err := os.WriteFile(baseline, []byte("- id: TW-VALID-DUP\n  reason: this agent allows duplicates\n"), 0o644); err != nil {
			return nil, fmt.Errorf("write the baseline: %w", err)
		}
		runs = append(runs, conformWithE(agent, "--expected-failures", baseline))
		// The saved evidence is judged again without starting the agent
		// (a command that cannot start proves it): the same verdicts.
		runs = append(runs, conformCLIE("--agent", "/nonexistent/agent", "--judge", filepath.Join(dir, "t")))
		runs = append(runs, conformCLIE("--judge", filepath.Join(dir, "t"), "--expected-failures", baseline))
		return runs, nil
	})
	It("exits 1 when a MUST check fails, writes a transcript per failing case, and 0 with the failure baselined", func() {
		w := failing()
		dir, code, out := w.dir, w.runs[0].code, w.runs[0].out
		Expect(code).To(Equal(1), out)
		Expect(out).To(ContainSubstring("MUST failed: TW-VALID-DUP"))
		Expect(filepath.Join(dir, "t", "reject-duplicate", "transcript.txt")).To(BeAnExistingFile())

		code, out = w.runs[1].code, w.runs[1].out
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("XFAIL"))

		code, out = w.runs[2].code, w.runs[2].out
		Expect(code).To(Equal(1), out)
		Expect(out).To(ContainSubstring("MUST failed: TW-VALID-DUP"))
		Expect(out).To(ContainSubstring("no agent started"))
		code, out = w.runs[3].code, w.runs[3].out
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("XFAIL"))
	})

	// A process: without --agent (see conformCLIE).
	ownCases := onceCLI(func(dir string) ([]cliRun, error) {
		if err := os.MkdirAll(filepath.Join(dir, "my-case"), 0o755); err != nil {
			return nil, fmt.Errorf("the case folder: %w", err)
		}
		if err := os.WriteFile(filepath.Join(dir, "my-case", "case.yaml"), []byte(`title: two writes in one prompt, the second completes the first task
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
`), 0o644); err != nil {
			return nil, fmt.Errorf("the case: %w", err)
		}
		r, err := conformProcessE(nil, "--no-builtin", "--cases", dir)
		return []cliRun{r}, err
	})
	It("runs a user's own cases from a folder", func() {
		r := ownCases().runs[0]
		code, out := r.code, r.out
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
		for _, p := range driver.Presets() {
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

	// A process: the reference preset's agent is os.Executable() (see
	// conformCLIE).
	referencePreset := once(func() (cliRun, error) {
		return conformProcessE(nil, "--preset", "reference", "--case", "plan-basic")
	})
	// The codex preset's home and config, with the mutant speaking codex's
	// dialect over OpenAI Responses standing in for codex-acp.
	codexPreset := once(func() (cliRun, error) {
		agent := bins.mutant + " --wire responses --model-url {{.BaseURL}} --sessions {{.Cwd}}/.sessions"
		args := []string{"--preset", "codex", "--agent", agent, "--env", "TODOHARNESS_MUTANT=as-codex", "--timeout", caseTimeout.String()}
		for _, kv := range selfexec.Environ("mutant") {
			args = append(args, "--env", kv)
		}
		return conformCLIE(args...), nil
	})
	It("runs the reference preset, and a preset's wiring with --agent replacing its command", func() {
		r := referencePreset()
		code, out := r.code, r.out
		Expect(code).To(Equal(3), out) // narrowed: INCOMPLETE
		Expect(out).To(ContainSubstring("model API: openai-chat"))
		r = codexPreset()
		code, out = r.code, r.out
		Expect(code).To(Equal(0), out)
		Expect(out).To(ContainSubstring("dialect: codex (detected)"))
		Expect(out).To(ContainSubstring("model API: openai-responses"))
		Expect(out).To(ContainSubstring("agent: codex preset, " + bins.mutant))
	})

	// doc.go is in this test's directory, not in a case's.
	relative := once(func() (cliRun, error) {
		return conformCLIE("--agent", "/bin/sh doc.go", "--timeout", "5s", "--grace", "100ms"), nil
	})
	It("warns when the agent command names a file relative to the runner's directory (the agent runs in the case's)", func() {
		wd, err := os.Getwd()
		Expect(err).NotTo(HaveOccurred())
		r := relative()
		code, out := r.code, r.out
		Expect(code).To(Equal(2), out) // sh exits before initialize: the run could not start
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
		Entry("an unknown --format", `unknown format "yaml" (formats: text, github, markdown)`, "--format", "yaml"),
		Entry("a mistyped --format", `unknown format "githb": did you mean github?`, "--format", "githb"),
		Entry("an unwritable --out", "--out /dev/null/t", "--out", "/dev/null/t"),
		Entry("a baseline naming an unknown check", `unknown check "TW-PLAN-9": did you mean TW-PLAN-1?`, "--expected-failures", "BASELINE:- id: TW-PLAN-9\n  reason: x\n"),
		Entry("a --repeat under 1", "--repeat 0: want at least 1", "--repeat", "0"),
		Entry("a --settle that is not positive", "--settle 0s: want a positive duration", "--settle", "0"),
		Entry("a baseline naming an unknown case", `no case matches "plan-basik": did you mean plan-basic?`, "--expected-failures", "BASELINE:- id: TW-PLAN-1\n  reason: x\n  cases: [plan-basik]\n"),
	)

	// Both runs wait out case timeouts (1 s: cat starts in milliseconds).
	silent := []string{"--agent", "/bin/sh -c 'cat >/dev/null'", "--timeout", "1s", "--grace", "100ms"}
	stopRun := once(func() (cliRun, error) { return conformCLIE(silent...), nil })
	keepGoingRun := once(func() (cliRun, error) {
		return conformCLIE(append(slices.Clone(silent), "--keep-going", "--parallel", "20")...), nil
	})
	It("stops at once, with one failure, when the first case cannot get initialize answered; --keep-going runs every case", func() {
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

	// A process: the agent's late updates must reach the runner within
	// the settle window (see conformCLIE).
	updatesAfter := onceCLI(func(dir string) ([]cliRun, error) {
		args := append(inProcessFault("updates-after-response"), "--case", "plan-basic", "--case", "replace", "--check", "TW-PLAN-1", "--check", "TW-REPLACE-1", "--check", "ACP-TURN-1",
			"--repeat", "3", "--settle", lateSettle.String(), "--json", filepath.Join(dir, "r.json"), "--junit", filepath.Join(dir, "r.xml"))
		r, err := conformProcessE(nil, args...)
		return []cliRun{r}, err
	})
	It("keeps and judges the updates an agent sends after its prompt answer, every run alike (--repeat, --settle), in the summary, JSON and JUnit", func() {
		w := updatesAfter()
		dir, code, out := w.dir, w.runs[0].code, w.runs[0].out
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

	onlyChecks := once(func() (cliRun, error) {
		return conformWithE(inProcessFault("accept-duplicates"), "--check", "TW-VALID-D*", "--check", "TW-LOAD-1"), nil
	})
	It("reports only the --check checks, running only the cases that feed them", func() {
		r := onlyChecks()
		code, out := r.code, r.out
		Expect(code).To(Equal(1), out)
		Expect(out).To(MatchRegexp(`TW-VALID-DUP\s+MUST\s+FAIL`))
		Expect(out).To(MatchRegexp(`TW-LOAD-1\s+MUST\s+PASS`))
		Expect(out).To(ContainSubstring("2 checks: 1 pass, 1 fail"))
		Expect(out).NotTo(ContainSubstring("reject-empty"))
	})

	// githubRuns are the runs of the --format github spec and the JUnit
	// report each of the first two wrote (the second overwrites it).
	type githubRuns struct {
		runs  []cliRun
		junit []string
	}
	github := once(func() (githubRuns, error) {
		var g githubRuns
		dir, err := workDir()
		if err != nil {
			return g, err
		}
		junit := filepath.Join(dir, "r.xml")
		readJUnit := func() error {
			b, err := os.ReadFile(junit)
			g.junit = append(g.junit, string(b))
			if err != nil {
				return fmt.Errorf("read the JUnit report: %w", err)
			}
			return nil
		}
		g.runs = append(g.runs, conformWithE(inProcessFault("no-priority"), "--check", "TW-PLAN-PRIORITY-*", "--format", "github", "--junit", junit, "--out", filepath.Join(dir, "t")))
		if err := readJUnit(); err != nil {
			return g, err
		}
		// The same evidence under --strict: the SHOULD failure fails the run.
		g.runs = append(g.runs, conformCLIE("--judge", filepath.Join(dir, "t"), "--check", "TW-PLAN-PRIORITY-*", "--strict", "--format", "github", "--junit", junit))
		if err := readJUnit(); err != nil {
			return g, err
		}
		// Without --format github: no annotations.
		g.runs = append(g.runs, conformCLIE("--judge", filepath.Join(dir, "t")))
		return g, nil
	})
	It("prints GitHub annotations next to the summary with --format github, and fails on SHOULD failures with --strict", func() {
		g := github()
		code, out := g.runs[0].code, g.runs[0].out
		Expect(code).To(Equal(1), out)
		Expect(out).To(MatchRegexp(`TW-PLAN-PRIORITY-1\s+MUST\s+FAIL`)) // the summary is still there
		Expect(out).To(MatchRegexp(`(?m)^::error title=TW-PLAN-PRIORITY-1::MUST TW-PLAN-PRIORITY-1 fails: .*%0Acase \S+: `))
		Expect(out).To(MatchRegexp(`(?m)^::warning title=TW-PLAN-PRIORITY-2::SHOULD TW-PLAN-PRIORITY-2 fails: .*without --strict`))
		Expect(out).To(ContainSubstring("FAIL: MUST failed: TW-PLAN-PRIORITY-1\n"))
		Expect(g.junit[0]).To(ContainSubstring(`failures="1"`))

		code, out = g.runs[1].code, g.runs[1].out
		Expect(code).To(Equal(1), out)
		Expect(out).To(MatchRegexp(`(?m)^::error title=TW-PLAN-PRIORITY-2::`))
		Expect(out).To(ContainSubstring("FAIL: MUST failed: TW-PLAN-PRIORITY-1; SHOULD failed (--strict): TW-PLAN-PRIORITY-2\n"))
		Expect(g.junit[1]).To(ContainSubstring(`failures="2"`))
		out = g.runs[2].out
		Expect(out).NotTo(ContainSubstring("::error"))
	})

	// --json - gives stdout to the JSON report alone, for a pipe (jq): the
	// summary goes to stderr; conform merge does the same.
	It("writes exactly one JSON report on stdout with --json -, the summary on stderr; conform merge too", func() {
		run := func(args ...string) (int, string, string) {
			var stdout, stderr strings.Builder
			ctx := cli.WithSchemaValidator(context.Background(), validator)
			code := cli.Run(ctx, args, strings.NewReader(""), &stdout, &stderr)
			return code, stdout.String(), stderr.String()
		}
		oneReport := func(stdout string) map[string]any {
			dec := json.NewDecoder(strings.NewReader(stdout))
			var rep map[string]any
			Expect(dec.Decode(&rep)).To(Succeed(), stdout)
			var more any
			Expect(dec.Decode(&more)).To(MatchError(io.EOF), "more than one JSON value on stdout:\n"+stdout)
			return rep
		}
		dir := GinkgoT().TempDir()
		code, stdout, stderr := run(conformArgs([]string{"--in-process", "--json", "-", "--out", dir})...)
		Expect(code).To(Equal(0), stderr)
		rep := oneReport(stdout)
		Expect(rep).To(HaveKeyWithValue("verdict", "PASS"))
		Expect(rep).To(HaveKey("checks"))
		Expect(stderr).To(MatchRegexp(`(?m)^ID +LEVEL +OUTCOME +REASON$`))
		Expect(stderr).To(ContainSubstring("PASS: every MUST check passes\n"))
		Expect(filepath.Join(dir, "-")).NotTo(BeAnExistingFile())

		code, stdout, stderr = run("conform", "merge", dir, "--json", "-")
		Expect(code).To(Equal(0), stderr)
		Expect(oneReport(stdout)).To(HaveKeyWithValue("verdict", "PASS"))
		Expect(stderr).To(ContainSubstring("PASS: every MUST check passes\n"))
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
		Expect(cs).To(ConsistOf("load-replay", "load-after-several", "unicode-content", "load-between-prompts", "cancel-after-write", "trim-edge-characters"))

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

	writeBaseline := onceCLI(func(dir string) ([]cliRun, error) {
		agent := inProcessFault("accept-duplicates")
		baseline := filepath.Join(dir, "b", "baseline.yaml")
		runs := []cliRun{conformWithE(agent, "--write-baseline", baseline, "--keep")}
		return append(runs, conformWithE(agent, "--expected-failures", baseline)), nil
	})
	It("writes the failures as a baseline that makes the same agent pass, and says where --keep kept the cases", func() {
		w := writeBaseline()
		baseline := filepath.Join(w.dir, "b", "baseline.yaml")
		code, out := w.runs[0].code, w.runs[0].out
		Expect(code).To(Equal(1), out)
		Expect(out).To(MatchRegexp(`kept reject-duplicate: working directory (\S+), home \S+`))
		kept := regexp.MustCompile(`kept reject-duplicate: working directory (\S+),`).FindStringSubmatch(out)[1]
		Expect(kept).To(BeADirectory())
		// --keep kept every case's folders: none is left behind.
		for _, m := range regexp.MustCompile(`(?m)^kept \S+: working directory (\S+), home (\S+)$`).FindAllStringSubmatch(out, -1) {
			DeferCleanup(os.RemoveAll, m[1])
			DeferCleanup(os.RemoveAll, m[2])
		}
		b, err := os.ReadFile(baseline)
		Expect(err).NotTo(HaveOccurred())
		Expect(string(b)).To(ContainSubstring("- id: TW-VALID-DUP\n  reason: \"TODO\"\n  cases: [\"reject-duplicate\"]\n"))
		code, out = w.runs[1].code, w.runs[1].out
		Expect(code).To(Equal(0), out)
	})

	// A process: SIGINT (see conformCLIE).
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
