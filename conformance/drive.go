package conformance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/mockmodel"
)

// Defaults.
const (
	// DefaultTimeout bounds one case, agent start-up included: some real
	// agents take seconds to start.
	DefaultTimeout = 60 * time.Second
	// DefaultGrace is how long an agent gets to exit after its stdin closes
	// (and again after SIGTERM) before it is signalled (killed).
	DefaultGrace = 3 * time.Second
	// DefaultSettle is how long both wires (ACP and the model) must stay
	// quiet after a prompt is answered, and after the last step, before the
	// runner goes on (and, at the end, closes the agent's stdin): real
	// agents answer session/prompt while a tool call of the turn still
	// runs, and send its updates afterwards.
	DefaultSettle = 1500 * time.Millisecond
	// settleFast ends a settle early (at most Settle) when the agent's
	// last message is the answer and the model has taken every turn of the
	// prompts sent, none in flight: the turn is over on both wires.
	settleFast = 100 * time.Millisecond
	// settlePendingMin is the least time a settle waits for model turns
	// the prompts sent still have coming after the agent answered (10 x
	// Settle when longer): the agent said the turn ended, its model
	// conversation did not.
	settlePendingMin = 5 * time.Second
)

// Config is one conformance run.
type Config struct {
	// Agent is the agent under test.
	Agent Target
	// Cases to run (see LoadCases and fixtures/conformance). A case marked
	// probe runs first when the dialect is detected.
	Cases []*Case
	// Checks is the catalogue (nil: Catalogue()).
	Checks []Check
	// Dialect forces a dialect by name; empty detects it from the tools the
	// agent offers the model in the probe case.
	Dialect string
	// Timeout bounds each case (0: DefaultTimeout); Grace is the shutdown
	// grace period (0: DefaultGrace).
	Timeout, Grace time.Duration
	// Parallel is how many cases run at once (0: the number of CPUs).
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
	// Out, if set, receives a transcript folder for every case with a
	// failed check (ACP wire both ways, model journal, stderr).
	Out string
	// TempDir is where case working directories are made (default: the
	// system's); KeepDirs keeps them after the run.
	TempDir  string
	KeepDirs bool
	// Model is the model name offered in {{.Model}} (default "mock").
	Model string
	// Validator checks messages against the ACP schema (nil: compile one;
	// pass one to share it between runs).
	Validator *SchemaValidator
	// KeepGoing runs every case even when the first one could not get
	// initialize answered (by default the run stops there: every other
	// case would time out the same way).
	KeepGoing bool
	// Policy is how many tasks may be in_progress at once: PolicySingle
	// (the default), PolicyParallel, or PolicyAuto (read from the agent's
	// tool description). It decides how TW-VALID-TWOACTIVE is judged.
	Policy string
	// Settle is how long both wires must stay quiet after a prompt is
	// answered and after the last step (0: DefaultSettle); see settle.
	Settle time.Duration
	// Repeat runs every case this many times (0: once); a check whose
	// outcome differs between the runs is Flaky.
	Repeat int
}

