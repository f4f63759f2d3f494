package conformance

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/internal/buildinfo"
)

// JudgeConfig is what a judgement needs besides the evidence.
type JudgeConfig struct {
	// Checks is the catalogue (nil: Catalogue()).
	Checks []Check
	// Only narrows the report to these check IDs (nil: every check); the
	// verdict is then about them alone.
	Only []string
	// Expected lists known failures (see ReadExpectedFailures).
	Expected []ExpectedFailure
	// Validator checks messages against the ACP schema (nil: compile one).
	Validator *driver.SchemaValidator
	// Strict makes a failed SHOULD check fail the run, as a MUST does.
	Strict bool
}

// Judge judges the evidence of a run's cases with a catalogue: every check
// on every case that feeds it, then the baseline. It is a pure function of
// its arguments, in the spirit of testing/fstest.TestFS: it starts nothing
// and reads nothing but the evidence, so a saved run (ReadEvidenceDir) is
// judged again with the current catalogue and baseline. Run is the drive
// (start the agent, run the steps, collect the evidence) followed by Judge.
// The error is set only for a bad configuration.
//
// Evidence of several runs of the same cases (Evidence.Repeat, from
// Config.Repeat) is judged run by run: a check whose outcome differs
// between the runs is Flaky (see judgeRepeats).
func Judge(evs []*Evidence, cfg JudgeConfig) (*Report, error) {
	if len(evs) == 0 {
		return nil, errors.New("conformance: judge: no evidence")
	}
	if runs := splitRuns(evs); len(runs) > 1 {
		return judgeRepeats(runs, cfg)
	}
	return judgeRun(evs, cfg)
}

// splitRuns groups evidence by Evidence.Repeat, in run order.
func splitRuns(evs []*Evidence) [][]*Evidence {
	var order []int
	by := map[int][]*Evidence{}
	for _, ev := range evs {
		r := 0
		if ev != nil {
			r = ev.Repeat
		}
		if _, ok := by[r]; !ok {
			order = append(order, r)
		}
		by[r] = append(by[r], ev)
	}
	sort.Ints(order)
	out := make([][]*Evidence, 0, len(order))
	for _, r := range order {
		out = append(out, by[r])
	}
	return out
}

// judgeRepeats judges each run on its own and merges the reports: a
// check with the same outcome in every run keeps the first run's result;
// one whose outcome differs is Flaky, its reason listing the runs of each
// outcome ("pass in runs 1,3; fail in run 2: <reason>"). Either way Runs
// holds every run's outcome. The verdict is decided again over the merged
// checks: a Flaky MUST check fails the run.
func judgeRepeats(runs [][]*Evidence, cfg JudgeConfig) (*Report, error) {
	reps := make([]*Report, len(runs))
	for i, evs := range runs {
		rep, err := judgeRun(evs, cfg)
		if err != nil {
			return nil, err
		}
		reps[i] = rep
	}
	out := *reps[0]
	out.Repeat = len(reps)
	out.Cases, out.Stale, out.Checks = nil, nil, append([]CheckResult(nil), reps[0].Checks...)
	end := out.Started
	stale := map[string]bool{}
	for k, rep := range reps {
		out.Cases = append(out.Cases, rep.Cases...)
		if e := rep.Started.Add(rep.Duration); e.After(end) {
			end = e
		}
		for _, st := range rep.Stale {
			if !stale[st] {
				stale[st] = true
				out.Stale = append(out.Stale, st)
			}
		}
		if out.Interrupted == "" {
			out.Interrupted = rep.Interrupted
		}
		for i := range out.Checks {
			c := rep.Checks[i]
			out.Checks[i].Runs = append(out.Checks[i].Runs, RunOutcome{Run: runNumber(runs[k], k), Outcome: c.Outcome, Reason: c.Reason})
		}
	}
	out.Duration = end.Sub(out.Started)
	for i := range out.Checks {
		c := &out.Checks[i]
		// A run that withheld the check (judged it elsewhere in the run:
		// ACP-EXIT-1 once the run had seen the agent not exit on its own)
		// differs from none: it judged nothing.
		var judged []RunOutcome
		for k, rep := range reps {
			if !withheldRun(rep.Checks[i]) {
				if len(judged) == 0 && k > 0 {
					runs := c.Runs
					*c = rep.Checks[i]
					c.Runs = runs
				}
				judged = append(judged, c.Runs[k])
			}
		}
		if reason, flaky := flakyReason(judged); flaky {
			c.Outcome, c.Reason = Flaky, reason
		}
	}
	out.decide()
	return &out, nil
}

