package explore_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/explore"
	"github.com/todoharness/todoharness/conformance/report"
	"github.com/todoharness/todoharness/driver"
	conformancefixtures "github.com/todoharness/todoharness/fixtures/conformance"
	"github.com/todoharness/todoharness/internal/testutil"
)

// failing is what a report fails: each failed check with the cases it
// failed on.
func failing(rep *conformance.Report) map[string][]string {
	out := map[string][]string{}
	for _, c := range rep.Checks {
		if c.Outcome != conformance.Fail {
			continue
		}
		for _, cv := range c.Cases {
			if cv.Outcome == conformance.Fail {
				out[c.ID] = append(out[c.ID], cv.Case)
			}
		}
	}
	return out
}

// The catalogue run with pooled processes (two at once, so each serves
// several cases) fails exactly what it fails with a process per case, on
// the reference agent and on breakages of it; the report says which mode
// ran; the poolable cases ran as sessions, the others in processes of
// their own; a case that failed pooled ran again alone, and its failure
// is reported from that run. A crash in a pooled process costs the cases
// it served a fresh run, not a verdict, but for the one it was started
// for, its first and only session: that one ran alone in a fresh process.
func TestPooledRunFailsWhatAProcessPerCaseFails(t *testing.T) {
	faults := []string{"", "wrong-counts", "crash-on-prompt", "no-plan"}
	if testing.Short() || testutil.RaceEnabled {
		faults = []string{"", "crash-on-prompt"}
	}
	run := catalogueRun(t)
	for _, fault := range faults {
		alone, pooled := run(fault, false), run(fault, true)
		if alone.Pool != conformance.PoolOff || pooled.Pool != conformance.PoolOn {
			t.Errorf("fault %q: the reports say pool %q and %q, want off and on", fault, alone.Pool, pooled.Pool)
		}
		// Sessions that share a process are judged pooled only: each
		// of the reference agent's keeps its own list.
		if c, _ := alone.Check(conformance.ACPIsolation1); c.Outcome != conformance.NA {
			t.Errorf("fault %q: a process per case: %s %s %q, want n/a", fault, c.ID, c.Outcome, c.Reason)
		}
		if c, _ := pooled.Check(conformance.ACPIsolation1); fault == "" && c.Outcome != conformance.Pass {
			t.Errorf("reference agent pooled: %s %s %q, want a pass", c.ID, c.Outcome, c.Reason)
		}
		if a, p := failing(alone), failing(pooled); !mapsEqual(a, p) {
			t.Errorf("fault %q: a process per case fails %v, pooled %v", fault, a, p)
		}
		sessions, procs := 0, map[string]bool{}
		for _, c := range pooled.Cases {
			ev := c.Evidence()
			poolable := c.Evidence().Case.Poolable()
			isPooled := len(ev.Procs) > 0 && ev.Procs[0].Pooled != ""
			switch {
			case isPooled && !poolable:
				t.Errorf("fault %q: case %s, which needs a process of its own, ran pooled", fault, c.ID)
			case isPooled:
				sessions++
				procs[ev.Procs[0].Pooled] = true
			case poolable && ev.PooledFailure == nil && pooled.PoolRanAlone+len(pooled.PoolFirstFailed) < 3:
				// (Once three pooled cases failed there, and fewer passed,
				// the cases still to start run in processes of their own:
				// those run again alone, and those that were the first and
				// only session of a fresh pooled process.)
				t.Errorf("fault %q: case %s ran in a process of its own without having failed pooled", fault, c.ID)
			}
			if pf := ev.PooledFailure; pf != nil && (isPooled || pf.Session == "") {
				t.Errorf("fault %q: case %s: run again alone, yet its evidence is a pooled session's (%+v)", fault, c.ID, pf)
			}
		}
		if fault == "" && (sessions == 0 || len(procs) >= sessions) {
			t.Errorf("reference agent: %d cases ran as sessions of %d processes: want several sessions a process", sessions, len(procs))
		}
		for _, c := range pooled.Checks {
			if c.Outcome == conformance.Flaky {
				t.Errorf("fault %q: %s is flaky pooled: %s", fault, c.ID, c.Reason)
			}
		}
		if fault == "" && sessions != len(pooled.Cases)-countNotPoolable(pooled) {
			t.Errorf("reference agent: %d of %d poolable cases stayed sessions (the others failed pooled)", sessions, len(pooled.Cases)-countNotPoolable(pooled))
		}
	}
}