// Run runs every case against the agent and judges every check. The error
// is set only when the run could not happen at all (bad configuration);
// a misbehaving agent yields failed checks, never an error.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if len(cfg.Agent.Command) == 0 && cfg.Agent.InProcess == nil {
		return nil, errors.New("conformance: no agent command")
	}
	if len(cfg.Cases) == 0 {
		return nil, errors.New("conformance: no cases")
	}
	if cfg.Checks == nil {
		cfg.Checks = Catalogue()
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.Grace <= 0 {
		cfg.Grace = DefaultGrace
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = runtime.NumCPU()
	}
	if cfg.Model == "" {
		cfg.Model = "mock"
	}
	if cfg.Settle <= 0 {
		cfg.Settle = DefaultSettle
	}
	if cfg.Repeat < 0 {
		return nil, fmt.Errorf("conformance: repeat %d: want at least 1", cfg.Repeat)
	}
	if cfg.Repeat == 0 {
		cfg.Repeat = 1
	}
	if err := cfg.Agent.CheckTemplates(); err != nil {
		return nil, err
	}
	if err := checkUniqueIDs(cfg.Cases); err != nil {
		return nil, err
	}
	for _, c := range cfg.Cases {
		if err := c.Validate(cfg.Checks); err != nil {
			return nil, fmt.Errorf("conformance: case %s: %w", c.ID, err)
		}
	}
	if err := validateExpected(cfg.Expected, cfg.Checks); err != nil {
		return nil, err
	}
	policy, err := ParsePolicy(cfg.Policy)
	if err != nil {
		return nil, err
	}
	cfg.Policy = policy
	validator := cfg.Validator
	if validator == nil {
		var err error
		if validator, err = NewSchemaValidator(); err != nil {
			return nil, err
		}
	}
	r := &runner{cfg: cfg, validator: validator}
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
		evs = append(evs, got...)
	}
	rep, err := Judge(evs, JudgeConfig{Checks: cfg.Checks, Only: cfg.Only, Expected: cfg.Expected, Validator: validator, Strict: cfg.Strict})
	if err != nil {
		return nil, err
	}
	if cfg.Out != "" {
		if err := rep.WriteTranscripts(cfg.Out); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// drive runs every case (the probe first, when the dialect is detected)
// and returns their evidence, in the order of the cases.
func (r *runner) drive(ctx context.Context) ([]*Evidence, error) {
	cfg := r.cfg
	info := RunInfo{Agent: cfg.Agent.String(), Started: time.Now(), Parallel: cfg.Parallel, Timeout: cfg.Timeout}
	cases := append([]*Case(nil), cfg.Cases...)
	var dialect Dialect
	var itemProps map[string]bool
	// The first case runs alone: the probe (its tools decide the dialect)
	// or, with a forced dialect, the first case. If the agent cannot even
	// answer its initialize, the run stops there (unless KeepGoing).
	first := 0
	switch {
	case cfg.Dialect != "":
		d, err := DialectByName(cfg.Dialect)
		if err != nil {
			return nil, err
		}
		dialect, info.DialectSource = d, "forced"
	default:
		first = -1
		for i, c := range cases {
			if c.Probe {
				first = i
				break
			}
		}
		if first < 0 {
			cases = append([]*Case{builtinProbe()}, cases...)
			first = 0
		}
		dialect, _ = DialectByName(DialectTodoWrite)
		info.DialectSource = "default (nothing detected)"
	}
	evs := make([]*Evidence, len(cases))
	// The others start once the first case has told what they need: its
	// initialize answered (a forced dialect), or the tools of its first
	// model request (detection); at the latest when it ends. A hanging
	// agent then costs one case timeout, not two.
	gate := newProbeGate(cfg.Dialect == "")
	firstDone := make(chan *Evidence, 1)
	// The parallel slots: the first case holds one until its last step is
	// answered (see runCase).
	sem := make(chan struct{}, cfg.Parallel)
	sem <- struct{}{}
	firstRelease := sync.OnceFunc(func() { <-sem })
	go func() {
		ev := r.runCase(ctx, cases[first], dialect, nil, gate, firstRelease)
		gate.close(initAnswered(ev), firstRequestTools(ev))
		firstDone <- ev
	}()
	<-gate.opened
	if cfg.Dialect == "" && gate.tools != nil {
		var names []string
		for _, t := range gate.tools {
			names = append(names, t.Name)
		}
		info.ToolsOffered = names
		if d, ok := DetectDialect(names); ok {
			dialect, info.DialectSource = d, "detected"
			for _, t := range gate.tools {
				if t.Name == d.Tool {
					itemProps = d.itemProperties(t.Parameters)
				}
			}
		}
	}
	notRun, reported := "", false
	if !gate.initAnswered && !cfg.KeepGoing {
		ev := <-firstDone
		firstDone <- ev
		if ev.Aborted != "" && !initAnswered(ev) {
			ev.Dialect, evs[first], reported = dialect, ev, true
			r.progress(ev, len(cases))
			notRun = fmt.Sprintf("not run: the first case (%s) could not get initialize answered, so the run stopped (--keep-going runs every case)", ev.Case.ID)
			if cfg.Progress != nil {
				r.progressMu.Lock()
				fmt.Fprintf(cfg.Progress, "stopping: %s could not get initialize answered; the other %d case(s) are not run (--keep-going runs them)\n", ev.Case.ID, len(cases)-1)
				r.progressMu.Unlock()
			}
		}
	}

	// The other cases, in parallel.
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		ev := <-firstDone
		firstRelease()
		if !reported {
			ev.Dialect, evs[first] = dialect, ev
			r.progress(ev, len(cases))
		}
	}()
	for i, c := range cases {
		if i == first {
			continue
		}
		if notRun != "" {
			evs[i] = unrunCase(c, dialect, "", notRun)
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				evs[i] = unrunCase(c, dialect, interrupted(ctx), "")
				return
			}
			// The slot is freed as soon as the case's last step is
			// answered: the settle after it and the agent's exit are
			// still observed (and judged: ACP-TURN-1, ACP-EXIT-1), but
			// they wait, and the next case need not wait with them.
			release := sync.OnceFunc(func() { <-sem })
			defer release()
			if ctx.Err() != nil {
				evs[i] = unrunCase(c, dialect, interrupted(ctx), "")
				return
			}
			ev := r.runCase(ctx, c, dialect, itemProps, nil, release)
			evs[i] = ev
			r.progress(ev, len(cases))
		}()
	}
	wg.Wait()
	for i, ev := range evs {
		ev.Index, ev.Run, ev.Repeat = i, info, r.run
	}
	return evs, nil
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
		Checks: []string{"TW-TOOL-1", "TW-SCHEMA-1", "TW-SCHEMA-2"},
		Steps: []Step{{Op: OpInitialize}, {Op: OpNewSession},
			{Op: OpPrompt, Text: "Reply with the single word OK."}},
		Script: []mockmodel.Turn{{Text: "OK"}},
		Source: "(built in)",
	}
}

