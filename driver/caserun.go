package driver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/mockmodel"
)

// caseRun is one case being driven: its directories, its mock model, its
// wire and its current agent process. RunCase sets it up, run drives
// the steps, and teardown releases everything in one fixed order, whatever
// happened before; the evidence is complete only after teardown.
type caseRun struct {
	cfg   CaseConfig
	ev    *CaseRecord
	start time.Time

	parent context.Context // the run's: cancelled when the run is interrupted
	ctx    context.Context // the case's: the run's, with the case timeout
	cancel context.CancelFunc
	clock  *caseClock // the case timeout, paused while the case waits for a slot

	env *Env

	// initDone is set once an initialize was answered.
	initDone atomic.Bool

	// sched is CaseConfig.Scheduler (unscheduled when it is nil).
	sched Scheduler
	// script is what the mock model plays: Env.Script, or the one
	// Scheduler.Script gave (nil until then).
	script *mockmodel.Script

	cur       *conn       // the running agent process (nil: none)
	curProc   *ProcResult // its record in ev.Procs
	sessionID string
	// marked: the current session's first prompt carried the lease's
	// marker (a pooled case marks the first prompt of each session/new).
	marked  bool
	loadCap bool
	// version is the protocol version the current process negotiated
	// (ACPv1 until its initialize is answered).
	version int
	// live: the session is open on the current process (its newSession
	// or a load was answered there; a restart ends it).
	live bool
}

// lastAnswered is called when the case's last step has its answer: the
// slot goes to the next case while the settle and the exit are observed.
// The time of the answer is taken first: the next case, started at once,
// must not start before it (TestSlotFreedWhenTheLastStepIsAnswered saw
// that under load when the slot went first).
func (cr *caseRun) lastAnswered() {
	cr.ev.Answered = time.Since(cr.start)
	cr.sched.Reached(Event{Kind: LastAnswered})
}

// unscheduled is the Scheduler of a case with none: it has its script
// (Env.Script) and never waits.
type unscheduled struct{}

func (unscheduled) Reached(Event) {}
func (unscheduled) Script(context.Context) (*mockmodel.Script, error) {
	return nil, errors.New("no script to play")
}
func (unscheduled) GoOn(context.Context) error { return nil }

// RunCase drives one case to completion or abortion and returns what it
// observed; it never returns an error: whatever went wrong is in the
// record (Aborted).
//
// It makes the case's environment (Env), starts the agent, runs the
// steps (a failure aborts the case and ends the agent at once), settles,
// stops the agent and releases everything in one fixed order, whatever
// happened before.
func RunCase(ctx context.Context, cfg CaseConfig) *CaseRecord {
	if cfg.Env.Start.IsZero() {
		cfg.Env.Start = time.Now()
	}
	if l := cfg.Lease; l != nil {
		cfg.Env.Target = l.Target(cfg.Env.Target)
		cfg.Env.Tenant, cfg.Env.ModelURL, cfg.Env.ModelBase = l.Model, l.URL, "/v1"
		defer l.Release()
	}
	cr := &caseRun{cfg: cfg, start: cfg.Env.Start, parent: ctx, ev: &CaseRecord{Offer: cfg.Offer}, script: cfg.Env.Script, sched: cfg.Scheduler, version: ACPv1}
	if cr.sched == nil {
		cr.sched = unscheduled{}
	} else if cfg.Env.Script == nil {
		cr.cfg.Env.ScriptLater = true
	}
	// The case's timeout: its cause is context.DeadlineExceeded (what the
	// errors and abort read), and its clock stops while the case waits for
	// a parallel slot (withoutSlot): the runner's wait is not the agent's.
	cctx, cancel := context.WithCancelCause(ctx)
	cr.clock = startCaseClock(cfg.Timeout, func() { cancel(context.DeadlineExceeded) })
	cr.ctx, cr.cancel = cctx, func() { cr.clock.stop(); cancel(context.Canceled) }
	defer cr.teardown()
	if err := cr.setup(); err != nil {
		cr.ev.Aborted = err.Error()
		return cr.ev
	}
	cr.run()
	return cr.ev
}

// setup makes the case's directories and mock model, and resolves the
// agent's templates.
func (cr *caseRun) setup() error {
	env, err := NewEnv(cr.cfg.Env)
	cr.env = env
	if env != nil {
		cr.ev.Cwd, cr.ev.Home = env.Cwd, env.Home
	}
	if err != nil {
		return err
	}
	return env.Resolve()
}

