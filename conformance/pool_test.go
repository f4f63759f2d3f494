package conformance

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/driver"
)

// A case that failed as a session of a pooled process runs again alone
// when a MUST or SHOULD check failed on it, never for an INFO check alone
// (codex-acp fails ACP-SCHEMA-2 on every case: each would run twice), nor
// when it ran in a process of its own; the failure names the session and
// the checks with their reasons.
func TestPooledFailureIsAMustOrShouldFailure(t *testing.T) {
	t.Parallel()
	v, cat := sharedValidator(t), capturedChecks(t)
	level := map[string]Level{}
	for _, c := range cat {
		level[c.ID] = c.Level
	}
	var sawInfoOnly, sawMust bool
	// The saved runs have no case failing only INFO checks: one failing
	// one check is judged too with that check made INFO.
	infoOf := func(id string) []Check {
		out := slices.Clone(cat)
		for i := range out {
			if out[i].ID == id {
				out[i].Level = INFO
			}
		}
		return out
	}
	for _, name := range savedRunNames(t) {
		for _, saved := range savedRun(t, name) {
			if saved.NotRun != "" || saved.Interrupted != "" {
				continue
			}
			if pooledFailure(saved, cat, v) != nil {
				t.Fatalf("%s: case %s ran in a process of its own, yet is to run again alone", name, saved.Case.ID)
			}
			ev := *saved
			ev.Procs = slices.Clone(ev.Procs)
			if len(ev.Procs) == 0 {
				continue
			}
			ev.Procs[0].Pooled = "a session of pooled agent process 1 (pid 7)"
			failed := caseFailures(&ev, cat, v)
			var mustOrShould []string
			for _, id := range failed {
				if level[id] != INFO {
					mustOrShould = append(mustOrShould, id)
				}
			}
			pf := pooledFailure(&ev, cat, v)
			if len(failed) == 1 && ev.Aborted == "" {
				sawInfoOnly = true
				if got := pooledFailure(&ev, infoOf(failed[0]), v); got != nil {
					t.Errorf("%s: case %s failed only %s, made INFO, yet is to run again alone", name, ev.Case.ID, failed[0])
				}
			}
			switch {
			case len(mustOrShould) == 0 && ev.Aborted == "":
				if pf != nil {
					t.Errorf("%s: case %s failed only %v (INFO), yet is to run again alone", name, ev.Case.ID, failed)
				}
			case pf == nil:
				t.Errorf("%s: case %s failed %v pooled, and is not to run again alone", name, ev.Case.ID, mustOrShould)
			default:
				sawMust = true
				if !slices.Equal(pf.Failed, mustOrShould) || pf.Session != ev.Procs[0].Pooled || len(pf.Failures) != len(pf.Failed) {
					t.Errorf("%s: case %s: %+v, want failed %v", name, ev.Case.ID, pf, mustOrShould)
				}
				for i, f := range pf.Failures {
					if !strings.HasPrefix(f, pf.Failed[i]+": ") {
						t.Errorf("%s: case %s: failure %q does not name %s", name, ev.Case.ID, f, pf.Failed[i])
					}
				}
			}
		}
	}
	if !sawInfoOnly || !sawMust {
		t.Errorf("the saved evidence has a case failing only INFO checks: %v, one failing a MUST or SHOULD check: %v; want both", sawInfoOnly, sawMust)
	}
}

// asSessions makes saved cases sessions of one pooled process: copies,
// their first process the pooled one.
func asSessions(evs ...*Evidence) []*Evidence {
	for _, ev := range evs {
		ev.Procs = slices.Clone(ev.Procs)
		ev.Procs[0].Pooled = "a session of pooled agent process 1 (pid 7)"
	}
	return evs
}

// showTheirPlan appends to a's wire a plan update of a's session showing
// the first list b's plans show, as an agent with one list for the process
// shows a session the list of the one before it.
func showTheirPlan(t *testing.T, a, b *Evidence) {
	t.Helper()
	firstPlan := func(ev *Evidence) string {
		for _, m := range ev.Wire {
			if m.UpdateKind() == "plan" {
				return m.Line
			}
		}
		t.Fatalf("case %s shows no plan", ev.Case.ID)
		return ""
	}
	session := regexp.MustCompile(`"sessionId":"[^"]*"`)
	line := session.ReplaceAllLiteralString(firstPlan(b), session.FindString(firstPlan(a)))
	a.Wire = append(a.Wire, received(len(a.Wire), line))
}