// withheldRun reports whether a run judged check c nowhere as it judged
// it elsewhere already (CaseVerdict.withheld): not judged in the run, on
// one case at least for that reason, and on none for its case not running
// to its end.
func withheldRun(c CheckResult) bool {
	if c.Outcome != NA && c.Outcome != NotRun {
		return false
	}
	withheld := false
	for _, v := range c.Cases {
		if v.incomplete {
			return false
		}
		withheld = withheld || v.withheld
	}
	return withheld
}

// runNumber is the number of run k (its evidence's Repeat, else k+1).
func runNumber(evs []*Evidence, k int) int {
	if len(evs) > 0 && evs[0] != nil && evs[0].Repeat > 0 {
		return evs[0].Repeat
	}
	return k + 1
}

// flakyReason says, when the runs' outcomes differ, which runs had which
// outcome, with the first reason of each outcome other than pass.
func flakyReason(runs []RunOutcome) (string, bool) {
	var order []Outcome
	by := map[Outcome][]RunOutcome{}
	for _, r := range runs {
		if _, ok := by[r.Outcome]; !ok {
			order = append(order, r.Outcome)
		}
		by[r.Outcome] = append(by[r.Outcome], r)
	}
	if len(order) < 2 {
		return "", false
	}
	var parts []string
	for _, o := range order {
		rs := by[o]
		nums := make([]string, len(rs))
		for i, r := range rs {
			nums[i] = fmt.Sprint(r.Run)
		}
		word := "runs"
		if len(rs) == 1 {
			word = "run"
		}
		part := fmt.Sprintf("%s in %s %s", o, word, strings.Join(nums, ","))
		if o != Pass && rs[0].Reason != "" {
			part += ": " + rs[0].Reason
		}
		parts = append(parts, part)
	}
	return "the outcome differs between runs: " + strings.Join(parts, "; "), true
}

