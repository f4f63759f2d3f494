package conformance

import (
	"strings"
	"testing"
	"time"

	"github.com/todoharness/todoharness/driver"
)

// session is the evidence of a case that ran as a session of pooled
// process proc, with its session CPU sc (nil: none read).
func session(proc string, sc *driver.SessionCPU) *Evidence {
	ev := &Evidence{}
	ev.Procs = []driver.ProcResult{{Pooled: proc, SessionCPU: sc}}
	return ev
}

// The floor is the median of the measured sessions after their process's
// first (a case run again alone counts with its pooled session); with
// none, it is absent and says why: never a number that was not measured.
func TestTheFloorIsTheMedianOfTheWarmSessions(t *testing.T) {
	t.Parallel()
	ms := func(nth int, ms int64) *driver.SessionCPU { return &driver.SessionCPU{Nth: nth, Ms: ms} }
	not := func(why string) *driver.SessionCPU { return &driver.SessionCPU{Nth: 2, Unmeasured: why} }
	alone := &Evidence{PooledFailure: &PooledFailure{Evidence: session("p1", ms(4, 70))}}
	alone.Procs = []driver.ProcResult{{}}
	for _, tc := range []struct {
		name     string
		evs      []*Evidence
		floor    float64
		sessions int
		note     string
	}{
		{"odd", []*Evidence{session("p1", ms(1, 900)), session("p1", ms(2, 50)), session("p1", ms(3, 30)), alone}, 50, 3, ""},
		{"even", []*Evidence{session("p1", ms(1, 900)), session("p1", ms(2, 40)), session("p2", ms(2, 60))}, 50, 2, ""},
		{"first sessions only", []*Evidence{session("p1", ms(1, 900)), session("p2", ms(1, 800))}, 0, 0, "no pooled process served a second session (2 session(s)"},
		{"sessions at once", []*Evidence{session("p1", not("up to 4 at once")), session("p1", not("up to 4 at once")), session("p2", not("gone"))}, 0, 0,
			"not measured: up to 4 at once (2 of 3 pooled session(s))"},
		{"saved before", []*Evidence{session("p1", nil)}, 0, 0, "not measured: the evidence has no session CPU"},
		{"no pooled case", []*Evidence{session("", nil)}, 0, 0, "no case ran as a session of a pooled process"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s FloorSamples
			rep := &Report{}
			for _, ev := range tc.evs {
				rep.Cases = append(rep.Cases, &CaseResult{ev: ev})
			}
			s.Add(rep)
			f := s.Floor()
			if f.FloorCPUMs != tc.floor || f.FloorSessions != tc.sessions || !strings.HasPrefix(f.FloorNote, tc.note) || (tc.note == "") != (f.FloorNote == "") {
				t.Errorf("floor %+v, want %g ms of %d sessions, note %q", f, tc.floor, tc.sessions, tc.note)
			}
			if tc.sessions == 0 && !strings.HasPrefix(f.Describe("case"), "- ("+f.FloorNote) {
				t.Errorf("no floor described as %q", f.Describe("case"))
			}
		})
	}
}

// The CPU a case is the run's over the cases run, and the ratio to the
// floor is given only when both are known.
func TestTheReportSetsTheCPUNextToTheFloor(t *testing.T) {
	t.Parallel()
	rep := &Report{Floor: Floor{FloorCPUMs: 40, FloorSessions: 5}}
	rep.SetCPU(1500*time.Millisecond, 25)
	if rep.CPUMs != 1500 || rep.CPUPerCaseMs != 60 || rep.CPUToFloor != 1.5 {
		t.Errorf("cpuMs %d, cpuPerCaseMs %g, cpuToFloor %g: want 1500, 60, 1.5", rep.CPUMs, rep.CPUPerCaseMs, rep.CPUToFloor)
	}
	if got := rep.Floor.Describe("case"); !strings.Contains(got, "40ms of CPU a session in a warm process (median of 5 ") || !strings.HasSuffix(got, "a case cost the run 1.50x that") {
		t.Errorf("described as %q", got)
	}
	none := &Report{Floor: Floor{FloorNote: "pool off"}}
	none.SetCPU(time.Second, 10)
	if none.CPUToFloor != 0 || none.CPUPerCaseMs != 100 {
		t.Errorf("no floor: cpuToFloor %g, cpuPerCaseMs %g; want none, 100", none.CPUToFloor, none.CPUPerCaseMs)
	}
}