// ACP-ISOLATION-1 judges each session of a pooled process beside the
// others of that process: a plan update showing a list only another
// session wrote fails it, with both sides said (where this session saw
// it, which case wrote it in which call); the same sessions with no such
// plan pass; a case with a process of its own is n/a, and so is a run of
// such cases. A case that failed pooled and passed alone is judged on its
// pooled session: with the crossing there, the check it failed pooled
// passes (its failure is the isolation one, which names it); without,
// that check is flaky.
func TestIsolationJudgesSessionsOfAProcess(t *testing.T) {
	t.Parallel()
	v := sharedValidator(t)
	judge := func(evs ...*Evidence) *Report { t.Helper(); return judgeWith(t, v, evs...) }
	verdictOn := func(rep *Report, id, caseID string) CaseVerdict { t.Helper(); return verdictOf(t, rep, id, caseID) }
	a, b := savedCase(t, "reference", "reject-empty"), savedCase(t, "reference", "plan-basic")

	rep := judge(a, b)
	if c, _ := rep.Check(ACPIsolation1); c.Outcome != NA || c.Reason != "2 cases: ran in a process of its own, as its one session" {
		t.Errorf("a process per case: %s %q, want n/a", c.Outcome, c.Reason)
	}

	rep = judge(asSessions(a, b)...)
	if c, _ := rep.Check(ACPIsolation1); c.Outcome != Pass || len(rep.FailedIDs()) > 0 {
		t.Errorf("two sessions, each shown its own lists: %s %q, failed %v", c.Outcome, c.Reason, rep.FailedIDs())
	}

	crossed := savedCase(t, "reference", "reject-empty")
	showTheirPlan(t, crossed, b)
	rep = judge(asSessions(crossed, b)...)
	want := `plan update #` + fmt.Sprint(len(crossed.Wire)-1) + ` (["read the parser code" in_progress, "write the failing test" pending, "run the full test suite" pending]), tied to no write of this session, shows exactly the list only case plan-basic wrote (its call_1, prompt 1: ["read the parser code" in_progress, "write the failing test" pending, "run the full test suite" pending]), a session of the same pooled process (a session of pooled agent process 1 (pid 7)); no write of this session has it`
	if cv := verdictOn(rep, ACPIsolation1, "reject-empty"); cv.Outcome != Fail || cv.Reason != want || cv.Lines[len(crossed.Wire)-1] == "" {
		t.Errorf("shown the other session's list: %s %q (lines %v), want fail %q", cv.Outcome, cv.Reason, cv.Lines, want)
	}
	if cv := verdictOn(rep, ACPIsolation1, "plan-basic"); cv.Outcome != Pass {
		t.Errorf("the session whose list was shown: %s %q, want pass", cv.Outcome, cv.Reason)
	}

	// Run again alone after failing TW-PLAN-1 pooled.
	rerun := func(pooled *Evidence) *Evidence {
		alone := savedCase(t, "reference", "reject-empty")
		pf := pooledFailure(pooled, capturedChecks(t), v)
		if pf == nil || !slices.Contains(pf.Failed, TWPlan1) {
			t.Fatalf("the pooled session failed %+v, want TW-PLAN-1 among", pf)
		}
		pf.Evidence = pooled
		alone.PooledFailure = pf
		return alone
	}
	rep = judge(rerun(asSessions(crossed, b)[0]), b)
	if cv := verdictOn(rep, TWPlan1, "reject-empty"); cv.Outcome != Pass {
		t.Errorf("TW-PLAN-1, failed pooled on the other session's list, passed alone: %s %q, want pass", cv.Outcome, cv.Reason)
	}
	if cv := verdictOn(rep, ACPIsolation1, "reject-empty"); cv.Outcome != Fail || !strings.HasPrefix(cv.Reason, want+"; as that session it failed ") || !strings.Contains(cv.Reason, fmt.Sprintf("; TW-PLAN-1: a plan update (prompt 1, #%d) shows", len(crossed.Wire)-1)) || !strings.HasSuffix(cv.Reason, ", and passed alone in a fresh process") || len(cv.Lines) > 0 {
		t.Errorf("run again alone: %s %q (lines %v), want the crossing and the pooled failure, no line of the fresh run marked", cv.Outcome, cv.Reason, cv.Lines)
	}
	if got := rep.FailedIDs(); !slices.Equal(got, []string{ACPIsolation1}) || len(rep.Flaky) > 0 {
		t.Errorf("failed %v, flaky %v; want only %s", got, rep.Flaky, ACPIsolation1)
	}

	// The same failure pooled with no crossing to show: flaky.
	other := savedCase(t, "reference", "reject-empty")
	other.Wire = append(other.Wire, received(len(other.Wire), strings.Replace(other.Wire[slices.IndexFunc(other.Wire, func(m driver.WireMsg) bool { return m.UpdateKind() == "plan" })].Line, "read the parser code", "a list no session wrote", 1)))
	rep = judge(rerun(asSessions(other, b)[0]), b)
	if cv := verdictOn(rep, TWPlan1, "reject-empty"); cv.Outcome != Flaky {
		t.Errorf("TW-PLAN-1, failed pooled with no other session's list shown: %s %q, want flaky", cv.Outcome, cv.Reason)
	}
	if cv := verdictOn(rep, ACPIsolation1, "reject-empty"); cv.Outcome != Pass {
		t.Errorf("no crossing: %s %q, want pass", cv.Outcome, cv.Reason)
	}
}