// judgeRun judges the evidence of one run.
func judgeRun(evs []*Evidence, cfg JudgeConfig) (*Report, error) {
	if cfg.Checks == nil {
		cfg.Checks = Catalogue()
	}
	if err := validateExpected(cfg.Expected, cfg.Checks); err != nil {
		return nil, err
	}
	if cfg.Only != nil {
		only, err := onlyChecks(cfg.Checks, cfg.Only)
		if err != nil {
			return nil, err
		}
		cfg.Checks = only
	}
	v := cfg.Validator
	if v == nil {
		var err error
		if v, err = driver.NewSchemaValidator(); err != nil {
			return nil, err
		}
	}
	info := evs[0].Run
	rep := &Report{ToolVersion: buildinfo.Version(), CatalogueVersion: CatalogueVersion,
		Agent: info.Agent, AgentInfo: agentInfo(evs), Dialect: evs[0].Dialect.Name, DialectSource: info.DialectSource, ToolsOffered: info.ToolsOffered,
		Started: info.Started, Parallel: info.Parallel, Timeout: info.Timeout, Strict: cfg.Strict, Pool: cmp.Or(info.Pool, PoolOff)}
	if rep.Pool == PoolOn {
		rep.RerunPooled = cmp.Or(info.RerunPooled, RerunEvery)
	}
	var end time.Time
	procs := map[string]bool{}
	for _, ev := range evs {
		if ev == nil || ev.Case == nil {
			return nil, errors.New("conformance: judge: evidence without its case")
		}
		switch {
		case ev.PooledFailure != nil:
			rep.PoolRanAlone++
		case ev.pooled():
			rep.PooledCases++
			for _, p := range ev.Procs { // a restart's fresh process too
				if p.Pooled != "" {
					procs[ev.Run.Started.Format(time.RFC3339Nano)+"\x00"+ev.Run.Shard+"\x00"+p.Pooled] = true
				}
			}
			if ev.pooledAlone() && pooledFailure(ev, cfg.Checks, v) != nil {
				rep.PoolFirstFailed = append(rep.PoolFirstFailed, ev.Case.ID)
			}
			if ev.NotRunAgain != "" {
				rep.PoolKnown = append(rep.PoolKnown, ev.Case.ID)
			}
		}
		rep.PoolProcesses = len(procs)
		if e := ev.Started.Add(ev.Duration); e.After(end) {
			end = e
		}
		cr := caseResult(ev)
		if ev.NotRun == "" && ev.Interrupted == "" {
			cr.Plans = judgeable(ev, v).match().ties
		}
		rep.Cases = append(rep.Cases, cr)
		if ev.Interrupted != "" && rep.Interrupted == "" {
			rep.Interrupted = ev.Interrupted
		}
	}
	if !end.IsZero() && !info.Started.IsZero() {
		rep.Duration = end.Sub(info.Started)
	}
	for i, beside := range pooledBeside(evs) {
		rep.Cases[i].beside = beside
	}
	var fs FloorSamples
	fs.Add(rep)
	rep.Floor = fs.Floor()
	if rep.Pool != PoolOn && rep.FloorSessions == 0 {
		rep.FloorNote = "pool off: every case had a process of its own"
	}
	rep.Protocol = runProtocol(evs)
	rep.Wires = modelWires(evs)
	rep.Note = allRefusedNote(evs)
	rep.Policy, rep.PolicySource = runPolicy(evs)
	for _, c := range cfg.Checks {
		rep.Checks = append(rep.Checks, rep.judgeCheckOnCases(c, evs[0].Dialect.Name, v))
	}
	rep.applyExpected(cfg.Expected)
	return rep, nil
}

// onlyChecks is the checks of cat named by only, in only's order.
func onlyChecks(cat []Check, only []string) ([]Check, error) {
	idx := catalogueIndex(cat)
	var out []Check
	for _, id := range only {
		c, ok := idx[id]
		if !ok {
			return nil, fmt.Errorf("conformance: judge: unknown check %q%s", id, Suggest(id, CheckIDs(cat), "checks"))
		}
		out = append(out, c)
	}
	return out, nil
}

// judgeCheckOnCases judges check c on every case of rep that feeds it,
// noting its failures on the cases.
func (rep *Report) judgeCheckOnCases(c Check, dialect string, v *driver.SchemaValidator) CheckResult {
	res := CheckResult{Check: c}
	if !c.AppliesTo(dialect) {
		res.Outcome = NA
		res.Reason = fmt.Sprintf("applies to the %s dialect only; the agent speaks %s", strings.Join(c.Dialects, ", "), dialect)
		return res
	}
	for _, cr := range rep.Cases {
		ev := judgeable(cr.ev, v)
		ev.beside = cr.beside
		if !(c.Always || ev.Case.Feeds(c.ID)) {
			continue
		}
		vd := judgeCheck(ev, c)
		res.Cases = append(res.Cases, CaseVerdict{Case: cr.ID, Outcome: vd.Outcome, Reason: vd.Reason, Lines: vd.Lines, Failures: failureList(vd),
			incomplete: vd.Outcome == NotRun && (vd.Blocked || ev.Aborted != "" || ev.NotRun != "" || ev.Interrupted != "" || ev.keyStepMissed() != ""),
			withheld:   vd.withheld})
		if vd.Outcome == Fail {
			res.Cases[len(res.Cases)-1].ConfirmedBy = ev.ConfirmedBy[c.ID]
		}
		if vd.Outcome == Fail {
			cr.Failed = append(cr.Failed, c.ID)
			for _, f := range vd.all() {
				cr.failures = append(cr.failures, c.ID+": "+f)
			}
			for seq, note := range vd.Lines {
				if cr.marks == nil {
					cr.marks = map[int][]string{}
				}
				cr.marks[seq] = append(cr.marks[seq], c.ID+": "+note)
			}
		}
	}
	res.Outcome, res.Reason = aggregate(res.Cases)
	return res
}

