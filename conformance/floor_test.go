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