// A session whose model is sent another session's conversation carries
// that session's scenario marker: a request the pooled model refused for
// carrying both markers fails ACP-ISOLATION-1, naming the other case; one
// that names another pair of sessions (served at the same time) does not.
func TestIsolationSeesAnotherSessionsMarker(t *testing.T) {
	t.Parallel()
	v := sharedValidator(t)
	withMarker := func(ev *Evidence, mk string) *Evidence {
		ev.Wire = slices.Clone(ev.Wire)
		k := slices.IndexFunc(ev.Wire, func(m driver.WireMsg) bool { return m.Dir == driver.Sent && m.Method == "session/prompt" })
		text := ev.Case.Steps[slices.IndexFunc(ev.Case.Steps, func(st driver.Step) bool { return st.Op == driver.OpPrompt })].Text
		b, _ := json.Marshal(text)
		mb, _ := json.Marshal(text + "\n\n" + mk)
		if !strings.Contains(ev.Wire[k].Line, string(b)) {
			t.Fatalf("case %s: its first prompt does not carry its text %s", ev.Case.ID, b)
		}
		ev.Wire[k].Line = strings.Replace(ev.Wire[k].Line, string(b), string(mb), 1)
		return ev
	}
	for _, tc := range []struct {
		refused string
		want    Outcome
	}{
		{"pooled model request 3: pooled mock model: request 3 on /v1/chat/completions carries the markers of 2 scenarios ([todoharness scenario 1], [todoharness scenario 2]) in its user messages", Fail},
		{"pooled model request 3: pooled mock model: request 3 on /v1/chat/completions carries the markers of 2 scenarios ([todoharness scenario 2], [todoharness scenario 3]) in its user messages", Pass},
	} {
		a := withMarker(savedCase(t, "reference", "reject-empty"), "[todoharness scenario 1]")
		b := withMarker(savedCase(t, "reference", "plan-basic"), "[todoharness scenario 2]")
		a.ModelErrors = append(slices.Clone(a.ModelErrors), tc.refused)
		rep, err := Judge(asSessions(a, b), JudgeConfig{Checks: capturedChecks(t), Validator: v})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := rep.Check(ACPIsolation1)
		want := `reject-empty: a model request the pooled model refused (` + tc.refused + `) carries "[todoharness scenario 2]", the marker of case plan-basic's first prompt`
		if c.Outcome != tc.want || tc.want == Fail && !strings.HasPrefix(c.Reason, want) {
			t.Errorf("refused %q: %s %q, want %s", tc.refused, c.Outcome, c.Reason, tc.want)
		}
	}
}

