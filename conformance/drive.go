package conformance

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/todoharness/todoharness/conformance/internal/slots"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/internal/buildinfo"
	"github.com/todoharness/todoharness/internal/termtext"
	"github.com/todoharness/todoharness/mockmodel"
)

// Config is one conformance run.
type Config struct {
	// Agent is the agent under test.
	Agent driver.Target
	// Cases to run (see LoadCases and fixtures/conformance). A case marked
	// probe runs first when the dialect is detected.
	Cases []*Case
	// Checks is the catalogue (nil: Catalogue()).
	Checks []Check
	// Dialect forces a dialect by name; empty detects it from the tools the
	// agent offers the model in the probe case, or from ProbeTools.
	Dialect string
	// ProbeTools, when set, are the tools an earlier run's probe saw the
	// agent offer (ProbeTools of its report): the dialect is detected from
	// them and no probe runs (its checks are not judged). For a series of
	// runs against one agent, as an exploration's batches and shrinks are.
	ProbeTools []llm.ToolSpec
	// Timeout bounds each case (0: driver.DefaultTimeout); Grace is the shutdown
	// grace period (0: driver.DefaultGrace).
	Timeout, Grace time.Duration
	// Parallel is how many cases run at once (0: the number of CPUs for
	// an agent run as a process; every case at once for one in process,
	// which starts no process and whose cases wait on the settle far more
	// than they use the CPUs).
	Parallel int
	// Only narrows the report to these check IDs (nil: every check).
	Only []string
	// Expected lists known failures (see ReadExpectedFailures).
	Expected []ExpectedFailure
	// Strict makes a failed SHOULD check fail the run, as a MUST does.
	Strict bool
	// Progress receives one line per finished case (nil: none), one write
	// at a time.
	Progress io.Writer
	// TempDir is where case working directories are made (default: the
	// system's); KeepDirs keeps them after the run.
	TempDir  string
	KeepDirs bool
	// Model is the model name offered in {{.Model}} (default "mock").
	Model string
	// Validator returns the validator that checks messages against the
	// ACP schema: Run calls it as each case ends, to judge it, and may
	// wait in it for a compilation its caller started (a sync.OnceValues
	// of driver.NewSchemaValidator started before it loaded its cases, so
	// the schema compiles on a core the loading leaves idle); its error
	// ends Run with it. Compiled(v) shares one between runs. nil: Run
	// compiles one while the first cases run.
	Validator func() (*driver.SchemaValidator, error)
	// KeepGoing runs every case even when the first one could not get
	// initialize answered (by default the run stops there: every other
	// case would time out the same way).
	KeepGoing bool
	// Policy is how many tasks may be in_progress at once: PolicySingle
	// (the default), PolicyParallel, or PolicyAuto (read from the agent's
	// tool description). It decides how TW-VALID-TWOACTIVE is judged.
	Policy string
	// Settle is how long both wires must stay quiet after a prompt is
	// answered and after the last step (0: driver.DefaultSettle); see settle.
	Settle time.Duration
	// Repeat runs every case this many times (0: once); a check whose
	// outcome differs between the runs is Flaky.
	Repeat int
	// Shard names the slice of the cases this run is ("2/4", from
	// --shard; Cases already is that slice), recorded in each case's
	// evidence (RunInfo.Shard) for conform merge.
	Shard string
	// Pool runs the cases that need no fresh process (Case.Poolable) as
	// sessions of pooled agent processes (driver.Pool), one case at a time
	// a process; the others get a process each. A case that fails in a
	// pooled process is run again alone in a fresh process before it is
	// reported (rerunAlone). With Repeat, every run is a process per case.
	Pool bool
	// Pooled is the pooled agent processes the cases lease when Pool is
	// on (NewPool): its caller's, who closes it once every run that shares
	// it is over (an exploration's batches lease the processes the earlier
	// batches started). nil: the run starts its own and closes it at its
	// end.
	Pooled *driver.Pool
	// Confirmed, when set, is asked of each case that failed as a session
	// of a pooled process (and completed), as the case ends, with each
	// MUST or SHOULD check it failed there and the check's reason: a
	// non-empty answer says the failures are already confirmed alone in a
	// fresh process (an exploration: of the signatures of failures an
	// earlier scenario confirmed), and why; the case is then not run again
	// alone, its pooled run is its evidence, and the answer is kept in it
	// (Evidence.NotRunAgain). It is called from the cases' goroutines, at
	// once. nil: every such case runs again alone.
	Confirmed func(c *Case, failed map[string]string) string
	// ConfirmedAlone, with Confirmed, is told as each case that ran alone
	// in a fresh process and completed ends (a process of its own, the
	// first and only session of a fresh pooled process, a run again alone)
	// each MUST or SHOULD check it failed, with the check's reason: what
	// Confirmed may answer for the cases still to be decided (an
	// exploration: the cases of its batch run again alone after the
	// others). It is called from the cases' goroutines, at once, in a run
	// that pools (in one that does not, no case is to be decided).
	ConfirmedAlone func(c *Case, failed map[string]string)
	// FailureKind, with Confirmed, is the kind of check's failure on c
	// (reason): of the cases that failed as sessions of pooled processes
	// with failures Confirmed does not know, one case per kind runs again
	// alone first (nil: failureShape, the run's own rule).
	FailureKind func(c *Case, check, reason string) string
	// RerunPooled is what becomes of a case that failed as a session of a
	// pooled process (not its first and only one) when Confirmed is nil:
	// RerunKnown (the default, "") runs it again alone unless each
	// failure it showed is one a case of this run confirmed alone in a
	// fresh process (a process of its own, the first and only session of
	// a fresh pooled process, a run again alone), when it ended or in the
	// first round of runs again alone, one case per kind of failure
	// still unconfirmed (rerunAlone): its pooled session is then its
	// evidence, each such check naming the case that confirmed it
	// (Evidence.NotRunAgain, ConfirmedBy). RerunEvery runs every such
	// case again alone.
	RerunPooled string
	// Offer is what each case's initialize offers the agent: the protocol
	// version (the zero value: 1; ACP v2 on request, which an agent may
	// answer with 1) and, on version 1, the plan operations capability.
	// Each process is judged on the version it negotiated.
	Offer driver.Offer
	// WaitEveryGrace gives every agent process the whole grace to exit on
	// its own after its stdin closed. By default, once one process of the
	// run did not exit within it, the others are signalled at once
	// (driver.ExitWatch) and ACP-EXIT-1 is judged on that one: a run
	// whose cases must each show it on their own (an exploration's
	// shrinks) sets it.
	WaitEveryGrace bool
	// Exits is what the run learns of how the agent exits, shared with
	// the caller's other runs of the same agent (an exploration's
	// batches): once a process of any of them did not exit within the
	// grace, the processes of the others are signalled at once too (nil:
	// the run's own; unused with WaitEveryGrace).
	Exits *driver.ExitWatch
}