// run starts the agent and runs the steps; the first failure aborts the
// case (Evidence.Aborted) and ends the agent at once.
func (cr *caseRun) run() {
	if _, ok := cr.sched.(unscheduled); !ok {
		stop := make(chan struct{})
		defer close(stop)
		go cr.watchFirstRequest(stop)
	}
	if err := cr.startAgent(); err != nil {
		cr.ev.NotStarted = err.Error()
		cr.abort(err.Error())
		return
	}
	for i, st := range cr.cfg.Steps {
		if st.Op == OpPrompt && cr.script == nil {
			if err := cr.playScript(); err != nil {
				cr.abort(fmt.Sprintf("step %d (%s): %v", i+1, st.Op, err))
				break
			}
		}
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
	for _, e := range cr.env.model.Journal().Errors() {
		cr.ev.ModelErrors = append(cr.ev.ModelErrors, fmt.Sprintf("model request %d: %s", e.Index+1, e.Error))
	}
	if l := cr.cfg.Lease; l != nil {
		cr.ev.ModelErrors = append(cr.ev.ModelErrors, l.Unattributed()...)
	}
}

// playScript gets the script the scheduler gives, with the case's clock
// stopped, and has the mock model play it.
func (cr *caseRun) playScript() error {
	cr.clock.pause()
	t0 := time.Now()
	s, err := cr.sched.Script(cr.ctx)
	cr.ev.ScriptWait = time.Since(t0)
	cr.clock.resume()
	if err == nil && s == nil {
		err = errors.New("no script to play")
	}
	if err != nil {
		return fmt.Errorf("the mock model's script: %w", err)
	}
	cr.script = s
	return cr.env.model.Play(s)
}

// watchFirstRequest tells the scheduler the tools of the first model
// request that offers any as soon as the mock has it: side requests, a
// request on an unknown endpoint (a client's probe of the API) and one
// that offers no tools tell nothing of the agent's tools.
func (cr *caseRun) watchFirstRequest(stop <-chan struct{}) {
	j := cr.env.model.Journal()
	for {
		changed := j.Changed() // taken before the entries are read: none is missed
		for _, e := range j.Entries() {
			if !e.Side && e.Wire != "" && len(e.Tools) > 0 {
				cr.sched.Reached(Event{Kind: FirstRequest, InitAnswered: cr.initDone.Load(), Tools: e.Tools})
				return
			}
		}
		select {
		case <-stop:
			return
		case <-changed:
		}
	}
}

// step runs step i; it reports whether the case stops there (aborted, or
// a load the agent cannot do).
func (cr *caseRun) step(i int, st Step) (stop bool) {
	ev := cr.ev
	sr := StepResult{Index: i, Op: st.Op, Proc: len(ev.Procs) - 1, ReqSeq: -1, RespSeq: -1}
	if st.Op == OpRestart {
		// Shutting the agent down is waiting (its grace).
		var retireErr error
		if cr.withoutSlot(true, fmt.Sprintf("step %d (restart)", i+1), func() { retireErr = cr.endForRestart() }) {
			return true
		}
		if retireErr != nil {
			cr.abort(fmt.Sprintf("step %d (restart): %v", i+1, retireErr))
			return true
		}
		if err := cr.startAgent(); err != nil {
			cr.abort(err.Error())
			return true
		}
		ev.Steps = append(ev.Steps, sr)
		return false
	}
	if st.Op == OpLoadSession && !cr.loadCap {
		ev.LoadSkipped = "the agent does not advertise agentCapabilities.loadSession"
		if cr.version == ACPv2 {
			ev.LoadSkipped = "the agent does not advertise capabilities.session (protocol version 2: session/resume is part of it)"
		}
		sr.Skipped = ev.LoadSkipped
		ev.Steps = append(ev.Steps, sr)
		return true
	}
	if st.Op == OpPrompt && !cr.marked && cr.cfg.Lease != nil {
		// The mock model tells the case's requests by it (Lease.Marker):
		// each session's conversation starts with it.
		st.Text += "\n\n" + cr.cfg.Lease.Marker
		cr.marked = true
	}
	method, params := stepRequest(st, cr.sessionID, ev.Cwd, cr.cfg.Offer, cr.version)
	t0 := time.Now()
	var stopCancel func() (int, string)
	if st.Op == OpPrompt && st.Cancel {
		stopCancel = cr.cancelOnceTaken()
	}
	res, err := cr.cur.call(cr.ctx, method, params)
	sr.ReqSeq, sr.RespSeq, sr.Result = res.ReqSeq, res.RespSeq, res.Result
	if st.Op == OpPrompt && err == nil && cr.version == ACPv2 {
		// On v2 the answer only acknowledges the prompt: the turn ends
		// at the agent's idle state_update.
		cr.awaitIdle(&sr)
	}
	if stopCancel != nil {
		sr.CancelSeq, sr.CancelAfter = stopCancel()
	}
	sr.Duration = time.Since(t0)
	if i == len(cr.cfg.Steps)-1 && err == nil {
		cr.lastAnswered()
	}
	if st.Op == OpPrompt {
		sr.Prompt = ev.PromptsRun
		ev.PromptsRun++
	}
	if err != nil {
		sr.Error = err.Error()
		ev.Steps = append(ev.Steps, sr)
		var rpcErr *RPCError
		if errors.As(err, &rpcErr) && st.Op == OpLoadSession && cr.live && RefusesLiveLoad(rpcErr) {
			// A load of the session this process has open, refused:
			// nothing requires an agent to accept it, and the session is
			// still open, so the case goes on (the load checks are not
			// judged on this load: see StepResult.Refused).
			ev.Steps[len(ev.Steps)-1].Refused = fmt.Sprintf("step %d (loadSession) asked for the session open on this process, and the agent refused: %v", i+1, rpcErr)
			return false
		}
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
		if st.Op == OpInitialize && len(ev.Procs) == 1 && cr.ctx.Err() == nil && waitFor(cr.cur.p.exited, time.Second) {
			// The agent's first process is gone, without an answer to
			// initialize (it exited before, or as, the request was
			// written): the agent did not start (a missing module, a bad
			// flag), which says nothing about its todo list. A hung one
			// is still running when the case's time is up.
			ev.NotStarted = fmt.Sprintf("it exited (%s) before answering initialize", cr.cur.p.exitDescription())
		}
		cr.abort(fmt.Sprintf("step %d (%s): %v", i+1, st.Op, err))
		return true
	}
	ev.Steps = append(ev.Steps, sr)
	return cr.answered(i, st, &ev.Steps[len(ev.Steps)-1])
}

// answered takes in the answer of step i (sr): it settles after a prompt
// or a load, and keeps what initialize and newSession tell. It reports
// whether the case stops there.
func (cr *caseRun) answered(i int, st Step, sr *StepResult) (stop bool) {
	switch st.Op {
	case OpPrompt:
		// Updates the agent sends after its answer still belong to the
		// turn: let them arrive before the next request (or the shutdown).
		// A cancelled turn's later script turns need not come.
		return cr.settleBetween(i, sr, !st.Cancel)
	case OpLoadSession:
		cr.live = true
		// A replay sent after the answer still belongs to the load: let it
		// arrive before the next request. The same wait as after a prompt,
		// with its window (--settle, short in tests): it ends after
		// settleFast when the answer stays the agent's last message.
		return cr.settleBetween(i, sr, false)
	case OpInitialize:
		cr.initialized(sr.Result)
	case OpNewSession:
		var ns struct {
			SessionID string `json:"sessionId"`
		}
		if err := json.Unmarshal(sr.Result, &ns); err != nil || ns.SessionID == "" {
			cr.abort(fmt.Sprintf("step %d (newSession): no sessionId in the answer %s", i+1, Truncate(string(sr.Result), 200)))
			return true
		}
		cr.sessionID, cr.live, cr.marked = ns.SessionID, true, false
	}
	return false
}

// settleBetween settles after step i (sr). Before a later step, the case
// only waits: it tells the scheduler (Waiting) and asks it before that
// step (GoOn). It reports whether the case stops there (the run ended
// while it waited).
func (cr *caseRun) settleBetween(i int, sr *StepResult, answered bool) (stop bool) {
	if i == len(cr.cfg.Steps)-1 {
		cr.settle(sr, answered)
		return false
	}
	return cr.withoutSlot(false, fmt.Sprintf("after step %d (%s)", i+1, sr.Op), func() { cr.settle(sr, answered) })
}

// withoutSlot runs wait (a settle, a restart's shutdown: exiting) after
// telling the scheduler the case is Waiting, and asks it after the wait
// when the case may go on (GoOn). It reports whether the case stops
// there: the run ended while it waited for a slot (where says when).
func (cr *caseRun) withoutSlot(exiting bool, where string, wait func()) (stop bool) {
	cr.sched.Reached(Event{Kind: Waiting, Exiting: exiting})
	wait()
	cr.clock.pause()
	err := cr.sched.GoOn(cr.ctx)
	cr.clock.resume()
	if err != nil {
		cr.abort(fmt.Sprintf("%s: waiting for a parallel slot: %v", where, context.Cause(cr.ctx)))
		return true
	}
	return false
}

// initialized takes in an initialize answer: the process's start-up time,
// its answer, and whether it can load sessions.
func (cr *caseRun) initialized(result json.RawMessage) {
	cr.initDone.Store(true)
	cr.sched.Reached(Event{Kind: Initialized})
	cr.curProc.Startup = time.Since(cr.start) - cr.curProc.StartedAt
	cr.curProc.Init = result
	cr.version = cr.cfg.Offer.Negotiated(result)
	cr.curProc.ACPVersion = cr.version
	if cr.version == ACPv2 {
		cr.loadCap = canResume(result)
		return
	}
	var ir struct {
		AgentCapabilities struct {
			LoadSession bool `json:"loadSession"`
		} `json:"agentCapabilities"`
	}
	_ = json.Unmarshal(result, &ir)
	cr.loadCap = ir.AgentCapabilities.LoadSession
}

// RefusesLiveLoad reports whether e, the answer to a session/load of a
// session the process has open, clearly refuses that load (as the original
// implementation does, "-32602 Invalid params: session … is already
// loaded"): an invalid params or invalid request error, or one whose
// message or data says the session is already loaded (open, active).
// Another error (an internal error, session not found) is a broken load.
func RefusesLiveLoad(e *RPCError) bool {
	if e.Code == -32602 || e.Code == -32600 {
		return true
	}
	return strings.Contains(strings.ToLower(e.Message+" "+string(e.Data)), "already")
}

// cancelOnceTaken watches, from now on, for a sign that the agent took
// the prompt's first model turn that calls tools (the case's write) before
// it answers the prompt, and then sends session/cancel for the case's
// session (Step.Cancel). The signs: a plan update of the current agent; a
// final tool_call_update (completed or failed) for as many tool calls as
// that turn makes; the mock model receiving the result of one of its
// calls. A sign after the answer cancels nothing, however soon the watch
// sees it. stop ends the watch and returns the wire position of the cancel
// sent (-1: none, the turn ended first) and the sign it followed.
func (cr *caseRun) cancelOnceTaken() (stop func() (seq int, after string)) {
	c, from, sid, v2 := cr.cur, cr.env.wire.len(), cr.sessionID, cr.version == ACPv2
	var ids []string // the calls of the prompt's first turn, if it calls tools
	if t := cr.turnsOfPromptsSent(); cr.script != nil && t < len(cr.script.Turns) {
		ids = cr.script.CallIDs(t)
	}
	type sent struct {
		seq   int
		after string
	}
	done, out := make(chan struct{}), make(chan sent, 1)
	// The model's answer to the request carrying a result of the write
	// waits until the cancel is sent: the agent cannot end the turn on it
	// first. On v2, where the turn's idle must then say cancelled, it
	// waits on (for cancelGrace at most) for the agent to abort the
	// request on the cancel, as a cancel's "all ongoing operations
	// aborted" asks: an agent that read the cancel never gets the answer,
	// and whether it did is not left to which of its goroutines ran first.
	held, release := make(chan string, 1), make(chan struct{})
	var cancelSent atomic.Bool
	grace := max(10*cr.cfg.Settle, settlePendingMin)
	if len(ids) > 0 {
		cr.env.model.SetHold(func(ctx context.Context, e mockmodel.JournalEntry) {
			who := resultOf(e, ids)
			if who == "" || e.Side {
				return
			}
			select {
			case held <- fmt.Sprintf("the model receiving %s's result (model request %d)", who, e.Index+1):
			default:
				return // an earlier one was held
			}
			select {
			case <-release:
			case <-ctx.Done():
				return
			}
			if v2 && cancelSent.Load() {
				t := time.NewTimer(grace)
				defer t.Stop()
				select {
				case <-ctx.Done(): // the agent aborted the request
				case <-t.C:
				case <-cr.ctx.Done():
				}
			}
		})
	}
	go func() {
		res := sent{seq: -1}
		defer func() { out <- res }()
		defer close(release)
		ended := map[string]bool{} // tool calls reported completed or failed
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			after := ""
			for _, m := range cr.env.wire.since(from) {
				from = m.Seq + 1
				if m.Proc != c.idx || m.Dir != Received {
					continue
				}
				if (!v2 && m.Kind == KindResponse && m.ReplyTo == "session/prompt") || (v2 && idleOf(m, sid)) {
					return // the turn ended first: a sign after its end cancels nothing
				}
				switch m.UpdateKind() {
				case "plan", "plan_update":
					after = fmt.Sprintf("the plan #%d", m.Seq)
				case "tool_call", "tool_call_update":
					if id, status := toolCallStatus(m.Line); id != "" && (status == "completed" || status == "failed") {
						ended[id] = true
						if len(ids) > 0 && len(ended) >= len(ids) {
							after = fmt.Sprintf("the %s tool call reported %s (#%d)", ordinal(len(ended)), status, m.Seq)
						}
					}
				}
				if after != "" {
					break
				}
			}
			if after == "" {
				select {
				case after = <-held:
				default:
				}
			}
			if after != "" {
				n := map[string]any{"jsonrpc": "2.0", "method": "session/cancel", "params": map[string]any{"sessionId": sid}}
				res.seq, _ = c.writeMsg(cr.ctx, n, "session/cancel", "")
				res.after = after
				cancelSent.Store(res.seq >= 0)
				return
			}
			select {
			case <-done:
				return
			case <-cr.ctx.Done():
				return
			case <-tick.C:
			case a := <-held:
				held <- a // taken in the next round, after the wire
			}
		}
	}()
	return func() (int, string) {
		close(done)
		r := <-out
		cr.env.model.SetHold(nil)
		return r.seq, r.after
	}
}

