package conformance

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/todoharness/todoharness/conformance/internal/slots"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/todolist"
	"github.com/todoharness/todoharness/internal/termtext"
	"github.com/todoharness/todoharness/mockmodel"
)

// Poolable reports whether the case may run as a session of a pooled
// agent process (Config.Pool): not the probe (its first model request
// tells the agent's tools), no exit check of its own (ACP-EXIT-1 judges
// how its process ends, at every end), and no session/load but after a
// restart (a load of the session open on its process keeps a process of
// its own, as before). A case that restarts its agent and loads its
// session may: it holds its pooled process alone (Restarts), its restart
// retires that process, and a fresh one started in its folders loads the
// session and then joins the pool in its place (driver.Lease.Retire,
// Restart).
func (c *Case) Poolable() bool {
	if c.Probe || slices.Contains(c.Checks, ACPExit1) {
		return false
	}
	restarted := false
	for _, st := range c.Steps {
		switch st.Op {
		case driver.OpRestart:
			restarted = true
		case driver.OpLoadSession:
			if !restarted {
				return false
			}
		}
	}
	return true
}

// Restarts reports whether the case restarts its agent (a restart step):
// pooled, it holds its process alone (driver.Pool.LeaseExclusive).
func (c *Case) Restarts() bool {
	return slices.ContainsFunc(c.Steps, func(st driver.Step) bool { return st.Op == driver.OpRestart })
}

// pooled reports whether the case ran as a session of a pooled process.
func (ev *Evidence) pooled() bool {
	return len(ev.Procs) > 0 && ev.Procs[0].Pooled != ""
}

// pooledAlone reports whether the case was the first and only session of
// a fresh pooled process (driver.ProcResult.PooledAlone): it ran alone in
// a fresh process, and a failure there is its own, reported with no run
// again alone.
func (ev *Evidence) pooledAlone() bool {
	return ev.pooled() && ev.Procs[0].PooledAlone
}

// firstAloneWords say what a case that was the first and only session of
// a fresh pooled process was (Evidence.pooledAlone), after the name of the
// process (CaseResult.Pool).
const firstAloneWords = "the first and only session of this fresh pooled process while it ran (started for the case; it served other cases only after the case ended): the case ran alone in a fresh process, so a failure there needs no re-run"

// howItRan says how the case ran, when it ran pooled (CaseResult.Pool).
func (ev *Evidence) howItRan() string {
	switch {
	case ev.PooledFailure != nil:
		return "failed as " + ev.PooledFailure.Session + ", then ran again alone in a fresh process: reported from that run"
	case ev.NotRunAgain != "":
		return ev.NotRunAgain
	case ev.pooledAlone():
		return ev.Procs[0].Pooled + ", " + firstAloneWords + ev.restartedIn()
	case ev.pooled():
		return ev.Procs[0].Pooled + ", shared with other cases" + ev.restartedIn()
	}
	return ""
}

// restartedIn says, of a pooled case that restarted its agent, where its
// session went after the restart ("" for any other case).
func (ev *Evidence) restartedIn() string {
	for _, p := range ev.Procs[1:] {
		if p.Loader != "" {
			return fmt.Sprintf("; its restart retired that process, and agent process %d, %s, loaded the session (%s)", p.Index+1, p.Loader, strings.TrimPrefix(p.Pooled, "a session of "))
		}
	}
	return ""
}

// poolMode is RunInfo.Pool of the run being driven.
func (r *runner) poolMode() string {
	if r.pool != nil {
		return PoolOn
	}
	return ""
}

// rerunMode is RunInfo.RerunPooled of the run being driven: what an
// exploration's Config.Confirmed decides is said by its own report.
func (r *runner) rerunMode() string {
	if r.pool == nil {
		return ""
	}
	return r.cfg.RerunPooled
}