// The CPU a pooled case cost its agent is the CPU of every pooled process
// over its life (its start-up amortised over the sessions it served) plus
// that of the fresh processes that ran pooled failures again alone, over
// the cases that ran pooled; a case with a process of its own (a restart,
// the probe) is in neither. Where one of them was not read, it is absent
// and says why.
func TestAPooledCaseCostsItsShareOfThePoolAndItsRunsAlone(t *testing.T) {
	t.Parallel()
	ms := func(nth int, ms int64) *driver.SessionCPU { return &driver.SessionCPU{Nth: nth, Ms: ms} }
	rerun := func(cpu *driver.ProcCPU, inProcess bool) *Evidence {
		ev := &Evidence{PooledFailure: &PooledFailure{Evidence: session("p1", ms(4, 50))}}
		ev.Procs = []driver.ProcResult{{CPU: cpu, InProcess: inProcess}}
		return ev
	}
	own := &Evidence{}
	own.Procs = []driver.ProcResult{{CPU: &driver.ProcCPU{Ms: 5000}}, {CPU: &driver.ProcCPU{Ms: 5000}}}
	// Three sessions of process p1 (its first 100 ms, then 40 and 60), a
	// fourth that failed there (50 ms) and ran again alone (900 ms), and a
	// case with two processes of its own (10 s, not the pool's).
	evs := func(again *Evidence) []*Evidence {
		return []*Evidence{session("p1", ms(1, 100)), session("p1", ms(2, 40)), session("p1", ms(3, 60)), again, own}
	}
	pool := driver.PoolCPU{Processes: 1, Ms: 1200}
	for _, tc := range []struct {
		name   string
		evs    []*Evidence
		pool   *driver.PoolCPU
		per    float64 // pooledCpuMs
		ratio  float64 // pooledToFloor
		note   string
		descry string
	}{
		// (1200 + 900) / 4 pooled cases; the floor is the median of 40,
		// 60 and 50.
		{"measured", evs(rerun(&driver.ProcCPU{Ms: 900}, false)), &pool, 525, 10.5, "",
			"; a pooled case cost its agent 525ms of CPU (its pooled processes' whole lives, start-ups included, and the runs again alone of pooled failures), 10.50x the floor"},
		{"no failure run alone", evs(session("p1", ms(4, 50))), &pool, 300, 6, "", ", 6.00x the floor"},
		{"the pool not given", evs(rerun(&driver.ProcCPU{Ms: 900}, false)), nil, 0, 0, "", ""},
		{"a pooled process not read", evs(rerun(&driver.ProcCPU{Ms: 900}, false)), &driver.PoolCPU{Processes: 2, Ms: 1200, Unmeasured: "pooled process 2: no /proc"}, 0, 0,
			"not measured: pooled process 2: no /proc", "; the CPU a pooled case cost its agent: - (not measured: pooled process 2: no /proc)"},
		{"a pooled process still running", evs(rerun(&driver.ProcCPU{Ms: 900}, false)), &driver.PoolCPU{Processes: 1, Running: 1, Ms: 1200}, 0, 0,
			"not measured: 1 pooled process(es) had not ended", ""},
		{"a run alone not read", evs(rerun(&driver.ProcCPU{Unmeasured: "no /proc"}, false)), &pool, 0, 0, "not measured: a case run again alone: no /proc", ""},
		{"a run alone saved before", evs(rerun(nil, false)), &pool, 0, 0, "not measured: a case run again alone has no process CPU", ""},
		{"a run alone in process", evs(rerun(nil, true)), &pool, 0, 0, "not measured: the agent runs in the runner's process", ""},
		{"under the resolution", evs(session("p1", ms(4, 0))), &driver.PoolCPU{Processes: 1}, 0, 0, "under 10ms of CPU in all for 4 pooled case(s)", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := &Report{}
			for _, ev := range tc.evs {
				rep.Cases = append(rep.Cases, &CaseResult{ev: ev})
			}
			var s FloorSamples
			s.Add(rep)
			if tc.pool != nil {
				s.AddPool(*tc.pool)
			}
			f := s.Floor()
			if f.PooledCPUMs != tc.per || f.PooledToFloor != tc.ratio || !strings.HasPrefix(f.PooledCPUNote, tc.note) || (tc.note == "") != (f.PooledCPUNote == "") {
				t.Errorf("pooledCpuMs %g, pooledToFloor %g, note %q; want %g, %g, %q", f.PooledCPUMs, f.PooledToFloor, f.PooledCPUNote, tc.per, tc.ratio, tc.note)
			}
			if d := f.Describe("case"); !strings.HasSuffix(d, tc.descry) || (tc.pool == nil) != !strings.Contains(d, "pooled case") {
				t.Errorf("described as %q, want it to end %q", d, tc.descry)
			}
			if tc.pool == nil {
				return
			}
			// A conform run's report gets the same from its pool, and its
			// ratio stays beside the run's CPU a case.
			rep.Floor = Floor{FloorCPUMs: f.FloorCPUMs, FloorSessions: f.FloorSessions}
			rep.SetCPU(10*time.Second, 5)
			rep.SetPoolCPU(*tc.pool)
			if cpuRatio := 2000 / f.FloorCPUMs; rep.PooledCPUMs != tc.per || rep.PooledToFloor != tc.ratio || rep.PooledCPUNote != f.PooledCPUNote || rep.CPUToFloor != cpuRatio {
				t.Errorf("report: pooledCpuMs %g, pooledToFloor %g, note %q, cpuToFloor %g; want %g, %g, %q, %g", rep.PooledCPUMs, rep.PooledToFloor, rep.PooledCPUNote, rep.CPUToFloor, tc.per, tc.ratio, f.PooledCPUNote, cpuRatio)
			}
		})
	}
}