// agentInfo is the agentInfo of the first initialize answer that has one
// (nil: none did).
func agentInfo(evs []*Evidence) *AgentInfo {
	for _, ev := range evs {
		for _, p := range ev.Procs {
			var ir struct {
				AgentInfo *AgentInfo `json:"agentInfo"`
				Info      *AgentInfo `json:"info"` // protocol version 2
			}
			if len(p.Init) > 0 && json.Unmarshal(p.Init, &ir) == nil {
				for _, ai := range []*AgentInfo{ir.AgentInfo, ir.Info} {
					if ai != nil && ai.Name != "" {
						return ai
					}
				}
			}
		}
	}
	return nil
}

// judgeable is a copy of ev that the evaluations can read with validator v
// (the evidence itself is left as it was).
func judgeable(ev *Evidence, v *driver.SchemaValidator) *Evidence {
	e := *ev
	e.validator = v
	return &e
}

// NotJudgedPrefix begins the reason of a check failed only as the agent refused a step it needed.
const NotJudgedPrefix = "not judged: "

// judgeCheck evaluates check c on one case's evidence.
func judgeCheck(ev *Evidence, c Check) verdict {
	switch {
	case ev.NotRun != "":
		return skipf("%s", ev.NotRun)
	case ev.Interrupted != "":
		return skipf("%s", ev.Interrupted)
	case ev.Aborted != "" && !c.Always:
		return skipf("case %s did not complete (see RUN-1)", ev.Case.ID)
	}
	if why := ev.aloneInProcess(); c.Shared && why != "" {
		return verdict{Outcome: NA, Reason: why}
	}
	v := c.eval(ev)
	if f := ev.pooledFlaky(c, v); f != nil {
		return *f
	}
	if missed := ev.keyStepMissed(); missed != "" && !c.Always && v.Outcome == Pass {
		// What passed did not see what the case exists for.
		return skipf("not judged: %s", missed)
	}
	if ev.Stopped != "" && !c.Always {
		// The check needed what the agent refused: say so.
		switch v.Outcome {
		case NotRun:
			return failf("%s%s", NotJudgedPrefix, ev.Stopped)
		case Fail:
			v = v.suffixed(stoppedEarly + ev.Stopped)
		}
	}
	return v
}

// notReached says why the run never reached the step the case exists for
// (Case.KeyStep), "" when it did or the case was not run.
func (ev *Evidence) notReached() string {
	if ev.NotRun != "" || ev.Interrupted != "" || ev.Case == nil || len(ev.Case.Steps) == 0 {
		return ""
	}
	k := ev.Case.KeyStep()
	st := ev.Case.Steps[k]
	what := fmt.Sprintf("step %d (%s)", k+1, st.Op)
	if st.Cancel {
		what = fmt.Sprintf("step %d (prompt, cancel)", k+1)
	}
	i := slices.IndexFunc(ev.Steps, func(s driver.StepResult) bool { return s.Index == k })
	switch {
	case i < 0:
		why := cmp.Or(ev.Aborted, ev.Stopped, "the case ended before it")
		return fmt.Sprintf("%s was never reached: %s", what, why)
	case ev.Steps[i].Skipped != "":
		return fmt.Sprintf("%s was never sent: %s", what, ev.Steps[i].Skipped)
	case ev.Steps[i].ReqSeq < 0:
		return fmt.Sprintf("%s was never sent", what)
	case st.Cancel && !ev.cancelSent(ev.Steps[i]):
		return fmt.Sprintf("%s never sent its session/cancel: the turn was answered before the agent showed it took the write (no plan, no final tool_call_update for its call, its result never reached the model)", what)
	}
	return ""
}