// PooledFailure is what a case failed as a session of a pooled process,
// before it was run again alone in a fresh process (Evidence.PooledFailure).
type PooledFailure struct {
	// Session is the pooled process it was a session of
	// (driver.ProcResult.Pooled).
	Session string `json:"session"`
	// Failed lists the checks it failed there, Failures their first
	// reasons ("ID: reason"), Aborted why it did not complete, if it did not.
	Failed   []string `json:"failed,omitempty"`
	Failures []string `json:"failures,omitempty"`
	Aborted  string   `json:"aborted,omitempty"`
	// Stderr is read from evidence saved before Evidence was kept (and
	// saved beside it for a while): the last 16 KiB of what the pooled
	// process wrote on stderr while it started and while the case held
	// it. It is no longer written: Evidence.Procs[0].Stderr has it all
	// (PooledStderr).
	Stderr string `json:"stderr,omitempty"`
	// Evidence is the case's evidence as that session: ACP-ISOLATION-1
	// reads it beside the other sessions of the process (nil in evidence
	// saved before it was kept).
	Evidence *Evidence `json:"evidence,omitempty"`
	// reasons is each failed check's whole reason (Config.Confirmed),
	// all every failure of it (confirmations).
	reasons map[string]string
	all     map[string][]string
}

// PooledStderr is what the pooled process wrote on stderr while it
// started and while the case held it: its pooled session's
// ProcResult.Stderr, or, in evidence saved before that was kept, Stderr.
func (pf *PooledFailure) PooledStderr() string {
	if e := pf.Evidence; e != nil && len(e.Procs) > 0 {
		return e.Procs[0].Stderr
	}
	return pf.Stderr
}

// rerunAlone runs again, alone in a fresh process, each case that failed
// as a session of a pooled process (a MUST or SHOULD check failed on it,
// or it did not complete; an INFO check fails nothing): the fresh run is what is reported, with what failed in the
// pooled process kept in it (Evidence.PooledFailure). A check that fails
// alone too is reported as it is; one that passes alone is Flaky
// (judgeCheck): the failure came with the pool, from another session's
// traffic or by chance, and a pass is not what was seen. A case that was
// the first and only session of a fresh pooled process (pooledAlone) ran
// alone in a fresh process already: its failure is reported as it is.
//
// Under RerunKnown the cases run again in two rounds: first one case for
// each kind of failure no fresh process has confirmed yet
// (representatives), then those of the others that a failure still
// unconfirmed leaves: a case each of whose failures a fresh process
// confirmed by then, a representative run again alone or a case that
// ended after it, is not run again (NotRunAgain), as at its end.
func (r *runner) rerunAlone(ctx context.Context, evs []*Evidence) ([]*Evidence, error) {
	v, err := r.validator()
	if err != nil {
		return nil, err
	}
	again := map[int]*PooledFailure{}
	for i, ev := range evs {
		if pf := pooledFailure(ev, r.cfg.Checks, v); pf != nil && !ev.pooledAlone() {
			again[i] = pf
		}
	}
	if len(again) == 0 {
		return evs, nil
	}
	pool := r.pool
	r.pool = nil // alone: a process of its own
	defer func() { r.pool = pool }()
	out := slices.Clone(evs)
	if r.cfg.RerunPooled == RerunEvery {
		r.runAgainAlone(ctx, evs, out, again, slices.Sorted(maps.Keys(again)))
		return out, nil
	}
	first, rest := r.representatives(evs, again)
	r.runAgainAlone(ctx, evs, out, again, first)
	var next []int
	for _, i := range rest {
		if !r.decideKnown(evs[i], again[i]) {
			next = append(next, i)
		} else {
			r.knownProgress(evs[i], again[i])
		}
	}
	r.runAgainAlone(ctx, evs, out, again, next)
	return out, nil
}