// Run runs every case against the agent and judges every check. The error
// is set only when the run could not happen at all (bad configuration);
// a misbehaving agent yields failed checks, never an error.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.prepare(); err != nil {
		return nil, err
	}
	// The schema compiles while the first cases run: they need it only
	// at their end (and it takes as long as a case).
	validator := cfg.Validator
	if validator == nil {
		validator = sync.OnceValues(driver.NewSchemaValidator)
		go validator()    //nolint:errcheck // the error comes back from the next call
		defer validator() //nolint:errcheck // no compilation outlives Run
	}
	var dropHome, dropCache func()
	cfg.Agent, dropCache = NodeCompileCache(cfg)
	defer dropCache()
	cfg.Agent, dropHome = PrepareHome(ctx, cfg)
	defer dropHome()
	r := &runner{cfg: cfg, validator: validator}
	if !cfg.WaitEveryGrace {
		if r.exits = cfg.Exits; r.exits == nil {
			r.exits = driver.NewExitWatch()
		}
	}
	var own *driver.Pool // the run's own pool, not the caller's
	if cfg.Pool && cfg.Repeat == 1 {
		if r.pool = cfg.Pooled; r.pool == nil {
			r.pool = NewPool(cfg, r.exits)
			own = r.pool
			defer own.Close()
		}
	}
	var evs []*Evidence
	for run := 1; run <= cfg.Repeat; run++ {
		if run > 1 && ctx.Err() != nil {
			break // interrupted: the runs so far say so
		}
		r.run = 0
		if cfg.Repeat > 1 {
			r.run = run
		}
		got, err := r.drive(ctx)
		if err != nil {
			return nil, err
		}
		if r.pool != nil {
			if got, err = r.rerunAlone(ctx, got); err != nil {
				return nil, err
			}
		}
		evs = append(evs, got...)
	}
	if own != nil {
		// Ended before their CPU is read: each process's is its whole
		// life's.
		own.Close()
	}
	v, err := validator()
	if err != nil {
		return nil, err
	}
	rep, err := Judge(evs, JudgeConfig{Checks: cfg.Checks, Only: cfg.Only, Expected: cfg.Expected, Validator: v, Strict: cfg.Strict})
	if err == nil && own != nil {
		rep.SetPoolCPU(own.CPU())
	}
	return rep, err
}

// NewPool is the pooled agent processes of the agent cfg runs
// (Config.Pooled), which learn how it exits from exits (nil: each waits
// its whole grace): none started yet; the caller closes it.
func NewPool(cfg Config, exits *driver.ExitWatch) *driver.Pool {
	return driver.NewPool(driver.PoolConfig{Target: cfg.Agent, TempDir: cfg.TempDir, KeepDirs: cfg.KeepDirs, Model: cmp.Or(cfg.Model, "mock"),
		Grace: cmp.Or(max(cfg.Grace, 0), driver.DefaultGrace), Offer: cfg.Offer, Exits: exits})
}

// Compiled is a Config.Validator that returns v, compiled already.
func Compiled(v *driver.SchemaValidator) func() (*driver.SchemaValidator, error) {
	return func() (*driver.SchemaValidator, error) { return v, nil }
}

