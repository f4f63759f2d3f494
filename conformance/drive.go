package conformance

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"sync"
	"time"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/harness/llm"
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
	// agent offers the model in the probe case.
	Dialect string
	// Timeout bounds each case (0: driver.DefaultTimeout); Grace is the shutdown
	// grace period (0: driver.DefaultGrace).
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
	// answered and after the last step (0: driver.DefaultSettle); see settle.
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
		cfg.Timeout = driver.DefaultTimeout
	}
	if cfg.Grace <= 0 {
		cfg.Grace = driver.DefaultGrace
	}
	if cfg.Parallel <= 0 {
		cfg.Parallel = runtime.NumCPU()
	}
	if cfg.Model == "" {
		cfg.Model = "mock"
	}
	if cfg.Settle <= 0 {
		cfg.Settle = driver.DefaultSettle
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
					itemProps = d.ItemProperties(t.Parameters)
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
				evs[i] = unrunCase(c, dialect, driver.Interrupted(ctx), "")
				return
			}
			// The slot is freed as soon as the case's last step is
			// answered: the settle after it and the agent's exit are
			// still observed (and judged: ACP-TURN-1, ACP-EXIT-1), but
			// they wait, and the next case need not wait with them.
			release := sync.OnceFunc(func() { <-sem })
			defer release()
			if ctx.Err() != nil {
				evs[i] = unrunCase(c, dialect, driver.Interrupted(ctx), "")
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