type runner struct {
	cfg       Config
	validator *SchemaValidator
	// progressMu serializes the progress lines of cases finishing at once
	// (Config.Progress need not be safe for concurrent use) and guards
	// done, the number of lines written.
	progressMu sync.Mutex
	done       int
	// run is the number of the run being driven (1, 2, ...) when
	// Config.Repeat asks for several, else 0.
	run int
}

// progress writes the live line of a finished case: ok, the checks it
// fails, or why it did not complete. Lines are numbered in the order they
// are written.
func (r *runner) progress(ev *Evidence, total int) {
	if r.cfg.Progress == nil {
		return
	}
	status := "ok"
	switch {
	case ev.Interrupted != "":
		status = "INTERRUPTED"
	case ev.Aborted != "":
		status = "ERROR " + oneLine(ev.Aborted, 90)
	default:
		if failed := caseFailures(ev, r.cfg.Checks, r.validator); len(failed) > 0 {
			status = "FAIL " + strings.Join(failed, ", ")
		}
		if ev.Stopped != "" {
			status += "; stopped: " + oneLine(ev.Stopped, 90)
		}
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
	fmt.Fprintf(r.cfg.Progress, "[%*d/%d] %-*s %6.2fs  %s\n", max(2, len(fmt.Sprint(all))), r.done, all, width, id+suffix, ev.Duration.Seconds(), status)
}

// unrunCase is the evidence of a case that was not started: the run was
// interrupted (interrupted set) or stopped early (notRun).
func unrunCase(c *Case, d Dialect, interrupted, notRun string) *Evidence {
	return &Evidence{Format: EvidenceFormat, Case: c, Dialect: d, Writes: c.Writes(), Started: time.Now(), Interrupted: interrupted, NotRun: notRun,
		memo: &judgeMemo{}}
}

// probeGate holds the other cases of a run until the first case has
// told what they need (see drive).
type probeGate struct {
	detect bool
	once   sync.Once
	opened chan struct{}
	// Set before opened is closed: initAnswered, the first case's
	// initialize was answered; tools, those of its first model request
	// (nil when none was made yet).
	initAnswered bool
	tools        []llm.ToolSpec
}

func newProbeGate(detect bool) *probeGate {
	return &probeGate{detect: detect, opened: make(chan struct{})}
}

// close opens the gate once (later calls do nothing). A nil gate is
// ignored (the cases after the first have none).
func (g *probeGate) close(initAnswered bool, tools []llm.ToolSpec) {
	if g == nil {
		return
	}
	g.once.Do(func() {
		g.initAnswered, g.tools = initAnswered, tools
		close(g.opened)
	})
}

// firstRequestTools returns the tools of the case's first model request
// (side requests aside), nil when it made none.
func firstRequestTools(ev *Evidence) []llm.ToolSpec {
	if len(ev.Journal) > 0 {
		return nonNil(ev.Journal[0].Tools)
	}
	return nil
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
		if s.Op == OpInitialize && s.RespSeq >= 0 {
			return true
		}
	}
	return false
}

