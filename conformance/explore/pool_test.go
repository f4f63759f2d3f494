package explore_test

import (
	"context"
	"slices"
	"testing"

	"github.com/todoharness/todoharness/conformance"
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
// it served a fresh run, not a verdict.
func TestPooledRunFailsWhatAProcessPerCaseFails(t *testing.T) {
	faults := []string{"", "wrong-counts", "crash-on-prompt", "no-plan"}
	if testing.Short() || testutil.RaceEnabled {
		faults = []string{"", "crash-on-prompt"}
	}
	v := validator(t)
	cases, err := conformance.LoadCases(conformancefixtures.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	for _, fault := range faults {
		run := func(pool bool) *conformance.Report {
			cfg := runConfig(t, reference(fault), v)
			cfg.Cases, cfg.Parallel, cfg.Pool = cases, 2, pool
			rep, err := conformance.Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			return rep
		}
		alone, pooled := run(false), run(true)
		if alone.Pool != conformance.PoolOff || pooled.Pool != conformance.PoolOn {
			t.Errorf("fault %q: the reports say pool %q and %q, want off and on", fault, alone.Pool, pooled.Pool)
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
			case poolable && ev.PooledFailure == nil:
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