// runAgainAlone runs the cases evs[i] of which (each with what it failed
// pooled, again[i]) again alone in a fresh process, at most
// Config.Parallel at once, and puts each one's fresh evidence in out[i].
func (r *runner) runAgainAlone(ctx context.Context, evs, out []*Evidence, again map[int]*PooledFailure, which []int) {
	dialect := func(context.Context) (driver.Dialect, map[string]bool, error) { return r.dialect, r.itemProps, nil }
	s := slots.New(r.cfg.Parallel)
	var wg sync.WaitGroup
	for _, i := range which {
		pf := again[i]
		if s.Take(ctx, false) != nil {
			break // interrupted: the pooled evidence stands, and the run says so
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			slot := slots.NewCase(s)
			defer slot.Finish()
			old := evs[i]
			ev := r.runCase(ctx, old.Case, dialect, nil, slot)
			ev.Index, ev.Run, ev.Repeat, ev.Dialect = old.Index, old.Run, old.Repeat, old.Dialect
			if ev.Script == nil {
				ev.Script = old.Script
			}
			pf.Evidence = old
			ev.PooledFailure = pf
			out[i] = ev
			r.rerunProgress(ev, pf)
		}()
	}
	wg.Wait()
}

// pooledFailure is what a case that ran as a session of a pooled process
// failed there, if it is to run again alone: a MUST or SHOULD check of
// cat failed on it, or it did not complete (nil: it did not run pooled, it
// was interrupted, it failed nothing but INFO checks, which fail
// nothing, or what it failed is confirmed alone already: NotRunAgain).
func pooledFailure(ev *Evidence, cat []Check, v *driver.SchemaValidator) *PooledFailure {
	if !ev.pooled() || ev.Interrupted != "" || ev.NotRun != "" || ev.NotRunAgain != "" {
		return nil
	}
	failed, vds := requiredFailures(ev, cat, v)
	if len(failed) == 0 && ev.Aborted == "" {
		return nil
	}
	pf := &PooledFailure{Session: ev.Procs[0].Pooled, Failed: failed, Aborted: ev.Aborted, reasons: map[string]string{}, all: allFailures(vds)}
	for _, id := range failed {
		pf.reasons[id] = vds[id].Reason
		pf.Failures = append(pf.Failures, id+": "+driver.OneLine(pf.reasons[id], 300))
	}
	return pf
}

// rerunProgress writes the live line of a case run again alone.
func (r *runner) rerunProgress(ev *Evidence, pf *PooledFailure) {
	if r.cfg.Progress == nil {
		return
	}
	was := "FAIL " + strings.Join(pf.Failed, ", ")
	if pf.Aborted != "" {
		was = "ERROR " + driver.OneLine(pf.Aborted, 90)
	}
	now := r.caseStatus(ev)
	r.progressMu.Lock()
	defer r.progressMu.Unlock()
	// The reasons quote the agent: shown, never acted on by the terminal.
	fmt.Fprintf(r.cfg.Progress, "[alone] %s %6.2fs  pooled: %s; alone in a fresh process: %s\n", ev.Case.ID, ev.Duration.Seconds(),
		termtext.Visible(was), termtext.Visible(now))
}

// pooledFlaky is the verdict of check c on a case run again alone that
// passed there, when it had failed in the pooled process (nil: not so, or
// the pooled session shows another session's list, and ACP-ISOLATION-1
// fails on that: the failure is explained, and the pass alone stands).
func (ev *Evidence) pooledFlaky(c Check, v verdict) *verdict {
	pf := ev.PooledFailure
	if pf == nil || v.Outcome != Pass || !slices.Contains(pf.Failed, c.ID) || ev.crossed() {
		return nil
	}
	reason := ""
	for _, f := range pf.Failures {
		if r, ok := strings.CutPrefix(f, c.ID+": "); ok {
			reason = r
		}
	}
	return &verdict{Outcome: Flaky, Reason: fmt.Sprintf("failed as %s (%s), passed alone in a fresh process: flaky, or one session saw another's", pf.Session, reason)}
}

// pooledEvidence is the case's evidence as a session of a pooled process:
// its own, or, for a case run again alone, that of its pooled run (nil:
// it never ran pooled, or the pooled run's evidence was not kept).
func (ev *Evidence) pooledEvidence() *Evidence {
	if ev.pooled() {
		return ev
	}
	if pf := ev.PooledFailure; pf != nil && pf.Evidence != nil && pf.Evidence.pooled() {
		return judgeable(pf.Evidence, ev.validator)
	}
	return nil
}