// prepare fills in the defaults of the configuration and checks it: the
// agent's templates, the cases, the expected failures, the policy.
func (cfg *Config) prepare() error {
	if len(cfg.Agent.Command) == 0 && cfg.Agent.InProcess == nil {
		return errors.New("conformance: no agent command")
	}
	if len(cfg.Cases) == 0 {
		return errors.New("conformance: no cases")
	}
	if cfg.Checks == nil {
		cfg.Checks = Catalogue()
	}
	cfg.Timeout = cmp.Or(max(cfg.Timeout, 0), driver.DefaultTimeout)
	cfg.Grace = cmp.Or(max(cfg.Grace, 0), driver.DefaultGrace)
	cfg.Parallel = cmp.Or(max(cfg.Parallel, 0), defaultParallel(cfg.Agent, len(cfg.Cases)))
	cfg.Model = cmp.Or(cfg.Model, "mock")
	cfg.Settle = cmp.Or(max(cfg.Settle, 0), driver.DefaultSettle)
	if cfg.Repeat < 0 {
		return fmt.Errorf("conformance: repeat %d: want at least 1", cfg.Repeat)
	}
	if err := cfg.Offer.Check(); err != nil {
		return fmt.Errorf("conformance: %w", err)
	}
	cfg.Repeat = cmp.Or(cfg.Repeat, 1)
	switch cfg.RerunPooled = cmp.Or(cfg.RerunPooled, RerunKnown); cfg.RerunPooled {
	case RerunKnown, RerunEvery:
	default:
		return fmt.Errorf("conformance: rerun pooled %q: want %s or %s", cfg.RerunPooled, RerunKnown, RerunEvery)
	}
	if err := cfg.Agent.CheckTemplates(); err != nil {
		return err
	}
	if err := checkUniqueIDs(cfg.Cases); err != nil {
		return err
	}
	for _, c := range cfg.Cases {
		if err := c.Validate(cfg.Checks); err != nil {
			return fmt.Errorf("conformance: case %s: %w", c.ID, err)
		}
	}
	if err := validateExpected(cfg.Expected, cfg.Checks); err != nil {
		return err
	}
	policy, err := ParsePolicy(cfg.Policy)
	if err != nil {
		return err
	}
	cfg.Policy = policy
	return nil
}

// drive runs every case (the probe first, when the dialect is detected)
// and returns their evidence, in the order of the cases.
//
// The first case runs alone: the probe (its tools decide the dialect) or,
// with a known dialect, the first case (a session of a pooled process when
// the run pools and it is poolable: see runCase). If the agent cannot even answer
// its initialize, the run stops there (unless KeepGoing). The others start
// once the first case's initialize is answered (at the latest when it
// ends): a hanging agent then costs one case timeout, not two. When the
// dialect is detected, their scripts are written once the first case has
// told it (the tools of its first model request, or its end): they start
// their agents, initialize and open their sessions meanwhile, and wait
// for it before their first prompt.
func (r *runner) drive(ctx context.Context) ([]*Evidence, error) {
	cfg := r.cfg
	d := &caseSet{r: r, cases: append([]*Case(nil), cfg.Cases...),
		info: RunInfo{Agent: cfg.Agent.String(), Started: time.Now(), Parallel: cfg.Parallel, Timeout: cfg.Timeout, Env: envNames(cfg.Agent.Env),
			Shard: cfg.Shard, ToolVersion: buildinfo.Version(), CatalogueVersion: CatalogueVersion, Pool: r.poolMode(), RerunPooled: r.rerunMode()}}
	if err := d.chooseFirst(); err != nil {
		return nil, err
	}
	d.evs = make([]*Evidence, len(d.cases))
	gate := newProbeGate(cfg.Dialect == "" && cfg.ProbeTools == nil)
	d.firstDone = make(chan *Evidence, 1)
	// The parallel slots (see slots): the first case takes one now.
	d.slots = slots.New(cfg.Parallel)
	_ = d.slots.Take(ctx, false) // the pool is full: it cannot wait
	d.firstSlot = slots.NewCase(d.slots)
	go func() {
		ev := r.runCase(ctx, d.cases[d.first], func(context.Context) (driver.Dialect, map[string]bool, error) {
			return d.dialect, nil, nil // the canonical or the forced one: known now
		}, gate, d.firstSlot)
		gate.open(initAnswered(ev), firstRequestTools(ev))
		d.firstDone <- ev
	}()
	d.detected = make(chan struct{})
	go func() {
		<-gate.opened
		if gate.detect && gate.tools != nil {
			d.detect(gate.tools)
		}
		close(d.detected)
	}()
	<-gate.started
	d.runOthers(ctx, d.stopEarly(gate))
	<-d.detected
	r.dialect, r.itemProps = d.dialect, d.itemProps
	for i, ev := range d.evs {
		ev.Index, ev.Run, ev.Repeat = i, d.info, r.run
	}
	return d.evs, nil
}