// toolCallStatus reads the toolCallId and status of a tool_call or
// tool_call_update notification.
func toolCallStatus(line string) (id, status string) {
	var n struct {
		Params struct {
			Update struct {
				ToolCallID string `json:"toolCallId"`
				Status     string `json:"status"`
			} `json:"update"`
		} `json:"params"`
	}
	if json.Unmarshal([]byte(line), &n) != nil {
		return "", ""
	}
	return n.Params.Update.ToolCallID, n.Params.Update.Status
}

// resultOf returns the first of ids whose result model request e carries
// ("" when none).
func resultOf(e mockmodel.JournalEntry, ids []string) string {
	for _, m := range e.Messages {
		if m.Role == llm.RoleTool && slices.Contains(ids, m.ToolCallID) {
			return m.ToolCallID
		}
	}
	return ""
}

// ordinal is "1st", "2nd", "3rd", "4th", ...
func ordinal(n int) string {
	suffix := "th"
	switch {
	case n%100 >= 11 && n%100 <= 13:
	case n%10 == 1:
		suffix = "st"
	case n%10 == 2:
		suffix = "nd"
	case n%10 == 3:
		suffix = "rd"
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// endForRestart ends the current agent process at a restart step: a
// process of the case's own as an editor does (endAgent); a pooled
// process the case holds alone is retired (Lease.Retire: the same
// shutdown, observed and judged the same), and its stand-in ends with it.
func (cr *caseRun) endForRestart() error {
	l := cr.cfg.Lease
	if l == nil {
		cr.endAgent("")
		return nil
	}
	rec := cr.curProc
	t0 := time.Now()
	var w *ExitWatch
	who := ""
	if cr.cfg.Exits != nil {
		w, who = cr.cfg.Exits, fmt.Sprintf("agent process %d of case %s", rec.Index+1, cmp.Or(cr.cfg.ExitName, cr.cfg.Env.Name))
	}
	r, err := l.Retire(cr.cfg.Grace, w, who)
	if err != nil {
		return err
	}
	cr.ev.ExitWait += time.Since(t0)
	cr.endAgent("") // the stand-in, which ended with the process
	rec.Shutdown, rec.GraceCut, rec.Exit, rec.ExitedEarly, rec.Killed, rec.Retired = r.Shutdown, r.GraceCut, r.Exit, r.ExitedEarly, r.Killed, r.Note
	// Each session/new and each session after a restart starts with the
	// marker (Lease.Marker): an agent need not put the loaded
	// conversation in front of its model.
	cr.marked = false
	return nil
}

// startAgent starts a fresh agent process in the case's directory (for a
// pooled case after its restart, a fresh process in the folders of the
// one retired: Lease.Restart).
func (cr *caseRun) startAgent() error {
	idx := len(cr.ev.Procs)
	l := cr.cfg.Lease
	var startedAt time.Duration
	if l != nil && idx > 0 {
		startedAt = time.Since(cr.start)
		if err := l.Restart(); err != nil {
			return err
		}
	}
	a, err := cr.env.Start(cr.ctx)
	if err != nil {
		return err
	}
	pr := ProcResult{Index: idx, Argv: a.argv, InProcess: a.inProcess, StartedAt: cmp.Or(startedAt, time.Since(cr.start))}
	if l != nil {
		pr.Argv, pr.InProcess, pr.Pooled, pr.Loader, pr.PoolStore = l.m.env.target.argv, l.m.env.target.inproc != nil, l.Describe(), l.Loader(), l.Store()
	}
	cr.ev.Procs = append(cr.ev.Procs, pr)
	cr.curProc = &cr.ev.Procs[idx]
	cr.cur, cr.live, cr.version = a.c, false, ACPv1
	return nil
}

// abort records why the case stops and kills the agent. When the run was
// interrupted, that is the reason, and the agent is not blamed.
func (cr *caseRun) abort(why string) {
	switch {
	case cr.parent.Err() != nil:
		cr.ev.Interrupted = Interrupted(cr.parent)
	case errors.Is(context.Cause(cr.ctx), context.DeadlineExceeded):
		why += fmt.Sprintf(" (case timeout %s: the agent's process group was killed)", cr.cfg.Timeout)
		cr.ev.Aborted = why
	default:
		cr.ev.Aborted = why
	}
	cr.endAgent(why)
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
		w, who := cr.exits()
		rec.Shutdown, rec.GraceCut = p.shutdownWatched(cr.cfg.Grace, w, who)
		cr.ev.ExitWait += time.Since(t0)
	}
	waitFor(cr.cur.done, time.Second)
	rec.Exit = p.exitDescription()
	if how := p.killedHow(); how != "" && rec.Shutdown == "" {
		rec.Shutdown = how
	}
	rec.Stderr = p.stderr.String()
	if l := cr.cfg.Lease; l != nil && rec.Pooled != "" && rec.Retired == "" {
		// Released as its stand-in ended: alone in every process of the
		// case (a restart's too).
		rec.PooledAlone = l.Alone()
		for i := range cr.ev.Procs {
			cr.ev.Procs[i].PooledAlone = rec.PooledAlone
		}
	}
	rec.ClientRequests = cr.cur.requests()
	rec.Killed = p.killedDescendants()
	if l := cr.cfg.Lease; l != nil {
		rec.SessionCPU = l.SessionCPU()
	} else if !rec.InProcess {
		c := p.cpu()
		rec.CPU = &c
	}
	cr.cur, cr.curProc = nil, nil
}

// exits is what the current process's shutdown learns from and teaches
// (CaseConfig.Exits; none for a pooled case's stand-in), and the name it
// teaches under.
func (cr *caseRun) exits() (*ExitWatch, string) {
	if cr.cfg.Lease != nil || cr.cfg.Exits == nil {
		return nil, ""
	}
	return cr.cfg.Exits, fmt.Sprintf("agent process %d of case %s", cr.curProc.Index+1, cmp.Or(cr.cfg.ExitName, cr.cfg.Env.Name))
}

// teardown releases the case, in this order: the agent process (killed if
// it is still running), the wire (snapshot, once no process writes), the
// mock model (closed, its journal taken), the directories (unless
// KeepDirs), the case's context.
func (cr *caseRun) teardown() {
	ev := cr.ev
	cr.endAgent(ev.Aborted)
	if cr.env != nil {
		ev.Wire = cr.env.Wire()
		cr.env.Close()
		if cr.env.model != nil {
			for _, e := range cr.env.model.Journal().Entries() {
				if e.Side {
					ev.SideRequests = append(ev.SideRequests, e)
				} else {
					ev.Journal = append(ev.Journal, e)
				}
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
// most settlePendingMin, or 10 x Settle), then for quiet. It ends early
// when the agent can be shown to have nothing in flight: the model took
// every such turn and has no request open, no tool call announced since
// sr's request is without a final status (turnOver), and the wires were
// quiet for settleFast after the answer (or after updates about the
// session), or, after updates of the turn, for the longest gap between
// them; and at once when the agent's stdout closed or the case timed out.
// It records in sr how long it waited and why it ended.
func (cr *caseRun) settle(sr *StepResult, answered bool) {
	sr.Settle, sr.Settled = cr.wait(sr, answered, false)
}

// awaitIdle waits, after a v2 prompt's answer (an acknowledgment), for
// the idle state_update that ends its turn: it records in sr the idle's
// position and stopReason, how long it waited, and, when none came, why
// it gave up: what ends a settle without it (the wires quiet for the
// window, the agent's stdout closed, the case's time up).
func (cr *caseRun) awaitIdle(sr *StepResult) {
	var why string
	sr.IdleWait, why = cr.wait(sr, true, true)
	if sr.IdleSeq == 0 && !cr.idleAfter(sr) { // it may have come as the wait ended
		sr.NoIdle = "no idle state_update came: " + why
	}
}

// idleOf reports whether m is an idle state_update for session sid.
func idleOf(m WireMsg, sid string) bool {
	s, _, ok := IdleUpdate(m)
	return ok && s == sid
}

// idleAfter finds the first idle state_update of the current process for
// the case's session after step sr's request, and records it in sr.
func (cr *caseRun) idleAfter(sr *StepResult) bool {
	for _, m := range cr.env.wire.since(sr.ReqSeq + 1) {
		if m.Proc != cr.cur.idx {
			continue
		}
		if s, reason, ok := IdleUpdate(m); ok && s == cr.sessionID {
			sr.IdleSeq, sr.StopReason = m.Seq, reason
			return true
		}
	}
	return false
}

// wait is the settle's loop (settle), returning how long it waited and
// why it ended. untilIdle (a v2 prompt) ends it as soon as the turn's idle
// state_update is on the wire, and never early before it: the idle is the
// turn's end as v1's answer is, and an agent can be silent between its
// model's last answer and its idle for longer than the settle's window,
// so the wires must then be quiet for pendingMax (10 x Settle, at least
// settlePendingMin) before the wait gives up on it.
func (cr *caseRun) wait(sr *StepResult, answered, untilIdle bool) (took time.Duration, why string) {
	pendingMax := max(10*cr.cfg.Settle, settlePendingMin)
	window := cr.cfg.Settle
	if untilIdle {
		window = pendingMax
	}
	fast := min(window, settleFast)
	want := cr.turnsOfPromptsSent()
	tick := max(min(window/10, 10*time.Millisecond), time.Millisecond)
	t0 := time.Now()
	defer func() { took = time.Since(t0) }()
	for {
		if untilIdle && cr.idleAfter(sr) {
			return 0, "the agent reported idle"
		}
		act := cr.env.model.Activity()
		seq, at := cr.env.wire.last()
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
			return 0, "the case timed out"
		case cr.readerDone():
			return 0, "the agent closed its stdout"
		case act.InFlight == 0 && cr.cur.agentIdle():
			// Nothing more is coming: what came after the answer is on
			// the wire, and is judged as it is after any settle.
			return 0, "the agent reported it had nothing more to send, all it sent read, no model request in flight"
		case act.InFlight > 0:
		case pending && now.Sub(t0) < pendingMax:
		case quiet >= window:
			why = fmt.Sprintf("both wires quiet for %s", window)
			if pending {
				why += fmt.Sprintf(" (after waiting %s for %d more model turn(s) that never came)", pendingMax, want-act.Taken)
			}
			return 0, why
		case untilIdle:
		case quiet >= fast && !pending && sr.EndSeq() >= 0 && seq >= sr.EndSeq():
			if why = cr.turnOver(sr, seq, quiet, fast, window); why != "" {
				return 0, why
			}
		}
		select {
		case <-cr.ctx.Done():
		case <-time.After(tick):
		}
	}
}

// sessionUpdatesSince reports whether every message on the wire after
// position from is a session/update the agent sent about the session, not
// a turn's progress (TurnUpdate), such as the available_commands_update
// codex-acp sends after each answer; kinds lists them.
func (cr *caseRun) sessionUpdatesSince(from int) (kinds string, ok bool) {
	var seen []string
	for _, m := range cr.env.wire.since(from + 1) {
		k := m.UpdateKind()
		if m.Dir != Received || m.Kind != KindNotification || k == "" || TurnUpdate(k) {
			return "", false
		}
		if !slices.Contains(seen, k) {
			seen = append(seen, k)
		}
	}
	return strings.Join(seen, ", "), len(seen) > 0
}

// turnOver is why the settle after step sr can end early, the model having
// taken every turn and nothing on either wire for quiet ("" when it
// cannot): no tool call of the turn is open, and the agent's last message
// (seq) is the answer, or after it the agent sent only updates about the
// session, or updates of the turn with nothing since for at least the
// longest gap between them (at most window).
func (cr *caseRun) turnOver(sr *StepResult, seq int, quiet, fast, window time.Duration) string {
	late := cr.lateUpdates(sr)
	if late.open != 0 {
		return "" // the turn's work goes on: its updates may come at any time
	}
	end, what := sr.RespSeq, "the answer"
	if sr.IdleSeq > 0 {
		end, what = sr.IdleSeq, "the idle state_update"
	}
	if seq == end {
		return fmt.Sprintf("%s was the agent's last message, no tool call of the turn is open and the model took every turn (quiet for %s)", what, fast)
	}
	if kinds, ok := cr.sessionUpdatesSince(end); ok {
		return fmt.Sprintf("after the answer the agent sent only updates about the session (%s), no tool call of the turn is open and the model took every turn (quiet for %s)", kinds, fast)
	}
	if wait := min(window, max(fast, late.gap)); quiet >= wait {
		return fmt.Sprintf("after the answer the agent sent updates of the turn (%s), no tool call of the turn is open and the model took every turn (quiet for %s, the longest gap between them or more)",
			late.kinds, wait.Round(time.Millisecond))
	}
	return ""
}

// lateOfTurn is what the agent sent after a step's answer (lateUpdates):
// the kinds of its updates, the longest gap between two of its messages
// (the answer included), and how many of the tool calls announced since
// the step's request have no final status (completed, failed) yet.
type lateOfTurn struct {
	kinds string
	gap   time.Duration
	open  int
}

// lateUpdates reads the wire after step sr's request (lateOfTurn). A
// tool call still open is work the turn has not finished: its updates,
// the plan its todo call shows, may come at any time.
func (cr *caseRun) lateUpdates(sr *StepResult) lateOfTurn {
	var late lateOfTurn
	end := sr.EndSeq()
	if sr.ReqSeq < 0 || end < 0 {
		return late
	}
	status := map[string]string{}
	var kinds []string
	var prev time.Time
	for _, m := range cr.env.wire.since(sr.ReqSeq + 1) {
		if m.Seq >= end {
			if !prev.IsZero() {
				late.gap = max(late.gap, m.Time.Sub(prev))
			}
			prev = m.Time
		}
		k := m.UpdateKind()
		if m.Seq > end && k != "" && !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
		if m.Dir != Received || m.Kind != KindNotification || (k != "tool_call" && k != "tool_call_update") {
			continue
		}
		id, st := toolCallStatus(m.Line)
		if id == "" {
			continue
		}
		// An update without a status keeps the call's last one; a call
		// announced without one is pending (ACP's default; on v2 the
		// first tool_call_update of an id announces it).
		if _, seen := status[id]; st != "" || k == "tool_call" || (cr.version == ACPv2 && !seen) {
			status[id] = st
		}
	}
	for _, st := range status {
		if st != "completed" && st != "failed" {
			late.open++
		}
	}
	late.kinds = strings.Join(kinds, ", ")
	return late
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
	if cr.script == nil {
		return 0
	}
	for _, t := range cr.script.Turns {
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

// caseClock is a case's timeout (CaseConfig.Timeout): expire runs once the
// case has run for that long, not counting the time it waited for a
// parallel slot between pause and resume.
type caseClock struct {
	mu    sync.Mutex
	timer *time.Timer
	left  time.Duration // of the timeout, as of since
	since time.Time
	fired bool
}

func startCaseClock(d time.Duration, expire func()) *caseClock {
	c := &caseClock{left: d, since: time.Now()}
	c.timer = time.AfterFunc(d, func() {
		c.mu.Lock()
		c.fired = true
		c.mu.Unlock()
		expire()
	})
	return c
}

// pause stops the clock (a case waiting for a slot); resume starts it
// again with the time that was left.
func (c *caseClock) pause() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.fired && c.timer.Stop() {
		c.left -= time.Since(c.since)
	}
}

func (c *caseClock) resume() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.fired {
		c.since = time.Now()
		c.timer.Reset(max(c.left, 0))
	}
}

func (c *caseClock) stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.fired = true
	c.timer.Stop()
}
