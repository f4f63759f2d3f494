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
	"time"

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
	// quietPeriod is how long the wire must stay silent after a
	// session/load answer before the next request (a replay sent after the
	// answer is then still seen as part of the load).
	quietPeriod = 150 * time.Millisecond
	maxDrain    = time.Second
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
	// Expected lists known failures (see ReadExpectedFailures).
	Expected []ExpectedFailure
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
	// Policy is how many tasks may be in_progress at once: PolicySingle
	// (the default), PolicyParallel, or PolicyAuto (read from the agent's
	// tool description). It decides how TW-VALID-TWOACTIVE is judged.
	Policy string
}

// Run runs every case against the agent and judges every check. The error
// is set only when the run could not happen at all (bad configuration);
// a misbehaving agent yields failed checks, never an error.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if len(cfg.Agent.Command) == 0 {
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
	start := time.Now()
	rep := &Report{Agent: cfg.Agent.String(), Started: start, Parallel: cfg.Parallel, Timeout: cfg.Timeout}

	cases := append([]*Case(nil), cfg.Cases...)
	results := make([]*CaseResult, len(cases))
	var dialect Dialect
	var itemProps map[string]bool
	firstDone := -1
	switch {
	case cfg.Dialect != "":
		d, err := DialectByName(cfg.Dialect)
		if err != nil {
			return nil, err
		}
		dialect, rep.Dialect, rep.DialectSource = d, d.Name, "forced"
	default:
		probe := -1
		for i, c := range cases {
			if c.Probe {
				probe = i
				break
			}
		}
		if probe < 0 {
			cases = append([]*Case{builtinProbe()}, cases...)
			results = append([]*CaseResult{nil}, results...)
			probe = 0
		}
		canon, _ := DialectByName(DialectTodoWrite)
		res := r.runCase(ctx, cases[probe], canon, nil)
		results[probe], firstDone = res, probe
		dialect, rep.Dialect, rep.DialectSource = canon, canon.Name, "default (nothing detected)"
		if len(res.ev.Journal) > 0 {
			var names []string
			for _, t := range res.ev.Journal[0].Tools {
				names = append(names, t.Name)
			}
			rep.ToolsOffered = names
			if d, ok := DetectDialect(names); ok {
				dialect, rep.Dialect, rep.DialectSource = d, d.Name, "detected"
				for _, t := range res.ev.Journal[0].Tools {
					if t.Name == d.Tool {
						itemProps = d.itemProperties(t.Parameters)
					}
				}
			}
		}
		res.ev.Dialect = dialect
		r.progress(res, 1, len(cases))
	}

	// The other cases, in parallel.
	sem := make(chan struct{}, cfg.Parallel)
	var wg sync.WaitGroup
	var mu sync.Mutex
	done := 0
	if firstDone >= 0 {
		done = 1
	}
	for i, c := range cases {
		if i == firstDone {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			select {
			case sem <- struct{}{}:
			case <-ctx.Done():
				results[i] = cancelledCase(c, dialect, ctx.Err())
				return
			}
			defer func() { <-sem }()
			res := r.runCase(ctx, c, dialect, itemProps)
			results[i] = res
			mu.Lock()
			done++
			n := done
			mu.Unlock()
			r.progress(res, n, len(cases))
		}()
	}
	wg.Wait()
	rep.Cases = results
	rep.Duration = time.Since(start)
	rep.Wires = modelWires(results)
	rep.Policy, rep.PolicySource = runPolicy(results)
	rep.judge(cfg.Checks, dialect, validator)
	rep.applyExpected(cfg.Expected)
	if cfg.Out != "" {
		if err := rep.WriteTranscripts(cfg.Out); err != nil {
			return rep, err
		}
	}
	return rep, nil
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
	// (Config.Progress need not be safe for concurrent use).
	progressMu sync.Mutex
}

// progress writes the live line of a finished case: ok, the checks it
// fails, or why it did not complete.
func (r *runner) progress(res *CaseResult, n, total int) {
	if r.cfg.Progress == nil {
		return
	}
	status := "ok"
	if !res.Completed {
		status = "ERROR " + oneLine(res.Error, 90)
	} else if failed := r.caseFailures(res.ev); len(failed) > 0 {
		status = "FAIL " + strings.Join(failed, ", ")
	}
	r.progressMu.Lock()
	defer r.progressMu.Unlock()
	fmt.Fprintf(r.cfg.Progress, "[%2d/%d] %-20s %6.2fs  %s\n", n, total, res.ID, res.Duration.Seconds(), status)
}