// caseSet is the cases of one drive (runner.drive), with what the first
// case told of the agent.
type caseSet struct {
	r     *runner
	info  RunInfo
	cases []*Case
	evs   []*Evidence
	// first is the index of the case that runs alone first; firstDone
	// gets its evidence, firstSlot is its parallel slot.
	first     int
	firstDone chan *Evidence
	firstSlot *slots.Case
	slots     *slots.Pool
	// dialect and itemProps are the agent's todo tool, final once
	// detected is closed (the first case's tools seen, or its end); the
	// other cases read them only after.
	dialect   driver.Dialect
	itemProps map[string]bool
	detected  chan struct{}
}

// dialectOf returns the agent's todo tool once it is known (caseSet.detected).
func (d *caseSet) dialectOf(ctx context.Context) (driver.Dialect, map[string]bool, error) {
	select {
	case <-d.detected:
		return d.dialect, d.itemProps, nil
	case <-ctx.Done():
		return driver.Dialect{}, nil, context.Cause(ctx)
	}
}

// chooseFirst picks the first case, and the dialect until one is
// detected: a forced one, or the canonical one, with the probe first (the
// builtin one when no case is marked probe).
func (d *caseSet) chooseFirst() error {
	if tools := d.r.cfg.ProbeTools; d.r.cfg.Dialect == "" && tools != nil {
		d.dialect, _ = driver.DialectByName(driver.DialectTodoWrite)
		d.info.DialectSource = "default (nothing detected by an earlier run)"
		if d.detect(tools); d.info.DialectSource == "detected" {
			d.info.DialectSource = "detected (by an earlier run's probe)"
		}
		return nil
	}
	if name := d.r.cfg.Dialect; name != "" {
		dl, err := driver.DialectByName(name)
		if err != nil {
			return err
		}
		d.dialect, d.info.DialectSource = dl, "forced"
		return nil
	}
	d.first = slices.IndexFunc(d.cases, func(c *Case) bool { return c.Probe })
	if d.first < 0 {
		d.cases = append([]*Case{builtinProbe()}, d.cases...)
		d.first = 0
	}
	d.dialect, _ = driver.DialectByName(driver.DialectTodoWrite)
	d.info.DialectSource = "default (nothing detected)"
	return nil
}

// detect picks the dialect of the tools the first case offered the model.
func (d *caseSet) detect(tools []llm.ToolSpec) {
	var names []string
	for _, t := range tools {
		names = append(names, t.Name)
	}
	d.info.ToolsOffered = names
	if dl, ok := driver.DetectDialect(names); ok {
		for _, t := range tools {
			if t.Name == dl.Tool {
				dl = dl.ForSchema(t.Parameters)
				d.itemProps = dl.ItemProperties(t.Parameters)
			}
		}
		d.dialect, d.info.DialectSource = dl, "detected"
	}
}

// stopEarly waits, when the first case's initialize was not answered (and
// not KeepGoing), for the first case, and reports it: the run stops when it
// could not get initialize answered. It returns why the others are not run
// ("" when they are).
func (d *caseSet) stopEarly(gate *probeGate) (notRun string) {
	if gate.initAnswered || d.r.cfg.KeepGoing {
		return ""
	}
	ev := <-d.firstDone
	if ev.Aborted == "" || initAnswered(ev) {
		d.firstDone <- ev
		return ""
	}
	<-d.detected // the first case ended: bounded
	ev.Dialect, d.evs[d.first] = d.dialect, ev
	d.r.progress(ev, len(d.cases))
	if out := d.r.cfg.Progress; out != nil {
		d.r.progressMu.Lock()
		fmt.Fprintf(out, "stopping: %s could not get initialize answered; the other %d case(s) are not run (--keep-going runs them)\n", ev.Case.ID, len(d.cases)-1)
		d.r.progressMu.Unlock()
	}
	d.firstDone <- nil // reported
	return fmt.Sprintf("not run: the first case (%s) could not get initialize answered, so the run stopped (--keep-going runs every case)", ev.Case.ID)
}

// defaultParallel is Config.Parallel's default: the number of CPUs for an
// agent run as a process (a spec never starts more processes than the CPUs
// serve), every case (and the probe) at once for the agent in process.
func defaultParallel(t driver.Target, cases int) int {
	if t.InProcess != nil {
		return cases + 1
	}
	return runtime.NumCPU()
}

// longestFirst is the order the cases after the first take their parallel
// slots: the cases with the most steps first (a restart, a load and several
// prompts run one after the other, each settling), the catalogue's order
// among equals. A long case started last would run alone at the end, with
// every other slot idle (the longest processing time first rule).
func longestFirst(cases []*Case) []int {
	order := make([]int, len(cases))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return len(cases[b].Steps) - len(cases[a].Steps) })
	return order
}