// script builds the mock-model script of a case in the agent's dialect:
// the case's own turns with every todo_write call (name, arguments, and
// the tool named by expect.toolsInclude) translated.
func (c *Case) script(d Dialect, itemProps map[string]bool) (*mockmodel.Script, error) {
	s := &mockmodel.Script{Name: c.ID, Path: c.Source, SideText: SideText}
	for _, t := range c.Script {
		if e := t.Expect; e != nil {
			me := *e
			me.ToolsInclude = nil
			for _, n := range e.ToolsInclude {
				if n == DialectTodoWrite {
					n = d.Tool
				}
				me.ToolsInclude = append(me.ToolsInclude, n)
			}
			t.Expect = &me
		}
		calls := t.ToolCalls
		t.ToolCalls = nil
		for _, call := range calls {
			if call.Name == DialectTodoWrite {
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

// caseRun is one case being driven: its directories, its mock model, its
// wire and its current agent process. newCaseRun sets it up, run drives
// the steps, and teardown releases everything in one fixed order, whatever
// happened before; the evidence is complete only after teardown.
type caseRun struct {
	r     *runner
	c     *Case
	ev    *Evidence
	start time.Time

	parent context.Context // the run's: cancelled when the run is interrupted
	ctx    context.Context // the case's: the run's, with the case timeout
	cancel context.CancelFunc

	srv    *mockmodel.Server
	target resolved
	wire   *wireLog

	// gate, for the first case of a run, is opened as soon as the other
	// cases can start (nil for the others); initDone is set once an
	// initialize was answered.
	gate     *probeGate
	initDone atomic.Bool

	cur       *conn       // the running agent process (nil: none)
	curProc   *ProcResult // its record in ev.Procs
	sessionID string
	loadCap   bool

	// release frees the case's parallel slot (nil: none to free); see
	// runCase.
	release func()
}

// lastAnswered is called when the case's last step has its answer: the
// slot goes to the next case while the settle and the exit are observed.
func (cr *caseRun) lastAnswered() {
	if cr.release != nil {
		cr.release()
	}
	cr.ev.Answered = time.Since(cr.start)
}

// runCase drives one case to completion or abortion and returns its
// evidence; it never returns an error: whatever went wrong is in the
// evidence (Aborted).
//
// release, when not nil, is called once the last step is answered (or the
// case ends before): what is left is waiting (the settle, the exit), and
// the runner gives the case's parallel slot to the next one.
func (r *runner) runCase(ctx context.Context, c *Case, d Dialect, itemProps map[string]bool, gate *probeGate, release func()) *Evidence {
	cr := &caseRun{r: r, c: c, start: time.Now(), parent: ctx, gate: gate, release: release}
	cr.ev = &Evidence{Format: EvidenceFormat, Case: c, Dialect: d, Policy: r.cfg.Policy, Writes: c.Writes(), Started: cr.start,
		memo: &judgeMemo{}}
	// After the teardown (deferred below, so run first): the judge's
	// heavy part, done here in the case's goroutine while other cases
	// run, not in the judge's single pass after the last case.
	defer cr.ev.warmJudgeMemo(r.validator)
	cr.ctx, cr.cancel = context.WithTimeout(ctx, r.cfg.Timeout)
	defer cr.teardown()
	if err := cr.setup(d, itemProps); err != nil {
		cr.ev.Aborted = err.Error()
		return cr.ev
	}
	cr.run()
	return cr.ev
}

// setup makes the case's script, directories and mock model, and resolves
// the agent's templates.
func (cr *caseRun) setup(d Dialect, itemProps map[string]bool) error {
	script, err := cr.c.script(d, itemProps)
	if err != nil {
		return err
	}
	cr.ev.Script = script
	cfg := cr.r.cfg
	id := safeName(cr.c.ID)
	if cr.ev.Cwd, err = os.MkdirTemp(cfg.TempDir, "conform-"+id+"-"); err != nil {
		return fmt.Errorf("make working directory: %w", err)
	}
	// The throw-away home: beside the working directory, never inside it
	// (agents scan their cwd), and kept across a restart step (agents keep
	// sessions and settings there).
	if cr.ev.Home, err = os.MkdirTemp(cfg.TempDir, "conform-"+id+"-home-"); err != nil {
		return fmt.Errorf("make home directory: %w", err)
	}
	cr.srv = mockmodel.NewServer(script)
	u, _ := url.Parse(cr.srv.URL)
	vars := Vars{BaseURL: cr.srv.BaseURL(), URL: cr.srv.URL, Host: u.Hostname(), Port: u.Port(), Cwd: cr.ev.Cwd, Home: cr.ev.Home, Case: cr.c.ID, Model: cfg.Model}
	if cr.target, err = cfg.Agent.resolve(vars); err != nil {
		return err
	}
	cr.wire = newWireLog(cr.start)
	return nil
}

// run starts the agent and runs the steps; the first failure aborts the
// case (Evidence.Aborted) and ends the agent at once.
func (cr *caseRun) run() {
	if cr.gate != nil && cr.gate.detect {
		stop := make(chan struct{})
		defer close(stop)
		go cr.watchFirstRequest(stop)
	}
	if err := cr.startAgent(); err != nil {
		cr.abort(err.Error())
		return
	}
	for i, st := range cr.c.Steps {
		if stop := cr.step(i, st); stop {
			break
		}
	}
	if cr.cur == nil {
		return // aborted: the agent is gone
	}
	// The shutdown closes stdin, and many agents stop at once: what they
	// still had to say about the case is lost. A prompt step settled
	// already; after any other last step, settle now.
	if n := len(cr.ev.Steps); n > 0 && cr.ev.Steps[n-1].Op != OpPrompt {
		cr.settle(&cr.ev.Steps[n-1], false)
	}
	cr.endAgent("")
	for _, e := range cr.srv.Journal().Errors() {
		cr.ev.ModelErrors = append(cr.ev.ModelErrors, fmt.Sprintf("model request %d: %s", e.Index+1, e.Error))
	}
}

// watchFirstRequest opens the gate with the tools of the first model
// request (side requests aside) as soon as the mock has it.
func (cr *caseRun) watchFirstRequest(stop <-chan struct{}) {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		for _, e := range cr.srv.Journal().Entries() {
			if !e.Side {
				cr.gate.close(cr.initDone.Load(), nonNil(e.Tools))
				return
			}
		}
	}
}

// step runs step i; it reports whether the case stops there (aborted, or
// a load the agent cannot do).
func (cr *caseRun) step(i int, st Step) (stop bool) {
	ev := cr.ev
	sr := StepResult{Index: i, Op: st.Op, Proc: len(ev.Procs) - 1, ReqSeq: -1, RespSeq: -1}
	if st.Op == OpRestart {
		cr.endAgent("")
		if err := cr.startAgent(); err != nil {
			cr.abort(err.Error())
			return true
		}
		ev.Steps = append(ev.Steps, sr)
		return false
	}
	if st.Op == OpLoadSession && !cr.loadCap {
		ev.LoadSkipped = "the agent does not advertise agentCapabilities.loadSession"
		sr.Skipped = ev.LoadSkipped
		ev.Steps = append(ev.Steps, sr)
		return true
	}
	method, params := stepRequest(st, cr.sessionID, ev.Cwd)
	t0 := time.Now()
	var stopCancel func() int
	if st.Op == OpPrompt && st.Cancel {
		stopCancel = cr.cancelAfterPlan()
	}
	res, err := cr.cur.call(cr.ctx, method, params)
	if stopCancel != nil {
		sr.CancelSeq = stopCancel()
	}
	sr.Duration = time.Since(t0)
	if i == len(cr.c.Steps)-1 && err == nil {
		cr.lastAnswered()
	}
	sr.ReqSeq, sr.RespSeq, sr.Result = res.ReqSeq, res.RespSeq, res.Result
	if st.Op == OpPrompt {
		sr.Prompt = ev.PromptsRun
		ev.PromptsRun++
	}
	if err != nil {
		sr.Error = err.Error()
		ev.Steps = append(ev.Steps, sr)
		var rpcErr *RPCError
		if errors.As(err, &rpcErr) {
			// An answer, but an error: the agent refused what the case
			// needs. It is not hung: the case stops here and the checks
			// that needed the request fail, quoting the error.
			ev.Stopped = fmt.Sprintf("step %d (%s) was answered with %v", i+1, st.Op, rpcErr)
			if st.Op == OpPrompt {
				cr.settle(&ev.Steps[len(ev.Steps)-1], false)
			}
			return true
		}
		cr.abort(fmt.Sprintf("step %d (%s): %v", i+1, st.Op, err))
		return true
	}
	ev.Steps = append(ev.Steps, sr)
	switch st.Op {
	case OpPrompt:
		// Updates the agent sends after its answer still belong to the
		// turn: let them arrive before the next request (or the shutdown).
		// A cancelled turn's later script turns need not come.
		cr.settle(&ev.Steps[len(ev.Steps)-1], !st.Cancel)
	case OpLoadSession:
		// A replay sent after the answer still belongs to the load: let it
		// arrive before the next request. The same wait as after a prompt,
		// with its window (--settle, short in tests): it ends after
		// settleFast when the answer stays the agent's last message.
		cr.settle(&ev.Steps[len(ev.Steps)-1], false)
	case OpInitialize:
		cr.initDone.Store(true)
		if cr.gate != nil && !cr.gate.detect {
			cr.gate.close(true, nil)
		}
		cr.curProc.Startup = time.Since(cr.start) - cr.curProc.StartedAt
		cr.curProc.Init = res.Result
		var ir struct {
			AgentCapabilities struct {
				LoadSession bool `json:"loadSession"`
			} `json:"agentCapabilities"`
		}
		_ = json.Unmarshal(res.Result, &ir)
		cr.loadCap = ir.AgentCapabilities.LoadSession
	case OpNewSession:
		var ns struct {
			SessionID string `json:"sessionId"`
		}
		if err := json.Unmarshal(res.Result, &ns); err != nil || ns.SessionID == "" {
			cr.abort(fmt.Sprintf("step %d (newSession): no sessionId in the answer %s", i+1, truncate(string(res.Result), 200)))
			return true
		}
		cr.sessionID = ns.SessionID
	}
	return false
}

// cancelAfterPlan watches the wire, from now on, for the current agent's
// first plan update and then sends session/cancel for the case's session
// (Step.Cancel). stop ends the watch and returns the wire position of the
// cancel sent (-1: none, the turn ended first).
func (cr *caseRun) cancelAfterPlan() (stop func() int) {
	c, from, sid := cr.cur, cr.wire.len(), cr.sessionID
	done, sent := make(chan struct{}), make(chan int, 1)
	go func() {
		seq := -1
		defer func() { sent <- seq }()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			for _, m := range cr.wire.since(from) {
				from = m.Seq + 1
				if m.Proc == c.idx && m.Dir == Received && updateKind(m) == "plan" {
					n := map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": sid}}
					seq, _ = c.writeMsg(cr.ctx, n, "session/cancel", "")
					return
				}
			}
			select {
			case <-done:
				return
			case <-cr.ctx.Done():
				return
			case <-tick.C:
			}
		}
	}()
	return func() int {
		close(done)
		return <-sent
	}
}

// startAgent starts a fresh agent process in the case's directory.
func (cr *caseRun) startAgent() error {
	p, err := startProc(cr.ctx, cr.target, cr.ev.Cwd)
	if err != nil {
		return err
	}
	idx := len(cr.ev.Procs)
	cr.ev.Procs = append(cr.ev.Procs, ProcResult{Index: idx, Argv: cr.target.argv, InProcess: cr.target.inproc != nil, StartedAt: time.Since(cr.start)})
	cr.curProc = &cr.ev.Procs[idx]
	cr.cur = newConn(p, cr.wire, idx, cr.ev.Cwd)
	return nil
}

// abort records why the case stops and kills the agent. When the run was
// interrupted, that is the reason, and the agent is not blamed.
func (cr *caseRun) abort(why string) {
	switch {
	case cr.parent.Err() != nil:
		cr.ev.Interrupted = interrupted(cr.parent)
	case errors.Is(cr.ctx.Err(), context.DeadlineExceeded):
		why += fmt.Sprintf(" (case timeout %s: the agent's process group was killed)", cr.r.cfg.Timeout)
		cr.ev.Aborted = why
	default:
		cr.ev.Aborted = why
	}
	cr.endAgent(why)
}

// interrupted says why the run's context ended.
func interrupted(ctx context.Context) string {
	return "the run was interrupted (" + ctx.Err().Error() + ")"
}

// endAgent ends the current agent process, if any: as an editor does
// (close stdin, grace, SIGTERM, grace, SIGKILL) when abort is empty, else
// at once; then records how it ended.
func (cr *caseRun) endAgent(abort string) {
	if cr.cur == nil {
		return
	}
	p, rec := cr.cur.p, cr.curProc
	switch {
	case abort != "":
		if !p.hasExited() {
			p.kill("killed (process group) after: " + abort)
		} else {
			p.shutdown(0)
		}
	default:
		if p.hasExited() {
			rec.ExitedEarly = true
		}
		t0 := time.Now()
		rec.Shutdown = p.shutdown(cr.r.cfg.Grace)
		cr.ev.ExitWait += time.Since(t0)
	}
	waitFor(cr.cur.done, time.Second)
	rec.Exit = p.exitDescription()
	if how := p.killedHow(); how != "" && rec.Shutdown == "" {
		rec.Shutdown = how
	}
	rec.Stderr = p.stderr.String()
	rec.ClientRequests = cr.cur.requests()
	rec.Killed = p.killedDescendants()
	cr.cur, cr.curProc = nil, nil
}

// teardown releases the case, in this order: the agent process (killed if
// it is still running), the wire (snapshot, once no process writes), the
// mock model (closed, its journal taken), the directories (unless
// KeepDirs), the case's context.
func (cr *caseRun) teardown() {
	ev := cr.ev
	cr.endAgent(ev.Aborted)
	if cr.wire != nil {
		ev.Wire = cr.wire.snapshot()
	}
	if cr.srv != nil {
		cr.srv.Close()
		for _, e := range cr.srv.Journal().Entries() {
			if e.Side {
				ev.SideRequests = append(ev.SideRequests, e)
			} else {
				ev.Journal = append(ev.Journal, e)
			}
		}
	}
	if !cr.r.cfg.KeepDirs {
		for _, d := range []string{ev.Cwd, ev.Home} {
			if d != "" {
				_ = os.RemoveAll(d)
			}
		}
	}
	cr.cancel()
	ev.Duration = time.Since(cr.start)
}

// settle waits, after step sr, until both wires are quiet: no model
// request in flight and nothing on either wire for Config.Settle. When the
// prompt was answered (answered) but the model has not yet been asked for
// every turn of the prompts sent, and no model request failed, the agent
// is still working whatever it said: the settle waits for those turns (at
// most settlePendingMin, or 10 x Settle), then for quiet. It ends early once the agent's last message is
// sr's answer, the model took every such turn and has nothing in flight,
// and settleFast passed quietly; and at once when the agent's stdout closed
// or the case timed out. It records in sr how long it waited and why it
// ended.
func (cr *caseRun) settle(sr *StepResult, answered bool) {
	window := cr.r.cfg.Settle
	fast := min(window, settleFast)
	pendingMax := max(10*window, settlePendingMin)
	want := cr.turnsOfPromptsSent()
	tick := max(min(window/10, 10*time.Millisecond), time.Millisecond)
	t0 := time.Now()
	defer func() { sr.Settle = time.Since(t0) }()
	for {
		act := cr.srv.Activity()
		seq, at := cr.wire.last()
		now := time.Now()
		quietSince := t0
		if act.Last.After(quietSince) {
			quietSince = act.Last
		}
		if at.After(quietSince) {
			quietSince = at
		}
		quiet := now.Sub(quietSince)
		// Turns still to come, unless a model request failed: the
		// agent's conversation ended on that error (a retry shows as
		// traffic, which the window waits out anyway).
		pending := answered && act.Taken < want && act.Failed == 0
		switch {
		case cr.ctx.Err() != nil:
			sr.Settled = "the case timed out"
			return
		case cr.readerDone():
			sr.Settled = "the agent closed its stdout"
			return
		case act.InFlight > 0:
		case pending && now.Sub(t0) < pendingMax:
		case quiet >= window:
			sr.Settled = fmt.Sprintf("both wires quiet for %s", window)
			if pending {
				sr.Settled += fmt.Sprintf(" (after waiting %s for %d more model turn(s) that never came)", pendingMax, want-act.Taken)
			}
			return
		case quiet >= fast && !pending && seq == sr.RespSeq && seq >= 0:
			sr.Settled = fmt.Sprintf("the answer was the agent's last message and the model took every turn (quiet for %s)", fast)
			return
		}
		select {
		case <-cr.ctx.Done():
		case <-time.After(tick):
		}
	}
}

// readerDone reports whether the current agent's stdout reached its end.
func (cr *caseRun) readerDone() bool {
	select {
	case <-cr.cur.done:
		return true
	default:
		return false
	}
}

// turnsOfPromptsSent counts the script turns of the prompts sent so far: a
// prompt's turns run up to the first one that calls no tool.
func (cr *caseRun) turnsOfPromptsSent() int {
	prompts, n := 0, 0
	for _, t := range cr.c.Script {
		if prompts >= cr.ev.PromptsRun {
			break
		}
		n++
		if len(t.ToolCalls) == 0 {
			prompts++
		}
	}
	return n
}

// stepRequest is the ACP request of a step.
func stepRequest(st Step, sessionID, cwd string) (string, any) {
	switch st.Op {
	case OpInitialize:
		return "initialize", map[string]any{
			"protocolVersion": 1,
			"clientCapabilities": map[string]any{
				"fs":       map[string]any{"readTextFile": true, "writeTextFile": true},
				"terminal": false,
			},
			"clientInfo": map[string]any{"name": "todoharness-conform", "version": "1"},
		}
	case OpNewSession:
		return "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}}
	case OpLoadSession:
		return "session/load", map[string]any{"sessionId": sessionID, "cwd": cwd, "mcpServers": []any{}}
	default: // prompt
		return "session/prompt", map[string]any{
			"sessionId": sessionID,
			"prompt":    []any{map[string]any{"type": "text", "text": st.Text}},
		}
	}
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			return r
		}
		return '_'
	}, s)
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	return truncate(s, n)
}

// modelWires lists the model APIs the agent used, in order of first use.
func modelWires(evs []*Evidence) []string {
	var out []string
	seen := map[string]bool{}
	for _, ev := range evs {
		for _, e := range ev.allRequests() {
			if e.Wire != "" && !seen[e.Wire] {
				seen[e.Wire] = true
				out = append(out, e.Wire)
			}
		}
	}
	return out
}