// catalogueRun returns a run of the built-in catalogue against the
// reference agent with a fault ("" for none), pooled or not, two cases at
// once (so that each pooled process serves several), each pooled process
// serving one case at a time; mod, when given, changes the run.
func catalogueRun(t *testing.T, mod ...func(*conformance.Config)) func(fault string, pool bool) *conformance.Report {
	v := validator(t)
	cases, err := conformance.LoadCases(conformancefixtures.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	return func(fault string, pool bool) *conformance.Report {
		cfg := runConfig(t, reference(fault), v)
		cfg.Cases, cfg.Parallel, cfg.Pool = cases, 2, pool
		for _, f := range mod {
			f(&cfg)
		}
		rep, err := conformance.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
}

// sessionsAtOnce counts the pairs of cases that were sessions of one
// pooled process at the same time: their ACP traffic (first to last
// message) overlaps.
func sessionsAtOnce(rep *conformance.Report) int {
	type span struct {
		proc       string
		start, end time.Time
	}
	var spans []span
	for _, c := range rep.Cases {
		ev := c.Evidence()
		if len(ev.Procs) == 0 || ev.Procs[0].Pooled == "" || len(ev.Wire) == 0 {
			continue
		}
		spans = append(spans, span{ev.Procs[0].Pooled, ev.Wire[0].Time, ev.Wire[len(ev.Wire)-1].Time})
	}
	n := 0
	for i, a := range spans {
		for _, b := range spans[i+1:] {
			if a.proc == b.proc && a.start.Before(b.end) && b.start.Before(a.end) {
				n++
			}
		}
	}
	return n
}

// An agent that answers concurrent prompts (Target.PoolSessions, the
// reference agent's) has several sessions at once in one pooled process,
// and fails what a process per case fails: nothing on the reference agent,
// the same checks on the same cases on a breakage, none flaky; with one
// session at a time a process (the default), no two ever overlap.
func TestPooledProcessServesSessionsAtOnce(t *testing.T) {
	four := catalogueRun(t, func(c *conformance.Config) { c.Agent.PoolSessions, c.Parallel = 4, 4 })
	for _, fault := range []string{"", "wrong-counts"} {
		alone, pooled := four(fault, false), four(fault, true)
		if a, p := failing(alone), failing(pooled); !mapsEqual(a, p) {
			t.Errorf("fault %q: a process per case fails %v, four sessions a process %v", fault, a, p)
		}
		for _, c := range pooled.Checks {
			if c.Outcome == conformance.Flaky {
				t.Errorf("fault %q: %s is flaky: %s", fault, c.ID, c.Reason)
			}
		}
		procs := map[string]bool{}
		for _, c := range pooled.Cases {
			if ev := c.Evidence(); len(ev.Procs) > 0 && ev.Procs[0].Pooled != "" {
				procs[ev.Procs[0].Pooled] = true
			}
			if fault == "" && c.Evidence().PooledFailure != nil {
				t.Errorf("reference agent: case %s failed as a session of a pooled process (%+v)", c.ID, c.Evidence().PooledFailure)
			}
		}
		if n := sessionsAtOnce(pooled); n == 0 {
			t.Errorf("fault %q: no two cases were sessions of one process at once (%d processes)", fault, len(procs))
		}
		if ids := aloneButOverlapped(pooled); len(ids) > 0 {
			t.Errorf("fault %q: %v are said to be the first and only session of a fresh pooled process, yet another session of it overlapped them", fault, ids)
		}
	}
	if n := sessionsAtOnce(catalogueRun(t)("", true)); n != 0 {
		t.Errorf("one session at a time a process: %d pairs of cases overlapped in one process", n)
	}
}

// aloneButOverlapped lists the cases said to be the first and only
// session of a fresh pooled process (ProcResult.PooledAlone) whose ACP
// traffic overlapped that of another session of the process (a case run
// again alone counts with its pooled session).
func aloneButOverlapped(rep *conformance.Report) []string {
	type span struct {
		id, proc   string
		alone      bool
		start, end time.Time
	}
	var spans []span
	for _, c := range rep.Cases {
		ev := c.Evidence()
		if pf := ev.PooledFailure; pf != nil && pf.Evidence != nil {
			ev = pf.Evidence
		}
		if len(ev.Procs) == 0 || ev.Procs[0].Pooled == "" || len(ev.Wire) == 0 {
			continue
		}
		spans = append(spans, span{c.ID, ev.Procs[0].Pooled, ev.Procs[0].PooledAlone, ev.Wire[0].Time, ev.Wire[len(ev.Wire)-1].Time})
	}
	var out []string
	for _, a := range spans {
		for _, b := range spans {
			if a.alone && a.id != b.id && a.proc == b.proc && a.start.Before(b.end) && b.start.Before(a.end) {
				out = append(out, a.id)
				break
			}
		}
	}
	return out
}

func countNotPoolable(rep *conformance.Report) int {
	n := 0
	for _, c := range rep.Cases {
		if !c.Evidence().Case.Poolable() {
			n++
		}
	}
	return n
}

func mapsEqual(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w := slices.Clone(b[k])
		v = slices.Clone(v)
		slices.Sort(v)
		slices.Sort(w)
		if !slices.Equal(v, w) {
			return false
		}
	}
	return true
}

// The exploration's report says which mode its scenarios ran in (the
// pooled processes are the default of conform; Config.Run.Pool here), in
// explore.json and in its summary.
func TestTheExplorationSaysWhichPoolModeRan(t *testing.T) {
	v := validator(t)
	for _, pool := range []bool{true, false} {
		want := map[bool]string{true: conformance.PoolOn, false: conformance.PoolOff}[pool]
		cfg := runConfig(t, reference(""), v)
		cfg.Pool, cfg.Parallel = pool, 2
		res, err := explore.Explore(context.Background(), explore.Config{Run: cfg, Seed: 3, N: 4})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := res.WriteSummary(&b); err != nil {
			t.Fatal(err)
		}
		if res.Pool != want || !strings.Contains(b.String(), "(policy single, pool "+want) {
			t.Errorf("pool %v: the report says pool %q, want %q; summary:\n%s", pool, res.Pool, want, b.String())
		}
	}
}

// With the dialect forced there is no probe: the catalogue's first case,
// when poolable, is a session of a pooled process as the others are (the
// pooled process's initialize answer, replayed, lets them start), not a
// process of its own; the run fails what it fails with a process a case.
func TestTheFirstCaseIsPooledWithAForcedDialect(t *testing.T) {
	forced := func(c *conformance.Config) { c.Dialect = driver.DialectTodoWrite }
	run := catalogueRun(t, forced)
	alone, pooled := run("", false), run("", true)
	first := pooled.Cases[0].Evidence()
	if !first.Case.Poolable() {
		t.Fatalf("the catalogue's first case %s needs a process of its own: the spec tests nothing", first.Case.ID)
	}
	if len(first.Procs) == 0 || first.Procs[0].Pooled == "" {
		t.Errorf("the first case %s, poolable, with the dialect forced, ran in a process of its own, not pooled", first.Case.ID)
	}
	if pooled.DialectSource != "forced" {
		t.Errorf("dialect source %q, want forced", pooled.DialectSource)
	}
	if a, p := failing(alone), failing(pooled); !mapsEqual(a, p) || alone.Verdict != pooled.Verdict {
		t.Errorf("a process per case: %s, fails %v; pooled: %s, fails %v", alone.Verdict, a, pooled.Verdict, p)
	}
}

// newSessionID is the sessionId the case's first session/new was
// answered with ("" when none).
func newSessionID(ev *conformance.Evidence) string {
	for _, s := range ev.Steps {
		if s.Op == driver.OpNewSession {
			var r struct {
				SessionID string `json:"sessionId"`
			}
			_ = json.Unmarshal(s.Result, &r)
			return r.SessionID
		}
	}
	return ""
}

// A pooled process's stderr goes into the evidence of the cases it
// served, attributed by time: each pooled case's stderr says whose it is
// and that it is shared, holds the process's start-up lines and the lines
// it wrote while the case held it (the reference agent logs each session
// it creates), and none of another case's. A case that failed pooled and
// ran again alone keeps what the pooled process wrote (its crash), and
// the HTML report shows it beside the fresh run's.
func TestPooledStderrGoesToTheCasesItServed(t *testing.T) {
	run := catalogueRun(t)
	rep := run("", true)
	ids := map[string]string{}
	for _, c := range rep.Cases {
		ids[c.ID] = newSessionID(c.Evidence())
	}
	pooled := 0
	for _, c := range rep.Cases {
		ev := c.Evidence()
		if len(ev.Procs) == 0 || ev.Procs[0].Pooled == "" {
			continue
		}
		pooled++
		stderr := ev.Procs[0].Stderr
		if !strings.HasPrefix(stderr, "[todoharness] "+ev.Procs[0].Pooled+", shared:") || !strings.Contains(stderr, "todoharness agent ready") {
			t.Errorf("%s: its stderr does not start with the note naming the shared process and its start-up:\n%s", c.ID, stderr)
		}
		for other, id := range ids {
			if id == "" {
				continue
			}
			if mine := other == c.ID; strings.Contains(stderr, "session="+id) != mine {
				t.Errorf("%s: its stderr has the log of session %s (case %s): %v, want %v\n%s", c.ID, id, other, !mine, mine, stderr)
			}
		}
	}
	if pooled == 0 {
		t.Fatal("no case ran pooled")
	}
	// (Each case's process crashes on crash-on-prompt: every pooled case
	// is the first and only session of a fresh pooled process, never run
	// again alone. A session after another fails on shared-todo-list.)
	rep = run("shared-todo-list", true)
	alone := 0
	for _, c := range rep.Cases {
		ev := c.Evidence()
		pf := ev.PooledFailure
		if pf == nil {
			continue
		}
		alone++
		if stderr := pf.PooledStderr(); !strings.Contains(stderr, "fault shared-todo-list: a new session starts with the process's list") || !strings.HasPrefix(stderr, "[todoharness] "+pf.Session+", shared:") {
			t.Errorf("%s: the pooled failure keeps no stderr of its session:\n%s", c.ID, stderr)
		}
		// Once: in the pooled session's evidence, not beside it again.
		b, err := conformance.MarshalEvidence(ev)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(b), "[todoharness] "+pf.Session+", shared:"); n != 1 {
			t.Errorf("%s: its evidence keeps the pooled session's stderr %d times, want once", c.ID, n)
		}
	}
	if alone == 0 {
		t.Fatal("no case failed pooled and ran again alone")
	}
	var page strings.Builder
	if err := report.WriteHTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(page.String(), "stderr, before the fresh run, as a session of pooled agent process") {
		t.Error("the HTML report does not show the pooled run's stderr of a case that ran again alone")
	}
}