// runOthers runs the cases after the first, in parallel, longest first
// (longestFirst), and waits for every case; notRun set, they are not run.
func (d *caseSet) runOthers(ctx context.Context, notRun string) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ev := <-d.firstDone
		d.firstSlot.Finish()
		if ev != nil {
			<-d.detected // the first case ended: bounded
			ev.Dialect, d.evs[d.first] = d.dialect, ev
			d.r.progress(ev, len(d.cases))
		}
	}()
	for _, i := range longestFirst(d.cases) {
		c := d.cases[i]
		switch {
		case i == d.first:
		case notRun != "":
			<-d.detected // the first case ended (stopEarly): bounded
			d.evs[i] = unrunCase(c, d.dialect, "", notRun)
		default:
			// The slot is taken here, in the order above, not by a
			// goroutine per case racing for it.
			if d.slots.Take(ctx, false) != nil {
				<-d.detected // the run is interrupted, the first case too: bounded
				d.evs[i] = unrunCase(c, d.dialect, driver.Interrupted(ctx), "")
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				d.evs[i] = d.runOther(ctx, c)
			}()
		}
	}
	wg.Wait()
}

// runOther runs a case after the first in the parallel slot it was given
// (slots.take).
func (d *caseSet) runOther(ctx context.Context, c *Case) *Evidence {
	slot := slots.NewCase(d.slots)
	defer slot.Finish()
	if ctx.Err() != nil {
		<-d.detected // the run is interrupted, the first case too: bounded
		return unrunCase(c, d.dialect, driver.Interrupted(ctx), "")
	}
	ev := d.r.runCase(ctx, c, d.dialectOf, nil, slot)
	<-d.detected // a case that never prompted did not wait for it
	ev.Dialect = d.dialect
	if ev.Script == nil { // it stopped before its first prompt: the evidence keeps its script all the same
		ev.Script, _ = c.script(d.dialect, d.itemProps)
	}
	d.r.progress(ev, len(d.cases))
	return ev
}

// SideText answers the side requests real agents send beside their agent
// loop (a session title, a topic or next-speaker check): requests that
// offer no tools. They take no script turn and are kept apart from the
// journal the checks read (Evidence.SideRequests); see
// mockmodel.Script.SideText.
const SideText = "Untitled"

// builtinProbe is the probe run when no selected case is marked probe.
func builtinProbe() *Case {
	return &Case{
		ID: "probe", Title: "the tools the agent offers the model (dialect detection)", Probe: true,
		Checks: []string{TWTool1, TWSchema1, TWSchema2, TWSchema3},
		Steps: []driver.Step{{Op: driver.OpInitialize}, {Op: driver.OpNewSession},
			{Op: driver.OpPrompt, Text: "Reply with the single word OK."}},
		Script: []mockmodel.Turn{{Text: "OK"}},
		Source: "(built in)",
	}
}

type runner struct {
	cfg Config
	// validator waits for the schema's compilation (nil on its error:
	// Run returns the error).
	validator func() (*driver.SchemaValidator, error)
	// progressMu serializes the progress lines of cases finishing at once
	// (Config.Progress need not be safe for concurrent use) and guards
	// done, the number of lines written.
	progressMu sync.Mutex
	done       int
	// run is the number of the run being driven (1, 2, ...) when
	// Config.Repeat asks for several, else 0.
	run int
	// pool is the pooled agent processes (nil: a process per case).
	pool *driver.Pool
	// exits is what the run learns of how the agent exits: once one of
	// its processes did not exit within the grace of its stdin closing,
	// the others are signalled at once (driver.ExitWatch; ACP-EXIT-1 is
	// not judged on them). One per Run: a shrink's run shows an exit
	// failure on its own.
	exits *driver.ExitWatch
	// poolMu guards poolFailed, poolKnown and poolPassed, how many pooled
	// cases failed there (each runs again alone), failed only as cases
	// confirmed alone already (Config.Confirmed: none runs again) and did
	// not fail, counted as they end (notePooled), and poolOff, set once no
	// more case is to lease a pooled process (poolWorth).
	poolMu                            sync.Mutex
	poolFailed, poolKnown, poolPassed int
	poolOff                           bool
	// poolShown is each kind of failure (runner.unconfirmedKinds) that a
	// pooled case showed, unconfirmed (shownPooled).
	poolShown map[string]bool
	// confirmed is what the cases that ran alone in a fresh process
	// failed, as they ended (RerunKnown).
	confirmed confirmations
	// dialect and itemProps are the agent's todo tool, as the last drive
	// found it (a case run again alone is written in it).
	dialect   driver.Dialect
	itemProps map[string]bool
}

