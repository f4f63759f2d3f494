package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/todoharness/todoharness/cmd/todoharness/cli"
	. "github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/report"
	"github.com/todoharness/todoharness/driver"
)

// noPlanRun runs the catalogue against the reference agent in process
// with the no-plan fault (every prompt case fails TW-PLAN-1 and
// TW-FINAL-1, as gemini-cli fails them), as a real agent runs: two cases
// at once, one session at a time a pooled process. pool "" is --pool
// off, else the --rerun-pooled mode. It returns the report and how many
// agent processes started.
func noPlanRun(t *testing.T, pool string) (*Report, int64) {
	t.Helper()
	var starts atomic.Int64
	tg := driver.Target{Name: "fault no-plan", Command: cli.ReferenceAgentArgs("todoharness"), Env: []string{"TODOHARNESS_FAULT=no-plan"}, PoolSessions: 1,
		InProcess: func(ctx context.Context, p driver.ProcIO) int {
			starts.Add(1)
			return cli.InProcessAgent(ctx, p)
		}}
	rep, err := Run(context.Background(), Config{Agent: tg, Cases: BuiltinCases(t), Parallel: 2, Pool: pool != "", RerunPooled: pool,
		Timeout: time.Minute, Grace: 5 * time.Second, Settle: 50 * time.Millisecond, Validator: Compiled(SharedValidator(t)), TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	return rep, starts.Load()
}

// A pooled case that failed only with failures that a case of the same
// run had already confirmed alone in a fresh process is not run again
// alone (--rerun-pooled known, the default): against an agent that fails
// every prompt case the same way, the run starts far fewer processes
// than with --rerun-pooled every (each failure run again, and the pool
// given up after three) or --pool off, and fails exactly the same checks
// with the same outcome for each. Each such failure names the case that
// confirmed it, a case that ran alone and failed that check; a failure
// of a kind no case confirmed (TW-EMPTY-1, of empty-list alone) still
// runs again alone.
func TestKnownPooledFailuresOfTheCatalogueAreNotRunAgain(t *testing.T) {
	t.Parallel()
	known, knownStarts := noPlanRun(t, RerunKnown)
	every, everyStarts := noPlanRun(t, RerunEvery)
	off, offStarts := noPlanRun(t, "")
	if known.OK || len(known.FailedIDs()) == 0 {
		t.Fatalf("no-plan: verdict %s, failed %v: want failures", known.Verdict, known.FailedIDs())
	}
	outcomes := func(r *Report) map[string]Outcome {
		out := map[string]Outcome{}
		for _, c := range r.Checks {
			out[c.ID] = c.Outcome
		}
		return out
	}
	for name, r := range map[string]*Report{"every": every, "off": off} {
		if !slices.Equal(r.FailedIDs(), known.FailedIDs()) {
			t.Errorf("failed checks: known %v, %s %v: want the same", known.FailedIDs(), name, r.FailedIDs())
		}
	}
	// Pooled either way, every check has the same outcome, but
	// ACP-ISOLATION-1: it is n/a where no session had another beside it
	// (with a process per case; and with every, once the pool stopped
	// after its first sessions failed, as it may under load). Where
	// sessions shared a process it passes: no crossing.
	ko, eo := outcomes(known), outcomes(every)
	iso := []Outcome{ko[ACPIsolation1], eo[ACPIsolation1]}
	delete(ko, ACPIsolation1)
	delete(eo, ACPIsolation1)
	if !maps.Equal(ko, eo) {
		t.Errorf("outcomes: known %v, every %v: want the same", ko, eo)
	}
	for _, o := range iso {
		if o != Pass && o != NA {
			t.Errorf("%s %s: want pass, or n/a", ACPIsolation1, o)
		}
	}
	if known.RerunPooled != RerunKnown || every.RerunPooled != RerunEvery || off.RerunPooled != "" {
		t.Errorf("rerunPooled: known %q, every %q, off %q", known.RerunPooled, every.RerunPooled, off.RerunPooled)
	}
	if len(known.PoolKnown) == 0 || len(every.PoolKnown) != 0 {
		t.Fatalf("cases not run again alone: known %v, every %v: want some, none", known.PoolKnown, every.PoolKnown)
	}
	if knownStarts >= everyStarts || knownStarts >= offStarts {
		t.Errorf("%d agent processes started with --rerun-pooled known, %d with every, %d with --pool off: want fewer with known", knownStarts, everyStarts, offStarts)
	}
	// The pool goes on: the failures of the first and only sessions of
	// fresh pooled processes confirm the others' and cost no re-run;
	// every case that needs no fresh process ran pooled.
	poolable := 0
	for _, c := range known.Cases {
		if c.Evidence().Case.Poolable() {
			poolable++
		}
	}
	if known.PooledCases+known.PoolRanAlone != poolable {
		t.Errorf("--rerun-pooled known: %d of %d cases that need no fresh process ran pooled (%d of them ran again alone): the pool stopped", known.PooledCases+known.PoolRanAlone, poolable, known.PoolRanAlone)
	}
	t.Logf("processes started: known %d (%d cases not run again, %d run again alone), every %d (%d run again alone), off %d",
		knownStarts, len(known.PoolKnown), known.PoolRanAlone, everyStarts, every.PoolRanAlone, offStarts)

	byID := map[string]*CaseResult{}
	for _, c := range known.Cases {
		byID[c.ID] = c
	}
	for _, id := range known.PoolKnown {
		cr := byID[id]
		ev := cr.Evidence()
		if ev.PooledFailure != nil || ev.NotRunAgain == "" || len(ev.ConfirmedBy) == 0 || len(ev.Procs) == 0 || ev.Procs[0].Pooled == "" || ev.Procs[0].PooledAlone {
			t.Errorf("case %s: not run again, yet its evidence is not a pooled session's beside others, saying so", id)
		}
		if slices.Contains(cr.Failed, "TW-EMPTY-1") {
			t.Errorf("case %s failed TW-EMPTY-1 pooled, which only it fails, yet was not run again alone", id)
		}
		for x := range ev.ConfirmedBy {
			by := ev.ConfirmedBy[x]
			if !strings.Contains(cr.Pool, "was not run again alone") || !strings.Contains(cr.Pool, "case "+by+" confirmed") {
				t.Errorf("case %s: pool %q: want it to say it was not run again alone, naming case %s", id, cr.Pool, by)
			}
			conf := byID[by].Evidence()
			if len(conf.Procs) == 0 || conf.Procs[0].Pooled != "" && !conf.Procs[0].PooledAlone {
				t.Errorf("case %s: %s confirmed by case %s, which did not run alone in a fresh process", id, x, by)
			}
			if !slices.Contains(byID[by].Failed, x) {
				t.Errorf("case %s: %s confirmed by case %s, which does not fail it", id, x, by)
			}
		}
		for _, f := range cr.Failed {
			if c, _ := known.Check(f); c.Level != INFO && ev.ConfirmedBy[f] == "" {
				t.Errorf("case %s failed %s pooled, confirmed by no case, yet was not run again alone", id, f)
			}
		}
	}
	for _, c := range known.Checks {
		for _, cv := range c.Cases {
			if ev := byID[cv.Case].Evidence(); cv.Outcome == Fail && ev.NotRunAgain != "" &&
				!strings.Contains(cv.NotRunAgain(), "not run again alone: case "+ev.ConfirmedBy[c.ID]+" confirmed the same failure alone in a fresh process") {
				t.Errorf("%s on case %s: %q does not name the case that confirmed it", c.ID, cv.Case, cv.NotRunAgain())
			}
		}
	}

	// Every report says it: the summary (text and Markdown), the HTML
	// page, the JSON.
	var text, md, html bytes.Buffer
	if err := report.WriteSummary(&text, known, false); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteMarkdown(&md, known); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteHTML(&html, known); err != nil {
		t.Fatal(err)
	}
	first := known.PoolKnown[0]
	for name, s := range map[string]string{"text": text.String(), "markdown": md.String(), "html": html.String()} {
		if !strings.Contains(s, "seen as a session of a pooled process, not run again alone: case ") {
			t.Errorf("the %s report does not say which failures were not run again alone", name)
		}
		if !strings.Contains(s, "were not run again") {
			t.Errorf("the %s report's pool line does not say known failures were not run again", name)
		}
	}
	b, err := json.Marshal(known)
	if err != nil {
		t.Fatal(err)
	}
	var j struct {
		RerunPooled string   `json:"rerunPooled"`
		PoolKnown   []string `json:"poolKnown"`
		Cases       []struct {
			ID   string `json:"id"`
			Pool string `json:"pool"`
		} `json:"cases"`
		Checks []struct {
			Cases []struct {
				ConfirmedBy string `json:"confirmedBy"`
			} `json:"cases"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	confirmed := 0
	for _, c := range j.Checks {
		for _, cv := range c.Cases {
			if cv.ConfirmedBy != "" {
				confirmed++
			}
		}
	}
	i := slices.IndexFunc(j.Cases, func(c struct {
		ID   string `json:"id"`
		Pool string `json:"pool"`
	}) bool {
		return c.ID == first
	})
	if j.RerunPooled != RerunKnown || !slices.Equal(j.PoolKnown, known.PoolKnown) || confirmed == 0 || i < 0 || !strings.Contains(j.Cases[i].Pool, "not run again alone") {
		t.Errorf("JSON: rerunPooled %q, poolKnown %v, %d failures naming a confirming case, case %s's pool: want %s, %v, some, saying it",
			j.RerunPooled, j.PoolKnown, confirmed, first, RerunKnown, known.PoolKnown)
	}
}

// kindRun runs n copies of the catalogue's plan-basic (each its own ID)
// against the reference agent in process with fault, one case at a time,
// each a session of one pooled process (the reference agent answers
// concurrent prompts: n sessions at once a process), under
// --rerun-pooled mode, in the pooled process of an earlier run (as
// an exploration's batches share their pool): that run's one case had
// the process first, so no case of this run is the first and only
// session of a fresh pooled process. It returns the report and how many
// agent processes this run started.
func kindRun(t *testing.T, fault, mode string, n int) (*Report, int64) {
	t.Helper()
	var basic *Case
	for _, c := range BuiltinCases(t) {
		if c.ID == "plan-basic" {
			basic = c
		}
	}
	copies := func(prefix string, n int) []*Case {
		var cases []*Case
		for i := range n {
			c := *basic
			c.ID = fmt.Sprintf("%s-%d", prefix, i+1)
			cases = append(cases, &c)
		}
		return cases
	}
	var starts atomic.Int64
	tg := driver.Target{Name: "fault " + fault, Command: cli.ReferenceAgentArgs("todoharness"), Env: []string{"TODOHARNESS_FAULT=" + fault}, PoolSessions: n,
		InProcess: func(ctx context.Context, p driver.ProcIO) int {
			starts.Add(1)
			return cli.InProcessAgent(ctx, p)
		}}
	cfg := Config{Agent: tg, Cases: copies("warm-up", 1), Parallel: 1, Pool: true, RerunPooled: mode,
		Timeout: time.Minute, Grace: 5 * time.Second, Settle: 50 * time.Millisecond, Validator: Compiled(SharedValidator(t)), TempDir: t.TempDir()}
	cfg.Pooled = NewPool(cfg, nil)
	defer cfg.Pooled.Close()
	if _, err := Run(context.Background(), cfg); err != nil {
		t.Fatal(err)
	}
	starts.Store(0)
	cfg.Cases = copies("plan-basic", n)
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return rep, starts.Load()
}

// Cases that failed the same way as sessions of a pooled process, none of
// them confirmed alone in a fresh process when it ended (sessions of a
// process an earlier run started, as an exploration's batches), cost one run again
// alone under --rerun-pooled known, not one each: that case confirms the
// failure, and the others are not run again, each naming it. Every case
// is run again alone under --rerun-pooled every, and both fail the same
// checks.
func TestOneRunAgainAlonePerKindOfFailure(t *testing.T) {
	t.Parallel()
	const n = 6
	known, knownStarts := kindRun(t, "no-plan", RerunKnown, n)
	every, everyStarts := kindRun(t, "no-plan", RerunEvery, n)
	if len(known.FailedIDs()) == 0 || !slices.Equal(known.FailedIDs(), every.FailedIDs()) {
		t.Fatalf("failed checks: known %v, every %v: want the same, some", known.FailedIDs(), every.FailedIDs())
	}
	t.Logf("known: %d processes started, %d pooled, %d run again alone, %v not run again; every: %d started, %d run again alone",
		knownStarts, known.PoolProcesses, known.PoolRanAlone, known.PoolKnown, everyStarts, every.PoolRanAlone)
	shared := 0 // pooled cases not the first and only session of their process
	var rerun string
	for _, c := range known.Cases {
		ev := c.Evidence()
		if ev.PooledFailure != nil {
			rerun = c.ID
		}
		if ev.PooledFailure != nil || len(ev.Procs) > 0 && ev.Procs[0].Pooled != "" && !ev.Procs[0].PooledAlone {
			shared++
		}
	}
	if shared < 2 {
		t.Fatalf("%d pooled cases shared their process: the fixture no longer shows failures of one kind unconfirmed at their end", shared)
	}
	if known.PoolRanAlone != 1 || len(known.PoolKnown) != shared-1 {
		t.Fatalf("--rerun-pooled known: %d cases run again alone, %d not run again (%v), of %d that failed sharing a pooled process: want 1 and %d",
			known.PoolRanAlone, len(known.PoolKnown), known.PoolKnown, shared, shared-1)
	}
	// Under every, each pooled failure runs again alone (and the pool is
	// given up after three: the cases after that have processes of their
	// own).
	own := len(every.Cases) - 1 - every.PooledCases - every.PoolRanAlone
	if knownStarts != 2 || every.PoolRanAlone < 3 || everyStarts != int64(1+every.PoolRanAlone+own) {
		t.Errorf("agent processes started: %d with --rerun-pooled known, %d with every (%d run again alone, %d cases in processes of their own): want 2 (the probe, one run again alone), and one for the probe and each of those",
			knownStarts, everyStarts, every.PoolRanAlone, own)
	}
	for _, id := range known.PoolKnown {
		cr := caseByID(known, id)
		ev := cr.Evidence()
		if len(ev.ConfirmedBy) == 0 {
			t.Errorf("case %s: not run again, confirmed by no case", id)
		}
		for x, by := range ev.ConfirmedBy {
			if by != rerun {
				t.Errorf("case %s: %s confirmed by %s: want %s, the case run again alone", id, x, by, rerun)
			}
		}
		if !strings.Contains(cr.Pool, "was not run again alone: case "+rerun+" confirmed") {
			t.Errorf("case %s: pool %q: want it to say case %s confirmed its failures", id, cr.Pool, rerun)
		}
	}
}

// A case whose failure's representative passed alone in a fresh process
// (an isolation failure: each session after another on a process starts
// with that process's list) is run again alone itself, after the
// representative ended: nothing confirmed its failure.
func TestARunAgainAloneThatPassesConfirmsNoOtherCase(t *testing.T) {
	t.Parallel()
	rep, _ := kindRun(t, "shared-todo-list", RerunKnown, 4)
	var reruns []*Evidence
	for _, c := range rep.Cases {
		if ev := c.Evidence(); ev.PooledFailure != nil {
			reruns = append(reruns, ev)
		}
	}
	if len(reruns) < 2 || len(rep.PoolKnown) != 0 {
		t.Fatalf("%d cases run again alone, %v not run again: want at least 2, none", len(reruns), rep.PoolKnown)
	}
	first := slices.MinFunc(reruns, func(a, b *Evidence) int { return a.Started.Compare(b.Started) })
	for _, ev := range reruns {
		if ev != first && ev.Started.Before(first.Started.Add(first.Duration)) {
			t.Errorf("case %s ran again alone at %v, before case %s, run again first, ended (%v): want it to wait for that case's answer",
				ev.Case.ID, ev.Started, first.Case.ID, first.Started.Add(first.Duration))
		}
	}
	if c, _ := rep.Check(ACPIsolation1); c.Outcome != Fail {
		t.Errorf("%s: %s, want fail", ACPIsolation1, c.Outcome)
	}
}

func caseByID(rep *Report, id string) *CaseResult {
	for _, c := range rep.Cases {
		if c.ID == id {
			return c
		}
	}
	return nil
}
