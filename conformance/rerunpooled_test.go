package conformance_test

import (
	"bytes"
	"context"
	"encoding/json"
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