// cancelSent says whether the runner sent the step's session/cancel: its
// CancelSeq, or, in evidence written before CancelSeq was recorded (0, the
// field absent), a session/cancel on the wire after the step's prompt
// and before the next step's request.
func (ev *Evidence) cancelSent(st driver.StepResult) bool {
	if st.CancelSeq != 0 {
		return st.CancelSeq > 0
	}
	end := len(ev.Wire)
	for _, next := range ev.Steps {
		if next.ReqSeq > st.ReqSeq && next.ReqSeq < end {
			end = next.ReqSeq // another step's cancel is not this one's
		}
	}
	for _, m := range ev.Wire[:end] {
		if m.Seq > st.ReqSeq && m.Dir == driver.Sent && m.Method == "session/cancel" {
			return true
		}
	}
	return false
}

// keyStepMissed is notReached for a case that otherwise ran to its end
// (an aborted or stopped case, a load skipped, say so already): the
// checks that passed there did not see what the case exists for.
func (ev *Evidence) keyStepMissed() string {
	if ev.Aborted != "" || ev.Stopped != "" || ev.LoadSkipped != "" {
		return ""
	}
	return ev.notReached()
}

// caseFailures judges one case on its own (the progress line): the checks
// it feeds that fail on it. The case as it ran (no other session beside
// it, not run again alone) is judged once for a catalogue and validator:
// the memo keeps the answer.
func caseFailures(ev *Evidence, cat []Check, v *driver.SchemaValidator) []string {
	m := ev.memo
	if m == nil || ev.beside != nil || ev.PooledFailure != nil || len(cat) == 0 {
		return judgeCaseFailures(ev, cat, v)
	}
	key := failuresKey{cat: &cat[0], n: len(cat), v: v, c: ev.Case, dialect: ev.Dialect.Name, aborted: ev.Aborted, wire: len(ev.Wire), steps: len(ev.Steps)}
	if len(ev.Procs) > 0 {
		key.pooled = ev.Procs[0].Pooled
	}
	m.failures.mu.Lock()
	defer m.failures.mu.Unlock()
	if !m.failures.done || m.failures.key != key {
		m.failures.key, m.failures.done, m.failures.ids = key, true, judgeCaseFailures(ev, cat, v)
	}
	return slices.Clone(m.failures.ids)
}

// failuresKey is what caseFailures' answer is from: the catalogue (its
// first check and length), the validator, the case, its dialect, why it
// did not complete, the pooled process it was a session of, the messages
// and steps judged (a copy of the evidence shares its memo).
type failuresKey struct {
	cat                      *Check
	n                        int
	v                        *driver.SchemaValidator
	c                        *Case
	dialect, aborted, pooled string
	wire, steps              int
}

// judgeCaseFailures is caseFailures without its memo.
func judgeCaseFailures(ev *Evidence, cat []Check, v *driver.SchemaValidator) []string {
	ev = judgeable(ev, v)
	var out []string
	for _, c := range cat {
		if (c.Always || ev.Case.Feeds(c.ID)) && c.AppliesTo(ev.Dialect.Name) && judgeCheck(ev, c).Outcome == Fail {
			out = append(out, c.ID)
		}
	}
	return out
}

// caseResult is the report's row of a case, from its evidence.
func caseResult(ev *Evidence) *CaseResult {
	cr := &CaseResult{ID: ev.Case.ID, Title: ev.Case.Title, Run: ev.Repeat, Duration: ev.Duration, Completed: ev.Aborted == "" && ev.Stopped == "" && ev.NotRun == "" && ev.Interrupted == "", ev: ev}
	for _, why := range []string{ev.Aborted, ev.Stopped, ev.NotRun, ev.Interrupted} {
		if why != "" && cr.Error == "" {
			cr.Error = why
		}
	}
	cr.NotReached = ev.notReached()
	cr.Pool = ev.howItRan()
	cr.Waiting = ev.ExitWait + ev.ScriptWait
	for _, st := range ev.Steps {
		cr.Waiting += st.Settle
	}
	cr.Waiting = min(cr.Waiting, cr.Duration)
	cr.Agent = cr.Duration - cr.Waiting
	if len(ev.Procs) > 0 {
		cr.Startup = ev.Procs[0].Startup
		cr.StderrTail = driver.LastLines(ev.Procs[len(ev.Procs)-1].Stderr, 10)
	}
	return cr
}

