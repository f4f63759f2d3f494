package conformance

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/todoharness/todoharness/driver"
)

// A pooled process serving one case at a time has each session's CPU read
// from /proc, its tree's (the fake's child that burns fakeBurn, waited
// for, included), and the report's floor is the median of the sessions
// after the process's first: each session of the fake in mode burn costs
// at least fakeBurn and well under twice it (not the process's CPU so
// far, which grows by fakeBurn a session).
func TestTheFloorIsWhatASessionCostsAWarmProcess(t *testing.T) {
	t.Parallel()
	base := oneCase(t, "plan-basic")[0]
	var cases []*Case
	for i := range 7 {
		c := *base
		c.ID = fmt.Sprintf("%s-%d", base.ID, i+1)
		cases = append(cases, &c)
	}
	// One case at a time (each gives up its slot while it settles): with
	// the dialect forced the run's first case is pooled too, and the seven
	// are sessions of one to three processes.
	rep, err := Run(context.Background(), Config{Agent: fakeTarget(t, "burn"), Cases: cases, Pool: true, Parallel: 1,
		Dialect: driver.DialectTodoWrite, Timeout: time.Minute, Grace: time.Second, Settle: 50 * time.Millisecond,
		Validator: Compiled(sharedValidator(t)), TempDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if rep.PooledCases != 7 || rep.PoolProcesses < 1 || rep.PoolProcesses > 3 {
		dumpFailures(t, rep)
		t.Fatalf("%d cases pooled in %d process(es), want 7 in 1 to 3", rep.PooledCases, rep.PoolProcesses)
	}
	burnMs := fakeBurn.Milliseconds()
	// /proc counts in ticks of 10 ms: a reading is up to one short.
	low, high := burnMs-10, 2*burnMs
	nths := map[string][]int{} // the sessions' numbers, by process
	for _, c := range rep.Cases {
		ev := c.Evidence()
		sc := ev.Procs[0].SessionCPU
		if ev.Procs[0].Pooled == "" {
			if sc != nil {
				t.Errorf("case %s ran in a process of its own, yet has a session CPU %+v", c.ID, sc)
			}
			// Its process's whole life: its one session, and more.
			if pc := ev.Procs[0].CPU; pc == nil || pc.Unmeasured != "" || pc.Ms < low {
				t.Errorf("case %s ran in a process of its own, which cost %+v of CPU: want at least %d ms", c.ID, pc, low)
			}
			continue
		}
		if ev.Procs[0].CPU != nil {
			t.Errorf("case %s: a pooled session with a process CPU %+v of its own", c.ID, ev.Procs[0].CPU)
		}
		switch {
		case sc == nil:
			t.Errorf("case %s: a pooled session without its CPU", c.ID)
		case sc.Unmeasured != "":
			t.Errorf("case %s: session %+v, want it measured", c.ID, sc)
		case sc.Ms < low || sc.Ms >= high:
			t.Errorf("case %s: session %d cost %d ms of CPU, want %d to %d (the fake's child burns %d ms each session)", c.ID, sc.Nth, sc.Ms, low, high, burnMs)
		}
		if sc != nil {
			nths[ev.Procs[0].Pooled] = append(nths[ev.Procs[0].Pooled], sc.Nth)
		}
	}
	for proc, ns := range nths {
		slices.Sort(ns)
		for i, n := range ns {
			if n != i+1 {
				t.Errorf("%s: sessions numbered %v, want 1 to %d", proc, ns, len(ns))
				break
			}
		}
	}
	t.Logf("floor %+v, sessions %v", rep.Floor, nths)
	if want := rep.PooledCases - rep.PoolProcesses; rep.FloorSessions != want || rep.FloorCPUMs < float64(low) || rep.FloorCPUMs >= float64(high) || rep.FloorNote != "" {
		t.Errorf("floor %+v: want the median of the %d sessions after their process's first, %d to %d ms", rep.Floor, want, low, high)
	}
	// What a pooled case cost its agent: the pooled processes' whole
	// lives (each session burns fakeBurn; their start-ups, a Go binary's,
	// shared among the sessions) over the pooled cases.
	if rep.PooledCPUNote != "" || rep.PooledCPUMs < float64(low) || rep.PooledCPUMs >= float64(high) {
		t.Errorf("a pooled case cost its agent %g ms (note %q): want %d to %d ms", rep.PooledCPUMs, rep.PooledCPUNote, low, high)
	}
	if want := math.Round(rep.PooledCPUMs/rep.FloorCPUMs*100) / 100; rep.PooledToFloor != want {
		t.Errorf("pooledToFloor %g, want %g", rep.PooledToFloor, want)
	}
}