// aloneInProcess says why no session of the case shared its agent process
// with another ("" when one did: it was a session of a pooled process
// beside other cases, or the case opened a second session on a process):
// a Shared check is NA on it.
func (ev *Evidence) aloneInProcess() string {
	switch {
	case slices.ContainsFunc(ev.promptSessions(), func(s promptSession) bool { return s.session > 0 }):
		return ""
	case ev.pooledEvidence() == nil:
		return "ran in a process of its own, as its one session"
	case ev.pooledEvidence().pooledAlone():
		return "the first and only session of a fresh pooled process while it ran: no session before or beside it (the process served other cases only after it ended)"
	case len(ev.beside) == 0:
		return "the only session of its pooled process in this run"
	}
	return ""
}

// pooledProcessKey names the pooled process pe (ev's pooled evidence) was
// a session of, within its run: ProcResult.Pooled counts processes from 1 in
// each run, so the shards of one run merged (conform merge) each have a
// process 1, and those are different processes.
//
// Its folders, rather (ProcResult.PoolStore, when the evidence has it): a
// process a case's restart retired and the fresh one started in its
// folders (ProcResult.Loader) share the sessions every case of either
// saved there, and a session of either may be shown another's.
func pooledProcessKey(ev, pe *Evidence) string {
	return ev.Run.Started.Format(time.RFC3339Nano) + "\x00" + ev.Run.Shard + "\x00" + cmp.Or(pe.Procs[0].PoolStore, pe.Procs[0].Pooled)
}

// pooledBeside gives each of a run's cases the others that were sessions
// of the same pooled process (ProcResult.Pooled names it), or of one in
// its folders (pooledProcessKey), in run order.
func pooledBeside(evs []*Evidence) [][]*Evidence {
	by := map[string][]int{}
	for i, ev := range evs {
		if pe := ev.pooledEvidence(); pe != nil {
			by[pooledProcessKey(ev, pe)] = append(by[pooledProcessKey(ev, pe)], i)
		}
	}
	out := make([][]*Evidence, len(evs))
	for _, idx := range by {
		for _, i := range idx {
			for _, j := range idx {
				if j != i {
					out[i] = append(out[i], evs[j])
				}
			}
		}
	}
	return out
}

// crossed reports whether the case's pooled session was shown, or sent
// its model, what only another case of its process wrote
// (ACP-ISOLATION-1 fails on it).
func (ev *Evidence) crossed() bool {
	return len(ev.pooledCrossings()) > 0
}

// beforeItsWrites reports whether plan p, shown in a prompt of the
// session whose writes are mine, shows no write of that session, whatever
// write the matching tied it to: it shows no list the session wrote in an
// earlier prompt, and it came before the session's first write of its
// prompt was made: before the model was asked the turn that makes it (the
// wire's clock and the journal's are the runner's), or, of an agent that
// announces that write (a tool_call of its id), before that tool_call with
// no tool call of the prompt before it. A tool call of another tool
// following the plan says nothing of the writes: Claude Code shows a
// write's plan and announces only its other calls, so the plan of an
// empty list its model wrote came before the lookup call made with it.
func (ev *Evidence) beforeItsWrites(p planObs, mine []Write) bool {
	if p.Segment != "prompt" {
		return false
	}
	first := -1
	for i, w := range mine {
		if w.Prompt < p.Prompt && sameTrimmed(p.todos(), w.Todos) {
			return false
		}
		if w.Prompt == p.Prompt && first < 0 {
			first = i
		}
	}
	if first < 0 {
		return false
	}
	w := mine[first]
	if seen, asked := ev.wireTime(p.Seq), ev.askedAt(w); !seen.IsZero() && !asked.IsZero() && seen.Before(asked) {
		return true
	}
	if p.CallID != "" {
		return false
	}
	for _, m := range ev.Wire {
		switch {
		case m.Seq <= p.Seq || m.Proc != p.Proc:
		case m.Dir == driver.Sent && m.Method == "session/prompt":
			return false // the next prompt: the write was not announced in p's
		case m.Dir == driver.Received && m.UpdateKind() == "tool_call" && toolCallID(m.Line) == w.CallID:
			return true
		}
	}
	return false
}