// runCase drives one case to completion or abortion and returns its
// evidence; it never returns an error: whatever went wrong is in the
// evidence (Aborted).
//
// The case gives up its parallel slot while it only waits: during the
// settle between two steps (it takes a slot again before the next one),
// and once its last step is answered (the settle and the exit are still
// observed and judged: ACP-TURN-1, ACP-EXIT-1).
//
// The first case (gate set) writes its script at once; the others when
// the mock model needs it, before their first prompt (dialect waits for
// the first case's tools: see drive).
func (r *runner) runCase(ctx context.Context, c *Case, dialect func(context.Context) (driver.Dialect, map[string]bool, error), gate *probeGate, slot *slots.Case) *Evidence {
	start := time.Now()
	ev := &Evidence{Format: EvidenceFormat, Case: c, Policy: r.cfg.Policy, Writes: c.Writes(), Started: start,
		memo: &judgeMemo{}}
	cfg := r.cfg
	sched := &caseScheduler{slot: slot, gate: gate, script: func(ctx context.Context) (*mockmodel.Script, error) {
		d, itemProps, err := dialect(ctx)
		if err != nil {
			return nil, err
		}
		ev.Dialect = d
		s, err := c.script(d, itemProps)
		ev.Script = s
		return s, err
	}}
	dc := driver.CaseConfig{Env: driver.EnvConfig{Target: cfg.Agent, Name: c.ID, DirPrefix: "conform-" + safeName(c.ID),
		TempDir: cfg.TempDir, KeepDirs: cfg.KeepDirs, Model: cfg.Model, Start: start},
		Steps: c.Steps, Timeout: cfg.Timeout, Grace: cfg.Grace, Settle: cfg.Settle, Scheduler: sched, Offer: cfg.Offer,
		Exits: r.exits, ExitName: c.ID}
	if r.run > 0 {
		dc.ExitName = fmt.Sprintf("%s in run %d of %d", c.ID, r.run, cfg.Repeat)
	}
	if r.pool != nil && (gate == nil || !gate.detect) && c.Poolable() && r.poolWorth() {
		// A pooled process that cannot start or initialize (within the
		// case's timeout) leaves the case to a process of its own, where
		// that is seen as it is. The first case of a run whose dialect is
		// known (its gate detects nothing) leases one too: the lease's
		// initialize, the pooled process's answer replayed, opens its
		// gate as its own process's would. The probe (a detecting gate)
		// is never poolable.
		lctx, cancel := context.WithTimeout(ctx, cfg.Timeout)
		lease := r.pool.Lease
		if c.Restarts() {
			lease = r.pool.LeaseExclusive
		}
		if l, err := lease(lctx); err == nil {
			dc.Lease = l
		}
		cancel()
	}
	if gate != nil {
		s, err := sched.script(ctx)
		if err != nil {
			ev.Aborted, ev.Duration = err.Error(), time.Since(start)
			return ev
		}
		dc.Env.Script = s
	}
	ev.CaseRecord = *driver.RunCase(ctx, dc)
	// The judge's heavy part, here in the case's goroutine while other
	// cases run, not in the judge's single pass after the last case.
	v, _ := r.validator()
	ev.warmJudgeMemo(v)
	if dc.Lease != nil {
		pf := pooledFailure(ev, cfg.Checks, v)
		shown := false
		if pf != nil && !ev.pooledAlone() && !r.decideKnown(ev, pf) {
			shown = r.shownPooled(ev, pf)
		}
		// Under RerunKnown the first and only session of a fresh pooled
		// process confirms what it failed: it cost a session, as a pass
		// does, and no re-run (poolWorth); so does a case whose failures
		// an earlier pooled case showed (one run again alone is to
		// confirm them for both: rerunAlone).
		known := ev.NotRunAgain != "" || shown || pf != nil && ev.pooledAlone() && r.rerunsOnlyNew()
		r.notePooled(pf != nil, known)
	}
	r.noteConfirmed(ev, v)
	return ev
}

// shownPooled reports whether each kind of failure that the case ev
// showed as a session of a pooled process (pf), unconfirmed still, an
// earlier pooled case of the run showed: then one run again alone, of
// one of them, is to confirm them for both (rerunAlone), under
// RerunKnown. The case's kinds are shown from now on.
func (r *runner) shownPooled(ev *Evidence, pf *PooledFailure) bool {
	if r.cfg.RerunPooled != RerunKnown || !r.mayBeKnown(ev, pf) {
		return false
	}
	kinds := r.unconfirmedKinds(ev.Case, pf)
	r.poolMu.Lock()
	defer r.poolMu.Unlock()
	if r.poolShown == nil {
		r.poolShown = map[string]bool{}
	}
	all := len(kinds) > 0
	for _, k := range kinds {
		all = all && r.poolShown[k]
		r.poolShown[k] = true
	}
	return all
}

// poolGiveUp is how many pooled cases must fail there before the run
// stops pooling, when fewer passed there than failed.
const poolGiveUp = 3

// poolWorth reports whether the next case that needs no fresh process is
// to lease a pooled process: yes until poolGiveUp pooled cases failed
// there and fewer passed. Each pooled failure runs again alone, a start
// and the whole case more than a process of its own costs: against an
// agent that fails most cases in ways no case has confirmed yet the pool
// costs more CPU than it saves. The cases that follow then run in
// processes of their own, judged as with --pool off. A case that failed
// only as cases already confirmed alone (Config.Confirmed, RerunKnown)
// does not run again: it cost a session, as a pass does, and counts with
// the passes. A failure as the first and only session of a fresh pooled
// process costs no re-run either: under RerunKnown it confirms what it
// failed for the cases after it, and counts with the passes; otherwise
// (RerunEvery, an exploration) it counts with the failures, as it says
// how likely the next pooled case is to fail. Against an agent that
// fails every case the same way (gemini and opencode on the catalogue)
// the pool then goes on.
func (r *runner) poolWorth() bool {
	r.poolMu.Lock()
	defer r.poolMu.Unlock()
	return !r.poolOff
}