// caseFailures judges one case on its own, for the progress line.
func (r *runner) caseFailures(ev *Evidence) []string {
	ev.validator = r.validator
	var out []string
	for _, c := range r.cfg.Checks {
		if (c.Always || ev.Case.Feeds(c.ID)) && c.AppliesTo(ev.Dialect.Name) && ev.judge(c).Outcome == Fail {
			out = append(out, c.ID)
		}
	}
	return out
}

func cancelledCase(c *Case, d Dialect, err error) *CaseResult {
	ev := &Evidence{Case: c, Dialect: d, Writes: c.Writes(), Aborted: "run cancelled: " + err.Error()}
	return &CaseResult{ID: c.ID, Title: c.Title, Error: ev.Aborted, ev: ev}
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

// runCase runs one case to completion or abortion; it never returns an
// error: whatever went wrong is in the result.
func (r *runner) runCase(ctx context.Context, c *Case, d Dialect, itemProps map[string]bool) *CaseResult {
	start := time.Now()
	ev := &Evidence{Case: c, Dialect: d, Policy: r.cfg.Policy, Writes: c.Writes()}
	res := &CaseResult{ID: c.ID, Title: c.Title, ev: ev}
	defer func() {
		res.Duration = time.Since(start)
		res.Completed = ev.Aborted == ""
		res.Error = ev.Aborted
		if len(ev.Procs) > 0 {
			res.Startup = ev.Procs[0].Startup
			res.StderrTail = lastLines(ev.Procs[len(ev.Procs)-1].Stderr, 10)
		}
	}()

	script, err := c.script(d, itemProps)
	if err != nil {
		ev.Aborted = err.Error()
		return res
	}
	ev.Script = script
	ctx, cancel := context.WithTimeout(ctx, r.cfg.Timeout)
	defer cancel()

	cwd, err := os.MkdirTemp(r.cfg.TempDir, "conform-"+safeName(c.ID)+"-")
	if err != nil {
		ev.Aborted = fmt.Sprintf("make working directory: %v", err)
		return res
	}
	ev.Cwd = cwd
	if !r.cfg.KeepDirs {
		defer os.RemoveAll(cwd)
	}
	// The throw-away home: beside the working directory, never inside it
	// (agents scan their cwd), and kept across a restart step (agents keep
	// sessions and settings there).
	home, err := os.MkdirTemp(r.cfg.TempDir, "conform-"+safeName(c.ID)+"-home-")
	if err != nil {
		ev.Aborted = fmt.Sprintf("make home directory: %v", err)
		return res
	}
	ev.Home = home
	if !r.cfg.KeepDirs {
		defer os.RemoveAll(home)
	}
	srv := mockmodel.NewServer(script)
	defer func() {
		srv.Close()
		for _, e := range srv.Journal().Entries() {
			if e.Side {
				ev.SideRequests = append(ev.SideRequests, e)
			} else {
				ev.Journal = append(ev.Journal, e)
			}
		}
	}()
	u, _ := url.Parse(srv.URL)
	vars := Vars{BaseURL: srv.BaseURL(), URL: srv.URL, Host: u.Hostname(), Port: u.Port(), Cwd: cwd, Home: home, Case: c.ID, Model: r.cfg.Model}
	target, err := r.cfg.Agent.resolve(vars)
	if err != nil {
		ev.Aborted = err.Error()
		return res
	}
	wire := newWireLog(start)
	ev.wire = wire
	defer func() { ev.Wire = wire.snapshot() }()

	var (
		cur       *conn
		curProc   *ProcResult
		sessionID string
		loadCap   bool
	)
	startAgent := func() error {
		p, err := startProc(ctx, target, cwd)
		if err != nil {
			return err
		}
		idx := len(ev.Procs)
		ev.Procs = append(ev.Procs, ProcResult{Index: idx, Argv: target.argv, StartedAt: time.Since(start)})
		curProc = &ev.Procs[idx]
		cur = newConn(p, wire, idx, cwd)
		return nil
	}
	finish := func(abort string) {
		if cur == nil {
			return
		}
		p := cur.p
		switch {
		case abort != "":
			if !p.hasExited() {
				p.kill("killed (process group) after: " + abort)
			} else {
				p.shutdown(0)
			}
		default:
			if p.hasExited() {
				curProc.ExitedEarly = true
			}
			curProc.Shutdown = p.shutdown(r.cfg.Grace)
		}
		waitFor(cur.done, time.Second)
		curProc.Exit = p.exitDescription()
		if how := p.killedHow(); how != "" && curProc.Shutdown == "" {
			curProc.Shutdown = how
		}
		curProc.Stderr = p.stderr.String()
		curProc.ClientRequests = cur.requests()
		curProc.Killed = p.killedDescendants()
		cur = nil
	}
	abort := func(why string) *CaseResult {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			why += fmt.Sprintf(" (case timeout %s: the agent's process group was killed)", r.cfg.Timeout)
		}
		ev.Aborted = why
		finish(why)
		return res
	}
	defer func() {
		if cur != nil {
			finish(ev.Aborted)
		}
	}()

	if err := startAgent(); err != nil {
		return abort(err.Error())
	}
	prompts := 0
	for i, st := range c.Steps {
		sr := StepResult{Index: i, Op: st.Op, Proc: len(ev.Procs) - 1, ReqSeq: -1, RespSeq: -1}
		if st.Op == OpRestart {
			finish("")
			if err := startAgent(); err != nil {
				return abort(err.Error())
			}
			ev.Steps = append(ev.Steps, sr)
			continue
		}
		if st.Op == OpLoadSession && !loadCap {
			ev.LoadSkipped = "the agent does not advertise agentCapabilities.loadSession"
			sr.Skipped = ev.LoadSkipped
			ev.Steps = append(ev.Steps, sr)
			break
		}
		method, params := stepRequest(st, sessionID, cwd)
		t0 := time.Now()
		cr, err := cur.call(ctx, method, params)
		sr.Duration = time.Since(t0)
		sr.ReqSeq, sr.RespSeq, sr.Result = cr.ReqSeq, cr.RespSeq, cr.Result
		result := cr.Result
		if st.Op == OpPrompt {
			sr.Prompt = prompts
			prompts++
			ev.PromptsRun = prompts
		}
		if err != nil {
			sr.Error = err.Error()
			ev.Steps = append(ev.Steps, sr)
			var rpcErr *RPCError
			why := fmt.Sprintf("step %d (%s): %v", i+1, st.Op, err)
			if errors.As(err, &rpcErr) {
				why = fmt.Sprintf("step %d (%s): answered with %v", i+1, st.Op, rpcErr)
			}
			return abort(why)
		}
		ev.Steps = append(ev.Steps, sr)
		switch st.Op {
		case OpLoadSession:
			// A replay sent after the answer still belongs to the load: let it
			// arrive before the next request.
			drain(ctx, wire)
		case OpInitialize:
			curProc.Startup = time.Since(start) - curProc.StartedAt
			curProc.Init = result
			var ir struct {
				AgentCapabilities struct {
					LoadSession bool `json:"loadSession"`
				} `json:"agentCapabilities"`
			}
			_ = json.Unmarshal(result, &ir)
			loadCap = ir.AgentCapabilities.LoadSession
		case OpNewSession:
			var ns struct {
				SessionID string `json:"sessionId"`
			}
			if err := json.Unmarshal(result, &ns); err != nil || ns.SessionID == "" {
				return abort(fmt.Sprintf("step %d (newSession): no sessionId in the answer %s", i+1, truncate(string(result), 200)))
			}
			sessionID = ns.SessionID
		}
	}
	// No quiet period here: the shutdown closes stdin and the reader keeps
	// everything the agent writes until it exits.
	finish("")
	for _, e := range srv.Journal().Errors() {
		ev.ModelErrors = append(ev.ModelErrors, fmt.Sprintf("model request %d: %s", e.Index+1, e.Error))
	}
	return res
}

// drain waits until the wire has been quiet for quietPeriod (at most
// maxDrain).
func drain(ctx context.Context, w *wireLog) {
	deadline := time.Now().Add(maxDrain)
	last, since := w.len(), time.Now()
	for time.Now().Before(deadline) && ctx.Err() == nil {
		time.Sleep(10 * time.Millisecond)
		if n := w.len(); n != last {
			last, since = n, time.Now()
			continue
		}
		if time.Since(since) >= quietPeriod {
			return
		}
	}
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
func modelWires(results []*CaseResult) []string {
	var out []string
	seen := map[string]bool{}
	for _, r := range results {
		if r == nil || r.ev == nil {
			continue
		}
		for _, e := range append(append([]mockmodel.JournalEntry(nil), r.ev.Journal...), r.ev.SideRequests...) {
			if e.Wire != "" && !seen[e.Wire] {
				seen[e.Wire] = true
				out = append(out, e.Wire)
			}
		}
	}
	return out
}