// aggregate: any failure fails; else any expected failure is xfail; else
// a case that did not run to its end leaves the check not run (it was not
// judged there); else any pass passes; else not run.
func aggregate(vs []CaseVerdict) (Outcome, string) {
	if len(vs) == 0 {
		return NotRun, NoCaseFeeds
	}
	var fails, xfails, flaky, incomplete, na []CaseVerdict
	passes := 0
	for _, v := range vs {
		switch {
		case v.Outcome == NA:
			na = append(na, v)
		case v.Outcome == Fail:
			fails = append(fails, v)
		case v.Outcome == Flaky:
			flaky = append(flaky, v)
		case v.Outcome == XFail:
			xfails = append(xfails, v)
		case v.incomplete:
			incomplete = append(incomplete, v)
		case v.Outcome == Pass:
			passes++
		}
	}
	firstOf := func(o Outcome, vs []CaseVerdict) (Outcome, string) {
		reason := vs[0].Case + ": " + vs[0].Reason + vs[0].More() + vs[0].NotRunAgain()
		if len(vs) > 1 {
			reason += fmt.Sprintf(" (and %d more case(s))", len(vs)-1)
		}
		return o, reason
	}
	switch {
	case len(fails) > 0:
		return firstOf(Fail, fails)
	case len(flaky) > 0:
		return firstOf(Flaky, flaky)
	case len(xfails) > 0:
		return firstOf(XFail, xfails)
	case len(incomplete) > 0:
		return firstOf(NotRun, incomplete)
	case passes > 0:
		return Pass, ""
	case len(na) == len(vs):
		// Applies to none of the cases (ACP-ISOLATION-1 when every case
		// had a process of its own).
		return NA, naReason(na)
	}
	return NotRun, vs[0].Case + ": " + vs[0].Reason
}

// naReason says why a check applies to none of the cases: each reason
// with its cases ("7 cases: ran in a process of its own; plan-basic: …").
func naReason(na []CaseVerdict) string {
	var order []string
	by := map[string][]string{}
	for _, v := range na {
		if _, ok := by[v.Reason]; !ok {
			order = append(order, v.Reason)
		}
		by[v.Reason] = append(by[v.Reason], v.Case)
	}
	parts := make([]string, len(order))
	for i, r := range order {
		who := by[r][0]
		if n := len(by[r]); n > 1 {
			who = fmt.Sprintf("%d cases", n)
		}
		parts[i] = who + ": " + r
	}
	return strings.Join(parts, "; ")
}

// Failure is one failure of a check on a case.
type Failure struct {
	Reason string `json:"reason"`
	// Expected is the reason of the baseline entry that matched it.
	Expected string `json:"expected,omitempty"`
}

// failureList is every failure of v, none expected yet.
func failureList(v verdict) []Failure {
	var out []Failure
	for _, r := range v.all() {
		out = append(out, Failure{Reason: r})
	}
	return out
}

// NotRunAgain says, of a failure seen as a session of a pooled process
// and not run again alone (ConfirmedBy), why ("" for any other): the
// reports show it after the reason.
func (cv CaseVerdict) NotRunAgain() string {
	if cv.ConfirmedBy == "" {
		return ""
	}
	return fmt.Sprintf(" [seen as a session of a pooled process, not run again alone: case %s confirmed the same failure alone in a fresh process]", cv.ConfirmedBy)
}

// More says how many failures of the check the case had besides the one
// its reason shows ("" for one): the JSON report lists them all.
func (cv CaseVerdict) More() string {
	if len(cv.Failures) < 2 {
		return ""
	}
	return fmt.Sprintf(" (+%d more failure(s) of this check in this case: see the JSON report)", len(cv.Failures)-1)
}

// NoCaseFeeds is the reason of a check no selected case feeds.
const NoCaseFeeds = "no selected case feeds this check"