// wireTime is when the runner read or sent the wire message seq (zero
// when the wire has none).
func (ev *Evidence) wireTime(seq int) time.Time {
	if k := slices.IndexFunc(ev.Wire, func(m driver.WireMsg) bool { return m.Seq == seq }); k >= 0 {
		return ev.Wire[k].Time
	}
	return time.Time{}
}

// askedAt is when the model was first asked the script turn that makes
// write w (zero when the journal has no such request, or ev is nil): w
// was made after that.
func (ev *Evidence) askedAt(w Write) time.Time {
	if ev == nil {
		return time.Time{}
	}
	if j := slices.IndexFunc(ev.Journal, func(e mockmodel.JournalEntry) bool { return e.TurnIndex == w.Turn }); j >= 0 {
		return ev.Journal[j].Time
	}
	return time.Time{}
}

// toolCallID is the toolCallId of a session/update line ("" when none).
func toolCallID(line string) string {
	var n struct {
		Params struct {
			Update struct {
				ToolCallID string `json:"toolCallId"`
			} `json:"update"`
		} `json:"params"`
	}
	_ = json.Unmarshal([]byte(line), &n)
	return n.Params.Update.ToolCallID
}

// theirList finds the write of theirs (of the canonical shape) whose
// list shown is.
func theirList(shown []Todo, theirs []Write) (Write, bool) {
	for _, w := range theirs {
		if w.Shaped && sameTrimmed(shown, w.Todos) {
			return w, true
		}
	}
	return Write{}, false
}

// maxCrossings bounds the crossings a verdict lists.
const maxCrossings = 5

// crossings finds what a session was shown, or sent its model, that only
// another session of its process wrote: of the sessions of a pooled
// process, the other cases beside it (pooledCrossings); of a case that
// opens a second session on a process, the session before it
// (ownCrossings).
func (ev *Evidence) crossings() []verdict {
	return append(ev.pooledCrossings(), ev.ownCrossings()...)
}

// pooledCrossings finds, in what the case's pooled session was shown and
// sent its model, the lists and list items only another case of its
// process wrote: a plan tied to no write of the session (or shown before
// its calls) showing exactly a list the other wrote, a plan entry, a tool
// call's output, an agent message or a model request carrying an item only
// the other wrote. Each is said with both sides: where this session saw
// it, and which case wrote it in which call. An item this case writes too,
// or its prompts mention, is no evidence of anything.
func (ev *Evidence) pooledCrossings() []verdict {
	own := ev.pooledEvidence()
	if own == nil || len(ev.beside) == 0 {
		return nil
	}
	var out []verdict
	m := own.match()
	for _, o := range ev.beside {
		out = append(out, own.carriesMarkerOf(o)...)
		who := fmt.Sprintf("case %s wrote (its %%s), a session of the same pooled process (%s)", o.Case.ID, own.Procs[0].Pooled)
		out = append(out, own.crossedBy(m, nil, own.Writes, o.Writes, o.pooledEvidence().askedAt, who, own == ev)...)
		if len(out) >= maxCrossings {
			break
		}
	}
	return out[:min(len(out), maxCrossings)]
}

