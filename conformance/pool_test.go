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
	judge := func(evs ...*Evidence) *Report {
		t.Helper()
		rep, err := Judge(evs, JudgeConfig{Checks: capturedChecks(t), Validator: v})
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	verdictOn := func(rep *Report, id, caseID string) CaseVerdict {
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