// twoSessions is a case that opens a second session on its process after
// the first wrote a list: ACP-ISOLATION-1 judges it with no pool.
const twoSessions = `title: two sessions of one process, each writing its own list
checks: [TW-PLAN-1]
steps:
  - op: initialize
  - op: newSession
  - op: prompt
    text: Record the plan.
  - op: newSession
  - op: prompt
    text: Record another plan.
script:
  - toolCalls:
      - name: todo_write
        arguments:
          todos: [{content: read the parser code, status: in_progress}]
  - text: DONE
  - toolCalls:
      - name: todo_write
        arguments:
          todos: [{content: pack the release notes, status: in_progress}]
  - text: DONE
`

// A case that opens two sessions on one process is judged by
// ACP-ISOLATION-1 with a process of its own: the reference agent keeps
// each session's list its own; with one list for the process
// (shared-todo-list), the second session is shown the first's list, and
// the check names the session that wrote it.
func TestIsolationJudgesTheSessionsOfACase(t *testing.T) {
	c, err := conformance.LoadCase([]byte(twoSessions), "two-sessions/case.yaml", "two-sessions")
	if err != nil {
		t.Fatal(err)
	}
	v := validator(t)
	for _, fault := range []string{"", "shared-todo-list"} {
		cfg := runConfig(t, reference(fault), v)
		cfg.Cases = []*conformance.Case{c}
		rep, err := conformance.Run(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := rep.Check(conformance.ACPIsolation1)
		switch {
		case fault == "" && (got.Outcome != conformance.Pass || len(rep.FailedIDs()) > 0):
			t.Errorf("reference agent: %s %q, failed %v", got.Outcome, got.Reason, rep.FailedIDs())
		case fault != "" && (got.Outcome != conformance.Fail || !strings.Contains(got.Reason, `plan update #`) ||
			!strings.Contains(got.Reason, `(["read the parser code" in_progress]), tied to no write of this session, shows exactly the list only another session of the same process wrote (call_1, prompt 1: ["read the parser code" in_progress]); the case opened this one with its session/new 2; no write of this session has it`)):
			t.Errorf("%s: %s %q, want the second session shown the first's list", fault, got.Outcome, got.Reason)
		}
	}
}

// Against an agent that fails most cases pooling costs more than it saves
// when each pooled failure runs again alone (--rerun-pooled every; with
// known, the default, the failures no-plan repeats are confirmed once and
// cost no re-run: conformance's TestKnownPooledFailuresOfTheCatalogueAreNotRunAgain):
// once three pooled cases failed there and fewer passed, the cases still
// to start run in processes of their own, the progress says so once, and
// the run fails what a process per case fails. The first session of each
// fresh pooled process is not run again (firstSessionsRanOnce).
func TestThePoolStopsWhenMostPooledCasesFail(t *testing.T) {
	var prog strings.Builder
	run := catalogueRun(t, func(c *conformance.Config) { c.Progress, c.RerunPooled = &prog, conformance.RerunEvery })
	alone, pooled := run("no-plan", false), run("no-plan", true)
	if a, p := failing(alone), failing(pooled); !mapsEqual(a, p) {
		t.Errorf("a process per case fails %v, pooled %v", a, p)
	}
	// At most the three, and the cases already running beside them (two
	// slots, twice as many cases open at once): those that ran again
	// alone, and those that failed as the first and only session of a
	// fresh pooled process (no re-run, but a failure all the same).
	if n := pooled.PoolRanAlone + len(pooled.PoolFirstFailed); n < 3 || n > 3+4 {
		t.Errorf("%d pooled cases failed there (%d ran again alone), want 3 to 7 (of %d poolable)", n, pooled.PoolRanAlone, len(pooled.Cases)-countNotPoolable(pooled))
	}
	if n := strings.Count(prog.String(), "pooled cases failed there (each runs again alone in a fresh process): the cases still to start run in processes of their own"); n != 1 {
		t.Errorf("the progress says the pool stopped %d times, want once:\n%s", n, prog.String())
	}
	firstSessionsRanOnce(t, pooled, prog.String())
}

// firstSessionsRanOnce checks the cases of a pooled run that failed as the
// first and only session of a fresh pooled process (one session a
// process, as every agent but the reference has): they ran alone in a
// fresh process already, and are reported from that session with no
// re-run; the report says so (the pool line, the case's Pool, the
// progress prog); ACP-ISOLATION-1 is n/a on them (no session before or
// beside them). Some must have.
func firstSessionsRanOnce(t *testing.T, pooled *conformance.Report, prog string) {
	t.Helper()
	iso, _ := pooled.Check(conformance.ACPIsolation1)
	var firstFailed []string
	for _, c := range pooled.Cases {
		ev := c.Evidence()
		if pf := ev.PooledFailure; pf != nil && pf.Evidence != nil && pf.Evidence.Procs[0].PooledAlone {
			t.Errorf("%s: the first and only session of a fresh pooled process ran again alone", c.ID)
		}
		switch {
		case ev.PooledFailure != nil:
			if want := "failed as " + ev.PooledFailure.Session + ", then ran again alone in a fresh process: reported from that run"; c.Pool != want {
				t.Errorf("%s: its pool says %q, want %q", c.ID, c.Pool, want)
			}
			continue
		case len(ev.Procs) == 0 || ev.Procs[0].Pooled == "":
			if c.Pool != "" {
				t.Errorf("%s: a process of its own, yet its pool says %q", c.ID, c.Pool)
			}
			continue
		case !ev.Procs[0].PooledAlone:
			if want := ev.Procs[0].Pooled + ", shared with other cases"; c.Pool != want {
				t.Errorf("%s: its pool says %q, want %q", c.ID, c.Pool, want)
			}
			continue
		}
		if !strings.HasPrefix(ev.Procs[0].Stderr, "[todoharness] "+ev.Procs[0].Pooled+", shared: it was started for this case, its first,") {
			t.Errorf("%s: its stderr does not say the process was started for it:\n%s", c.ID, driver.Truncate(ev.Procs[0].Stderr, 300))
		}
		if !strings.HasPrefix(c.Pool, ev.Procs[0].Pooled+", the first and only session of this fresh pooled process while it ran") {
			t.Errorf("%s: its pool says %q", c.ID, c.Pool)
		}
		for _, cv := range iso.Cases {
			if cv.Case == c.ID && (cv.Outcome != conformance.NA || !strings.HasPrefix(cv.Reason, "the first and only session of a fresh pooled process while it ran")) {
				t.Errorf("%s: %s %s %q, want n/a: no session before or beside it", c.ID, iso.ID, cv.Outcome, cv.Reason)
			}
		}
		if len(c.Failed) > 0 {
			firstFailed = append(firstFailed, c.ID)
		}
	}
	if len(firstFailed) == 0 {
		t.Fatalf("no case failed as the first and only session of a fresh pooled process (%d pooled processes)", pooled.PoolProcesses)
	}
	if !slices.Equal(pooled.PoolFirstFailed, firstFailed) {
		t.Errorf("the report's poolFirstFailed %v, want %v", pooled.PoolFirstFailed, firstFailed)
	}
	var text strings.Builder
	if err := report.WriteSummary(&text, pooled, false); err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("; %d failed as the first and only session of a fresh pooled process, which served other cases only after: they ran alone in a fresh process already, and are reported from it with no re-run (%s", len(firstFailed), firstFailed[0]); !strings.Contains(text.String(), want) {
		t.Errorf("the summary's pool line does not say %q:\n%s", want, text.String())
	}
	var page strings.Builder
	if err := report.WriteHTML(&page, pooled); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(page.String(), "the first and only session of this fresh pooled process while it ran"); n < len(firstFailed) {
		t.Errorf("the HTML report says %d times that a case was the first and only session of a fresh pooled process, want at least %d", n, len(firstFailed))
	}
	if n := strings.Count(prog, "; the first and only session of a fresh pooled process: no re-run needed\n"); n != len(firstFailed) {
		t.Errorf("the progress says %d times that a case needs no re-run, want %d:\n%s", n, len(firstFailed), prog)
	}
}