// carriesMarkerOf finds the model requests of the session ev (its
// journal, and those the pooled model refused for carrying its marker and
// another's, ModelErrors) that carry the marker case o's first prompt
// carried: its model was sent o's conversation.
func (ev *Evidence) carriesMarkerOf(o *Evidence) []verdict {
	oe := o.pooledEvidence()
	if oe == nil {
		return nil
	}
	mk := oe.promptMarker()
	if mk == "" {
		return nil
	}
	say := func(where string) verdict {
		return failf("%s carries %q, the marker of case %s's first prompt, a session of the same pooled process (%s): its model was sent the other session's conversation",
			where, mk, o.Case.ID, oe.Procs[0].Pooled)
	}
	var out []verdict
	for _, e := range ev.Journal {
		for mi, msg := range e.Messages {
			if slices.ContainsFunc(msg.Content, func(p llm.Part) bool { return strings.Contains(p.Text, mk) }) {
				out = append(out, say(fmt.Sprintf("model request %d, message %d (%s),", e.Index+1, mi+1, msg.Role)))
				break
			}
		}
	}
	// A refused request is this session's when it names its marker too
	// (sessions served at once share the pooled model's refusals).
	own := ev.promptMarker()
	for _, e := range ev.ModelErrors {
		if own != "" && strings.Contains(e, own) && strings.Contains(e, mk) {
			out = append(out, say(fmt.Sprintf("a model request the pooled model refused (%s)", driver.Truncate(e, 200))))
		}
	}
	return out
}

// promptMarker is what the case's first prompt carried beyond the
// case's own text: the pool's scenario marker ("" when nothing).
func (ev *Evidence) promptMarker() string {
	k := slices.IndexFunc(ev.Case.Steps, func(st driver.Step) bool { return st.Op == driver.OpPrompt })
	i := slices.IndexFunc(ev.Steps, func(s driver.StepResult) bool { return s.Index == k })
	if k < 0 || i < 0 || ev.Steps[i].ReqSeq < 0 {
		return ""
	}
	j := slices.IndexFunc(ev.Wire, func(m driver.WireMsg) bool { return m.Seq == ev.Steps[i].ReqSeq })
	if j < 0 {
		return ""
	}
	var req struct {
		Params struct {
			Prompt []struct {
				Text string `json:"text"`
			} `json:"prompt"`
		} `json:"params"`
	}
	if json.Unmarshal([]byte(ev.Wire[j].Line), &req) != nil || len(req.Params.Prompt) == 0 {
		return ""
	}
	sent, own := req.Params.Prompt[0].Text, ev.Case.Steps[k].Text
	if extra, ok := strings.CutPrefix(sent, own); ok && own != "" {
		return strings.TrimSpace(extra)
	}
	return ""
}

// ownCrossings finds, in the plans of each session a case opens on a
// process after another (a second session/new), a list or an item only
// another session of that process wrote.
func (ev *Evidence) ownCrossings() []verdict {
	sess := ev.promptSessions()
	proc := map[int]int{} // session -> the process it was opened on
	for _, s := range sess {
		if s.session >= 0 {
			proc[s.session] = s.proc
		}
	}
	var out []verdict
	for _, s := range slices.Sorted(maps.Keys(proc)) {
		p := proc[s]
		var mine, theirs []Write
		for _, w := range ev.Writes {
			if w.Prompt >= len(sess) {
				continue
			}
			switch ws := sess[w.Prompt]; {
			case ws.session == s:
				mine = append(mine, w)
			case ws.session >= 0 && proc[ws.session] == p:
				theirs = append(theirs, w)
			}
		}
		if len(theirs) == 0 {
			continue
		}
		in := func(prompt int) bool { return prompt < len(sess) && sess[prompt].session == s }
		who := fmt.Sprintf("another session of the same process wrote (%%s); the case opened this one with its session/new %d", s+1)
		out = append(out, ev.crossedBy(ev.match(), in, mine, theirs, ev.askedAt, who, true)...)
	}
	return out[:min(len(out), maxCrossings)]
}

// promptSession is the session a prompt of the case went to: the n-th
// session/new of the case (-1: a loaded one, judged by the load checks)
// and the process it was sent to.
type promptSession struct{ session, proc int }

// promptSessions gives each prompt of the case its session, in prompt
// order.
func (ev *Evidence) promptSessions() []promptSession {
	var out []promptSession
	cur, proc, n := -1, 0, 0
	for _, st := range ev.Case.Steps {
		switch st.Op {
		case driver.OpRestart:
			cur, proc = -1, proc+1
		case driver.OpNewSession:
			cur, n = n, n+1
		case driver.OpLoadSession:
			cur = -1
		case driver.OpPrompt:
			out = append(out, promptSession{cur, proc})
		}
	}
	return out
}