// notePooled counts a pooled case that ended, failed there or not (known:
// as cases confirmed alone already), and stops the pool when it is not
// worth it (poolWorth), saying so once.
func (r *runner) notePooled(failed, known bool) {
	r.poolMu.Lock()
	switch {
	case known:
		r.poolKnown++
	case failed:
		r.poolFailed++
	default:
		r.poolPassed++
	}
	stop := !r.poolOff && r.poolFailed >= poolGiveUp && r.poolPassed+r.poolKnown < r.poolFailed
	if stop {
		r.poolOff = true
	}
	n, m, k := r.poolFailed, r.poolFailed+r.poolKnown+r.poolPassed, r.poolKnown
	r.poolMu.Unlock()
	if stop && r.cfg.Progress != nil {
		known := ""
		if k > 0 {
			known = fmt.Sprintf("; %d failed as cases confirmed alone already, and do not", k)
		}
		r.progressMu.Lock()
		fmt.Fprintf(r.cfg.Progress, "pool: %d of the first %d pooled cases failed there (each runs again alone in a fresh process%s): the cases still to start run in processes of their own\n", n, m, known)
		r.progressMu.Unlock()
	}
}

// caseScheduler is a case's driver.Scheduler: its parallel slot, which it
// gives up while the case waits and for good once its last step is
// answered, and for the first case of a run (gate set) the gate the others
// wait at for what it tells of the agent.
type caseScheduler struct {
	slot *slots.Case
	gate *probeGate
	// script writes the case's script once its dialect is known (it
	// waits for it).
	script func(context.Context) (*mockmodel.Script, error)
}

func (s *caseScheduler) Reached(e driver.Event) {
	switch e.Kind {
	case driver.Initialized:
		switch {
		case s.gate == nil:
		case s.gate.detect:
			s.gate.start(true)
		default:
			s.gate.open(true, nil)
		}
	case driver.FirstRequest:
		if s.gate != nil && s.gate.detect {
			s.gate.open(e.InitAnswered, nonNil(e.Tools))
		}
	case driver.LastAnswered:
		s.slot.Finish()
	case driver.Waiting:
		s.slot.Wait(e.Exiting)
	}
}

func (s *caseScheduler) Script(ctx context.Context) (*mockmodel.Script, error) { return s.script(ctx) }

func (s *caseScheduler) GoOn(ctx context.Context) error { return s.slot.Resume(ctx) }

// progress writes the live line of a finished case: ok, the checks it
// fails, or why it did not complete. Lines are numbered in the order they
// are written.
func (r *runner) progress(ev *Evidence, total int) {
	if r.cfg.Progress == nil {
		return
	}
	status := r.caseStatus(ev)
	switch {
	case status != "ok" && ev.pooledAlone():
		status += "; the first and only session of a fresh pooled process: no re-run needed"
	case len(ev.ConfirmedBy) > 0:
		status += "; seen as a session of a pooled process, not run again alone: " + confirmedByWords(ev.ConfirmedBy)
	}
	id := ev.Case.ID
	suffix := ""
	if r.run > 0 {
		suffix = fmt.Sprintf(" (run %d/%d)", r.run, r.cfg.Repeat)
	}
	r.progressMu.Lock()
	defer r.progressMu.Unlock()
	r.done++
	all := total * max(r.cfg.Repeat, 1)
	// Columns line up whatever the IDs and the run numbers: the widest
	// case ID of the run, with the widest run suffix.
	width := 20
	for _, c := range r.cfg.Cases {
		width = max(width, len(c.ID))
	}
	if r.run > 0 {
		width += len(fmt.Sprintf(" (run %d/%d)", r.cfg.Repeat, r.cfg.Repeat))
	}
	// The status quotes the agent (its error, its stderr): shown, never
	// acted on by the terminal.
	fmt.Fprintf(r.cfg.Progress, "[%*d/%d] %-*s %6.2fs  %s\n", max(2, len(fmt.Sprint(all))), r.done, all, width, id+suffix, ev.Duration.Seconds(), termtext.Visible(status))
}

// caseStatus is what a finished case's live line says of it: ok, the
// checks it fails, or why it did not complete.
func (r *runner) caseStatus(ev *Evidence) string {
	status := "ok"
	switch {
	case ev.Interrupted != "":
		status = "INTERRUPTED"
	case ev.Aborted != "":
		status = "ERROR " + driver.OneLine(ev.Aborted, 90)
	default:
		v, _ := r.validator()
		if failed := caseFailures(ev, r.cfg.Checks, v); len(failed) > 0 {
			status = "FAIL " + strings.Join(failed, ", ")
		}
		if ev.Stopped != "" {
			status += "; stopped: " + driver.OneLine(ev.Stopped, 90)
		}
		if missed := ev.keyStepMissed(); missed != "" {
			status += "; " + driver.OneLine(missed, 90)
		}
	}
	return status
}