// A case that restarts its agent runs pooled in two processes: its first
// part in a pooled process its restart retired, its load in a fresh one
// started in that one's folders (which then serves later cases). Every
// session of either is judged beside the others that saved their sessions
// in those folders (ACP-ISOLATION-1): a load that restores another
// session's list is a crossing, and so is a later session of the fresh
// process shown a list of a session of the retired one. How the retired
// process ended is judged as a restart's (ACP-EXIT-1); the fresh one,
// which did not end with the case, is not.
func TestPooledRestartJudged(t *testing.T) {
	t.Parallel()
	v := sharedValidator(t)
	const p1, p2, store = "a session of pooled agent process 1 (pid 7, conform-pool-1-x)", "a session of pooled agent process 2 (pid 8, conform-pool-1-x)", "conform-pool-1-x"
	restarted := func(shutdown string) *Evidence {
		ev := savedCase(t, "reference", "load-replay")
		if len(ev.Procs) != 2 {
			t.Fatalf("load-replay has %d processes, want 2", len(ev.Procs))
		}
		ev.Procs[0].Pooled, ev.Procs[0].PoolStore, ev.Procs[0].Retired, ev.Procs[0].Shutdown = p1, store, "retired at the case's restart", shutdown
		ev.Procs[1].Pooled, ev.Procs[1].PoolStore, ev.Procs[1].Loader = p2, store, "a fresh process started at the case's restart"
		return ev
	}
	in := func(ev *Evidence, pooled string) *Evidence {
		ev.Procs[0].Pooled, ev.Procs[0].PoolStore = pooled, store
		return ev
	}
	judge := func(evs ...*Evidence) *Report { t.Helper(); return judgeWith(t, v, evs...) }
	verdictOn := func(rep *Report, id, caseID string) CaseVerdict { t.Helper(); return verdictOf(t, rep, id, caseID) }

	// The session before the restart case wrote a list no other case
	// writes (the saved cases share theirs).
	before := in(savedCase(t, "reference", "plan-basic"), p1)
	before.Case = &Case{ID: "before", Steps: before.Case.Steps, Script: before.Case.Script, Checks: before.Case.Checks}
	before.Writes = slices.Clone(before.Writes) // the saved run's are shared
	for i, w := range before.Writes {
		before.Writes[i].Todos = slices.Clone(w.Todos)
		for j := range w.Todos {
			before.Writes[i].Todos[j].Content = "before: " + w.Todos[j].Content
		}
	}
	for i, m := range before.Wire {
		if m.UpdateKind() == "plan" {
			before.Wire[i] = received(m.Seq, strings.ReplaceAll(m.Line, `"content":"`, `"content":"before: `))
		}
	}
	later := in(savedCase(t, "reference", "reject-empty"), p2)
	rep := judge(before, restarted("exited after stdin closed"), later)
	if got := rep.FailedIDs(); len(got) > 0 || rep.PoolProcesses != 2 || rep.PooledCases != 3 {
		t.Errorf("the sessions of a retired process and of the one in its folders, each shown its own lists: failed %v, %d processes, %d pooled cases; want none, 2, 3", got, rep.PoolProcesses, rep.PooledCases)
	}
	if cv := verdictOn(rep, ACPExit1, "load-replay"); cv.Outcome != Pass {
		t.Errorf("ACP-EXIT-1 on the retired process, exited after stdin closed: %s %q, want pass", cv.Outcome, cv.Reason)
	}
	if cv := verdictOn(rep, ACPExit1, "before"); cv.Outcome != NotRun {
		t.Errorf("ACP-EXIT-1 on a session of a pooled process that did not end with it: %s %q, want not run", cv.Outcome, cv.Reason)
	}

	rep = judge(before, restarted("did not exit within 3s of stdin closing: SIGTERM"), later)
	if cv := verdictOn(rep, ACPExit1, "load-replay"); cv.Outcome != Fail || cv.Reason != "agent process 1 did not exit within 3s of stdin closing: SIGTERM" {
		t.Errorf("ACP-EXIT-1 on the retired process, signalled: %s %q, want fail naming agent process 1", cv.Outcome, cv.Reason)
	}

	loaded := restarted("exited after stdin closed")
	showTheirPlan(t, loaded, before)
	loaded.Wire[len(loaded.Wire)-1].Proc = 1 // replayed by the loading process
	rep = judge(before, loaded, later)
	if cv := verdictOn(rep, ACPIsolation1, "load-replay"); cv.Outcome != Fail || !strings.Contains(cv.Reason, "only case before wrote") {
		t.Errorf("a load that shows another session's list: %s %q, want the crossing with the case before", cv.Outcome, cv.Reason)
	}

	shown := in(savedCase(t, "reference", "reject-empty"), p2)
	showTheirPlan(t, shown, before)
	rep = judge(before, restarted("exited after stdin closed"), shown)
	if cv := verdictOn(rep, ACPIsolation1, "reject-empty"); cv.Outcome != Fail || !strings.Contains(cv.Reason, "only case before wrote") {
		t.Errorf("a session of the fresh process shown a list of the retired one's: %s %q, want the crossing with the case before", cv.Outcome, cv.Reason)
	}
}

// judgeWith judges evs with the captured catalogue and v.
func judgeWith(t *testing.T, v *driver.SchemaValidator, evs ...*Evidence) *Report {
	t.Helper()
	rep, err := Judge(evs, JudgeConfig{Checks: capturedChecks(t), Validator: v})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// verdictOf is check id's verdict on case caseID in rep.
func verdictOf(t *testing.T, rep *Report, id, caseID string) CaseVerdict {
	t.Helper()
	c, _ := rep.Check(id)
	for _, cv := range c.Cases {
		if cv.Case == caseID {
			return cv
		}
	}
	t.Fatalf("%s: no verdict on case %s", id, caseID)
	return CaseVerdict{}
}