// crossedBy finds in ev what theirs wrote and mine never did: in the plans
// of the prompts in admits (nil: every plan; m is ev.match()) and, for a
// whole session (in nil), in its tool calls' output, agent messages and
// model requests. asked says when the writer's model was asked for a
// write of theirs: a write asked for after this session saw something is
// not what it saw (a session a pooled process served after this one
// ended wrote it). who says whose the writes are, with a %s for the
// write's call; mark marks the wire lines (ev's wire is the one the
// transcript shows).
func (ev *Evidence) crossedBy(m matching, in func(prompt int) bool, mine, theirs []Write, asked func(Write) time.Time, who string, mark bool) []verdict {
	var out []verdict
	// made reports whether w may have been made before seen: its
	// model was asked for it before, or a clock does not tell.
	made := func(w Write, seen time.Time) bool {
		at := asked(w)
		return at.IsZero() || seen.IsZero() || !seen.Before(at)
	}
	madeBefore := func(seen time.Time) []Write {
		return slices.DeleteFunc(slices.Clone(theirs), func(w Write) bool { return !made(w, seen) })
	}
	add := func(seq int, where, seen string, w Write) {
		f := failf("%s %s only %s; no write of this session has it",
			where, seen, fmt.Sprintf(who, fmt.Sprintf("%s, prompt %d: %s", w.CallID, w.Prompt+1, todosString(w.Todos))))
		if mark && seq >= 0 {
			f = f.at(seq, "shows what another session wrote")
		}
		out = append(out, f)
	}
	texts := []string{}
	own := map[string]bool{}
	for _, w := range mine {
		for _, t := range w.Todos {
			own[todolist.Trim(t.Content)] = true
			texts = append(texts, t.Content)
		}
	}
	for _, st := range ev.Case.Steps {
		texts = append(texts, st.Text)
	}
	// What the case's own model says (its text, and its tool calls'
	// arguments, which the agent shows in its tool calls) is no evidence
	// either.
	texts = append(texts, ev.Case.scriptTexts()...)
	onlyTheirs := map[string]Write{}
	for _, w := range theirs {
		for _, t := range w.Todos {
			c := todolist.Trim(t.Content)
			if _, ok := onlyTheirs[c]; !ok && !own[c] && !slices.ContainsFunc(texts, func(m string) bool { return strings.Contains(m, c) }) {
				onlyTheirs[c] = w
			}
		}
	}
	k := 0 // the index among the prompts' plans (m)
	for _, p := range ev.plans() {
		tied := false
		if p.Segment == "prompt" {
			tied, k = m.matched[k], k+1
		}
		if in != nil && (p.Segment != "prompt" || !in(p.Prompt)) {
			continue
		}
		// Theirs when tied to no write of this session's and none of them
		// has that list, or shown before its writes whatever its tie. A
		// plan with an entry whose content is no string (read as "")
		// shows no list of strings: claude-code-acp shows a refused call's
		// content 42, which is no other session's "".
		seen := ev.wireTime(p.Seq)
		_, isMine := theirList(p.todos(), mine)
		if w, ok := theirList(p.todos(), madeBefore(seen)); ok && !p.NotText && (!tied && !isMine || ev.beforeItsWrites(p, mine)) {
			add(p.Seq, fmt.Sprintf("plan update #%d (%s), tied to no write of this session, shows exactly", p.Seq, planString(p)), "the list", w)
			continue
		}
		for _, e := range p.Entries {
			if w, ok := onlyTheirs[todolist.Trim(e.Content)]; ok && made(w, seen) {
				add(p.Seq, fmt.Sprintf("plan update #%d (%s) carries", p.Seq, planString(p)), fmt.Sprintf("%q, an item", e.Content), w)
				break
			}
		}
	}
	if in != nil || len(onlyTheirs) == 0 {
		return out
	}
	// Free text: an item long enough not to occur by chance, in the
	// strings of a message as decoded (its JSON's escapes make substrings
	// no string has: an item `\"&amp;` in the line of a tool call whose
	// input is `"&amp;`).
	items := slices.Sorted(maps.Keys(onlyTheirs))
	long := func(seen time.Time, texts ...string) (string, Write, bool) {
		for _, c := range items {
			if len([]rune(c)) >= 6 && made(onlyTheirs[c], seen) && slices.ContainsFunc(texts, func(text string) bool { return strings.Contains(text, c) }) {
				return c, onlyTheirs[c], true
			}
		}
		return "", Write{}, false
	}
	for _, msg := range ev.Wire {
		if k := msg.UpdateKind(); msg.Dir != driver.Received || (k != "tool_call" && k != "tool_call_update" && k != "agent_message_chunk") {
			continue
		}
		if c, w, ok := long(msg.Time, jsonStrings(msg.Line)...); ok {
			add(msg.Seq, fmt.Sprintf("the %s #%d carries", msg.UpdateKind(), msg.Seq), fmt.Sprintf("%q, an item", driver.Truncate(c, 120)), w)
		}
	}
	for _, e := range ev.Journal {
		for mi, msg := range e.Messages {
			for _, part := range msg.Content {
				if c, w, ok := long(e.Time, append(jsonStrings(part.Arguments), part.Text)...); ok {
					add(-1, fmt.Sprintf("model request %d, message %d (%s), carries", e.Index+1, mi+1, msg.Role), fmt.Sprintf("%q, an item", driver.Truncate(c, 120)), w)
				}
			}
		}
	}
	return out
}