// unrunCase is the evidence of a case that was not started: the run was
// interrupted (interrupted set) or stopped early (notRun).
func unrunCase(c *Case, d driver.Dialect, interrupted, notRun string) *Evidence {
	return &Evidence{Format: EvidenceFormat, Case: c, Dialect: d, Writes: c.Writes(), Started: time.Now(), NotRun: notRun,
		CaseRecord: driver.CaseRecord{Interrupted: interrupted}, memo: &judgeMemo{}}
}

// probeGate holds the other cases of a run until the first case has
// told what they need (see drive): started, that they may start (its
// initialize answered, or it ended); opened, that their scripts may be
// written (the tools of its first model request, or its end).
type probeGate struct {
	detect              bool
	startOnce, openOnce sync.Once
	started, opened     chan struct{}
	// initAnswered, set before started is closed: the first case's
	// initialize was answered. tools, set before opened is closed: those
	// of its first model request (nil when none was made).
	initAnswered bool
	tools        []llm.ToolSpec
}

func newProbeGate(detect bool) *probeGate {
	return &probeGate{detect: detect, started: make(chan struct{}), opened: make(chan struct{})}
}

// start lets the other cases start (once; later calls do nothing).
func (g *probeGate) start(initAnswered bool) {
	g.startOnce.Do(func() {
		g.initAnswered = initAnswered
		close(g.started)
	})
}

// open lets the other cases write their scripts, and start if they had
// not (once; later calls do nothing).
func (g *probeGate) open(initAnswered bool, tools []llm.ToolSpec) {
	g.start(initAnswered)
	g.openOnce.Do(func() {
		g.tools = tools
		close(g.opened)
	})
}

// ProbeTools are the tools the run's probe saw the agent offer its first
// model request (Config.ProbeTools of a later run), nil when no probe ran
// or it made no request.
func (r *Report) ProbeTools() []llm.ToolSpec {
	for _, c := range r.Cases {
		if ev := c.Evidence(); ev != nil && ev.Case != nil && ev.Case.Probe && len(ev.Journal) > 0 {
			return firstRequestTools(ev)
		}
	}
	return nil
}

// firstRequestTools returns the tools of the case's first model request
// that offers any (side requests aside; none when no request does), nil
// when it made no request.
func firstRequestTools(ev *Evidence) []llm.ToolSpec {
	if len(ev.Journal) == 0 {
		return nil
	}
	for _, e := range ev.Journal {
		if len(e.Tools) > 0 {
			return e.Tools
		}
	}
	return []llm.ToolSpec{}
}

func nonNil(ts []llm.ToolSpec) []llm.ToolSpec {
	if ts == nil {
		return []llm.ToolSpec{}
	}
	return ts
}

// initAnswered reports whether the agent answered an initialize request
// in the case (with a result or an error).
func initAnswered(ev *Evidence) bool {
	for _, s := range ev.Steps {
		if s.Op == driver.OpInitialize && s.RespSeq >= 0 {
			return true
		}
	}
	return false
}

// script builds the mock-model script of a case in the agent's dialect:
// the case's own turns with every todo_write call (name, arguments, and
// the tool named by expect.toolsInclude) translated.
func (c *Case) script(d driver.Dialect, itemProps map[string]bool) (*mockmodel.Script, error) {
	s := &mockmodel.Script{Name: c.ID, Path: c.Source, SideText: SideText}
	for _, t := range c.Script {
		if e := t.Expect; e != nil {
			me := *e
			me.ToolsInclude = nil
			for _, n := range e.ToolsInclude {
				if n == driver.DialectTodoWrite {
					n = d.Tool
				}
				me.ToolsInclude = append(me.ToolsInclude, n)
			}
			t.Expect = &me
		}
		calls := t.ToolCalls
		t.ToolCalls = nil
		for _, call := range calls {
			if call.Name == driver.DialectTodoWrite {
				call.Name = d.Tool
				call.Arguments = d.TranslateArgs(call.Arguments, itemProps)
			}
			t.ToolCalls = append(t.ToolCalls, call)
		}
		s.Turns = append(s.Turns, t)
	}
	if err := s.Validate(); err != nil {
		return nil, fmt.Errorf("conformance: case %s: script: %w", c.ID, err)
	}
	return s, nil
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

// modelWires lists the model APIs the agent used, in order of first use.
func modelWires(evs []*Evidence) []string {
	var out []string
	seen := map[string]bool{}
	for _, ev := range evs {
		for _, e := range ev.AllRequests() {
			if e.Wire != "" && !seen[e.Wire] {
				seen[e.Wire] = true
				out = append(out, e.Wire)
			}
		}
	}
	return out
}
