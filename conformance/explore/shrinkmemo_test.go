package explore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/todoharness/todoharness/conformance/explore"
	"github.com/todoharness/todoharness/driver"
)

// Two failures found on one scenario that shrink to the same case share
// its re-runs: an agent that sends no plan fails TW-PLAN-1 and TW-FINAL-1
// on the same scenarios, each shrinks to the same case, and that case is
// run Confirm times, not Confirm times per failure; each failure still
// says how many of those re-runs failed its own check. Before the runs
// were shared, the 4 failures shrunk here started the agent 4×Confirm
// times for their re-runs.
func TestFailuresWithOneShrunkCaseShareItsReruns(t *testing.T) {
	const confirm = 3
	target := reference("no-plan")
	var reruns atomic.Int32
	inner := target.InProcess
	target.InProcess = func(ctx context.Context, p driver.ProcIO) int {
		if strings.HasPrefix(filepath.Base(p.Dir), "conform-confirm-") {
			reruns.Add(1)
		}
		return inner(ctx, p)
	}
	shrunk := func(check string) bool { return check == "TW-PLAN-1" || check == "TW-FINAL-1" }
	res, err := explore.Explore(context.Background(), explore.Config{Run: runConfig(t, target, validator(t)), Seed: 1, N: 16, Batch: 16,
		ShrinkRuns: 12, Confirm: confirm, ShrinkIf: shrunk})
	if err != nil {
		t.Fatal(err)
	}
	// body is a shrunk case without its header and title, which name the
	// failure: what is run.
	body := func(f explore.Failure) string { _, b, _ := strings.Cut(f.CaseYAML, "\nchecks:"); return b }
	bodies := map[string]explore.Failure{}
	byName := map[string]explore.Failure{}
	shared := 0
	var summary strings.Builder
	if err := res.WriteSummary(&summary); err != nil {
		t.Fatal(err)
	}
	for _, f := range res.Failures {
		byName[f.Check+" "+f.Signature] = f
	}
	for _, f := range res.Failures {
		if !shrunk(f.Check) {
			continue
		}
		t.Logf("%s %s: shrunk in %d runs (%d shared) to %d steps; fails %d of %d re-runs (of %q)", f.Check, f.Signature, f.ShrinkRuns, f.ShrinkRunsShared, f.Steps, f.Reproduced, f.Reruns, f.RerunsOf)
		if f.Reruns != confirm || f.Reproduced != confirm {
			t.Errorf("%s %s: fails %d of %d re-runs, want %d of %d (an agent that never sends a plan)", f.Check, f.Signature, f.Reproduced, f.Reruns, confirm, confirm)
		}
		g, seen := bodies[body(f)]
		if !seen {
			bodies[body(f)] = f
		}
		if f.RerunsOf == "" {
			if seen {
				t.Errorf("%s %s and %s %s shrank to the same case, and both ran it again", f.Check, f.Signature, g.Check, g.Signature)
			}
			continue
		}
		shared++
		if g, ok := byName[f.RerunsOf]; !ok || g.RerunsOf != "" || body(g) != body(f) {
			t.Errorf("%s %s: re-runs of %q, which is no failure that ran the same case again (%+v)", f.Check, f.Signature, f.RerunsOf, g)
		}
		if !strings.Contains(summary.String(), fmt.Sprintf("fails %d of %d re-runs (%s's: the same case)", f.Reproduced, f.Reruns, f.RerunsOf)) {
			t.Errorf("the summary does not say whose re-runs %s %s's are:\n%s", f.Check, f.Signature, summary.String())
		}
	}
	if got, want := int(reruns.Load()), confirm*len(bodies); got != want {
		t.Errorf("the agent was started %d times for re-runs, want %d: %d for each of the %d distinct shrunk cases", got, want, confirm, len(bodies))
	}
	if shared == 0 {
		t.Fatalf("no two of %d failures shrank to the same case: the spec shows nothing", len(res.Failures))
	}
}