// evalIsolation judges ACP-ISOLATION-1 on a case that had a process
// beside another session: a session of a pooled process (beside the other
// cases of that process), or a case that opens a second session on a
// process. Nothing a session was shown or sent its model carries a list,
// or an item of one, only another session of the process wrote, nor
// (pooled) another session's scenario marker. A case
// run again alone after failing pooled is judged on its pooled session,
// and its failure there is named.
func evalIsolation(ev *Evidence) verdict {
	var fs failures
	suffix := ""
	if pf := ev.PooledFailure; pf != nil {
		suffix = fmt.Sprintf("; as that session it failed %s, and passed alone in a fresh process", strings.Join(pf.Failures, "; "))
		if pf.Aborted != "" {
			suffix = fmt.Sprintf("; as that session it did not complete (%s), and did alone in a fresh process", pf.Aborted)
		}
	}
	for _, c := range ev.pooledCrossings() {
		fs.add(c.suffixed(suffix))
	}
	for _, c := range ev.ownCrossings() {
		fs.add(c)
	}
	return fs.orElse(pass())
}

// seenIsolation: the words of a pass of ACP-ISOLATION-1.
func seenIsolation() seenRule {
	return seenRule{func(ev *Evidence) tally {
		own := cmp.Or(ev.pooledEvidence(), ev)
		return ints(len(own.plans()), len(own.Journal))
	}, func(t tally) string {
		return fmt.Sprintf("%s and %s of sessions that shared a process, none carrying a list or an item only another session of the process wrote",
			nOf(t.n[0], "plan update", "plan updates"), nOf(t.n[1], "model request", "model requests"))
	}}
}

// scriptTexts are the strings of the case's model script: each turn's
// text and reasoning, and the strings of its tool calls' arguments
// (jsonStrings).
func (c *Case) scriptTexts() []string {
	var out []string
	for _, t := range c.Script {
		out = append(out, t.Text, t.Reasoning)
		for _, tc := range t.ToolCalls {
			raw := tc.RawArguments
			if raw == "" {
				b, _ := json.Marshal(tc.Arguments)
				raw = string(b)
			}
			out = append(out, jsonStrings(raw)...)
		}
	}
	return out
}

// jsonStrings are the strings of a JSON text as decoded, every key and
// string value at any depth; the text itself when it is not JSON.
func jsonStrings(raw string) []string {
	var v any
	if json.Unmarshal([]byte(raw), &v) != nil {
		return []string{raw}
	}
	var out []string
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			out = append(out, x)
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				out = append(out, k)
				walk(e)
			}
		}
	}
	walk(v)
	return out
}