// Verdicts of a run (Report.Verdict).
const (
	// VerdictPass: every MUST check that applies was judged and passed
	// (or failed as the baseline expects), and no baseline entry is stale.
	VerdictPass = "PASS"
	// VerdictFail: a MUST check failed (not as expected) or was flaky
	// (its outcome differed between runs), or a baseline entry is stale.
	VerdictFail = "FAIL"
	// VerdictIncomplete: nothing failed, but a MUST check that applies
	// could not be judged (its case did not complete, or no selected case
	// feeds it).
	VerdictIncomplete = "INCOMPLETE"
	// VerdictInterrupted: the run was stopped before it finished (the
	// context was cancelled, e.g. Ctrl-C); nothing is blamed on the agent.
	VerdictInterrupted = "INTERRUPTED"
)

// judgedIn reports whether check c passed on a case entry e covers: an
// entry that matches no failure there is stale.
func judgedIn(c CheckResult, e ExpectedFailure) bool {
	for _, cv := range c.Cases {
		if cv.Outcome == Pass && e.matchesCase(cv.Case) {
			return true
		}
	}
	return false
}

// applyExpected marks the failures the baseline expects (XFAIL), the stale
// entries (matching no failure), and decides the verdict.
func (r *Report) applyExpected(es []ExpectedFailure) {
	used := make([]bool, len(es))
	r.Failing, r.Stale, r.NotJudged = nil, nil, nil
	for i := range r.Checks {
		c := &r.Checks[i]
		if c.Outcome == NA {
			continue
		}
		for k := range c.Cases {
			cv := &c.Cases[k]
			if cv.Outcome != Fail {
				continue
			}
			// Each failure on its own: the case is XFAIL only when an
			// entry matches every one; its reason is then the first
			// failure, else the first failure no entry matches.
			unexpected := ""
			for f := range cv.Failures {
				fl := &cv.Failures[f]
				for j, e := range es {
					if e.matches(c.ID, cv.Case, fl.Reason) {
						used[j] = true
						fl.Expected = e.Reason
						c.Expected = e.Reason
						break
					}
				}
				if fl.Expected == "" && unexpected == "" {
					unexpected = fl.Reason
				}
			}
			switch {
			case unexpected != "":
				cv.Reason = unexpected
			case len(cv.Failures) > 0:
				cv.Outcome, cv.Expected = XFail, cv.Failures[0].Expected
			}
		}
		if len(c.Cases) > 0 {
			c.Outcome, c.Reason = aggregate(c.Cases)
		}
	}
	idx := map[string]int{}
	for i, c := range r.Checks {
		idx[c.ID] = i
	}
	for j, e := range es {
		i, ok := idx[e.ID]
		if used[j] || !ok || !judgedIn(r.Checks[i], e) {
			// Matched, or about a check or cases this run did not judge
			// (narrowed with Only or --case): not stale.
			continue
		}
		r.Stale = append(r.Stale, e.String())
		r.Checks[i].Stale = true
		if r.Checks[i].Expected == "" {
			r.Checks[i].Expected = e.Reason
		}
	}
	r.decide()
}

// decide lists the failing, flaky and unjudged MUST checks and decides
// the verdict (the stale entries are already listed).
func (r *Report) decide() {
	r.Failing, r.Flaky, r.NotJudged = nil, nil, nil
	for _, c := range r.Checks {
		switch {
		case !r.Required(c.Check):
		case c.Outcome == Fail:
			r.Failing = append(r.Failing, c.ID)
		case c.Outcome == Flaky:
			r.Flaky = append(r.Flaky, c.ID)
		case c.Outcome == NotRun:
			r.NotJudged = append(r.NotJudged, c.ID)
		}
	}
	switch {
	case r.Interrupted != "":
		r.Verdict = VerdictInterrupted
	case len(r.Failing) > 0 || len(r.Flaky) > 0 || len(r.Stale) > 0:
		r.Verdict = VerdictFail
	case len(r.NotJudged) > 0:
		r.Verdict = VerdictIncomplete
	default:
		r.Verdict = VerdictPass
	}
	r.OK = r.Verdict == VerdictPass
}
