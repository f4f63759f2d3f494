package conformance

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/todoharness/todoharness/driver"
)

// Floor is what one session costs a warm agent process in CPU: the median,
// over the sessions pooled processes served one at a time after their
// first, of the CPU time the process's tree used from the session's start
// to its end (driver.SessionCPU). Next to the CPU a case or scenario costs
// the whole run, it says how much of that is the contract's and how much
// start-ups, waits and the harness (issue 43: a pooled scenario within
// 1.5x of it). FloorNote says why there is no floor when there is none
// (the pool off, an agent in the runner's process, sessions served at
// once, no /proc): never a number that was not measured.
//
// FloorCPUMs is absent beside FloorSessions when the median is under the
// 10 ms resolution of /proc.
type Floor struct {
	FloorCPUMs    float64 `json:"floorCpuMs,omitempty"`
	FloorSessions int     `json:"floorSessions,omitempty"`
	FloorNote     string  `json:"floorNote,omitempty"`
	// CPUToFloor is the CPU a case (a scenario) cost the run divided by
	// the floor, to two decimals (0: either is unknown).
	CPUToFloor float64 `json:"cpuToFloor,omitempty"`
	// PooledCPUMs is the CPU a pooled case (scenario) cost its agent, the
	// figure issue 43 puts next to the floor: the CPU of every pooled
	// process over its life (driver.PoolCPU: its start-up amortised over
	// the sessions it served) and of the fresh processes that ran pooled
	// failures again alone (driver.ProcResult.CPU), over the cases that
	// ran as sessions of pooled processes. The runner's own CPU and that
	// of the cases with a process of their own (restarts, session/load,
	// the probe, exit checks) are not in it. PooledToFloor is it divided
	// by the floor, to two decimals (0: either is unknown).
	// PooledCPUNote says why it is absent when the pooled processes' CPU
	// was looked for and could not be read (an agent in the runner's
	// process, no /proc, a process still running): never a number that
	// was not measured.
	PooledCPUMs   float64 `json:"pooledCpuMs,omitempty"`
	PooledToFloor float64 `json:"pooledToFloor,omitempty"`
	PooledCPUNote string  `json:"pooledCpuNote,omitempty"`
}

// SetRatio sets CPUToFloor from the CPU per case or scenario perMs (0:
// unknown).
// It sets PooledToFloor from PooledCPUMs too.
func (f *Floor) SetRatio(perMs float64) {
	f.CPUToFloor, f.PooledToFloor = 0, 0
	if perMs > 0 && f.FloorCPUMs > 0 {
		f.CPUToFloor = math.Round(perMs/f.FloorCPUMs*100) / 100
	}
	if f.PooledCPUMs > 0 && f.FloorCPUMs > 0 {
		f.PooledToFloor = math.Round(f.PooledCPUMs/f.FloorCPUMs*100) / 100
	}
}

// Describe says the floor for a summary line, and the CPU a unit ("case",
// "scenario") cost the run next to it: "40ms of CPU a session in a warm
// process (median of 12 ...); a scenario cost 1.20x that", or "- (why)";
// then what a pooled unit cost its agent (PooledCPUMs), where it was
// looked for.
func (f Floor) Describe(unit string) string {
	return f.describeFloor(unit) + f.describePooled(unit)
}

func (f Floor) describeFloor(unit string) string {
	if f.FloorSessions == 0 {
		return "- (" + cmp.Or(f.FloorNote, "not measured") + ")"
	}
	cpu := RoundCPU(time.Duration(f.FloorCPUMs * float64(time.Millisecond))).String()
	if f.FloorCPUMs == 0 {
		cpu = "under 10ms (the resolution of /proc)"
	}
	s := fmt.Sprintf("%s of CPU a session in a warm process (median of %d pooled session(s) after their process's first)", cpu, f.FloorSessions)
	if f.CPUToFloor > 0 {
		s += fmt.Sprintf("; a %s cost the run %.2fx that", unit, f.CPUToFloor)
	}
	return s
}

func (f Floor) describePooled(unit string) string {
	switch {
	case f.PooledCPUMs > 0:
		s := fmt.Sprintf("; a pooled %s cost its agent %s of CPU (its pooled processes' whole lives, start-ups included, and the runs again alone of pooled failures)",
			unit, RoundCPU(time.Duration(f.PooledCPUMs*float64(time.Millisecond))))
		if f.PooledToFloor > 0 {
			s += fmt.Sprintf(", %.2fx the floor", f.PooledToFloor)
		}
		return s
	case f.PooledCPUNote != "":
		return fmt.Sprintf("; the CPU a pooled %s cost its agent: - (%s)", unit, f.PooledCPUNote)
	}
	return ""
}

// RoundCPU rounds a CPU time for a progress or summary line: to 0.1 ms
// under a second, to 10 ms above.
func RoundCPU(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(100 * time.Microsecond)
	}
	return d.Round(10 * time.Millisecond)
}

// FloorSamples gathers the sessions' CPU from the evidence of runs, for
// their Floor (an exploration's batches are several runs).
type FloorSamples struct {
	ms     []int64
	why    map[string]int // why sessions were not measured, how many
	firsts int            // measured sessions that were their process's first
	pooled int            // cases that ran as sessions of a pooled process
	// pool is what the pooled processes cost (AddPool; nil: not given),
	// rerunMs what the fresh processes that ran pooled failures again
	// alone cost, rerunWhy why one of theirs was not read.
	pool     *driver.PoolCPU
	rerunMs  int64
	rerunWhy string
}

// AddPool adds what the pooled processes of the runs cost in CPU (read
// once they have all ended), for the CPU a pooled case cost its agent
// (Floor.PooledCPUMs).
func (s *FloorSamples) AddPool(c driver.PoolCPU) {
	if s.pool == nil {
		s.pool = &driver.PoolCPU{}
	}
	s.pool.Processes += c.Processes
	s.pool.Running += c.Running
	s.pool.Ms += c.Ms
	s.pool.Unmeasured = cmp.Or(s.pool.Unmeasured, c.Unmeasured)
}

// Add gathers the sessions of the cases of rep (of a case run again alone,
// its pooled session's).
func (s *FloorSamples) Add(rep *Report) {
	for _, c := range rep.Cases {
		if ev := c.Evidence(); ev != nil {
			s.add(ev)
		}
	}
}

func (s *FloorSamples) add(ev *Evidence) {
	pe := ev
	if pf := ev.PooledFailure; pf != nil && pf.Evidence != nil {
		pe = pf.Evidence
	}
	if !pe.pooled() {
		return
	}
	s.pooled++
	if pe != ev {
		s.addRerun(ev)
	}
	c := pe.Procs[0].SessionCPU
	switch {
	case len(pe.Procs) > 1:
		s.note("the case restarted its agent: its session ran in two processes, the second started for it")
	case c == nil:
		s.note("the evidence has no session CPU (saved before it was read)")
	case c.Unmeasured != "":
		s.note(c.Unmeasured)
	case c.Nth <= 1:
		s.firsts++
	default:
		s.ms = append(s.ms, c.Ms)
	}
}

// addRerun adds the CPU of the processes of a case run again alone in a
// fresh process after it failed pooled.
func (s *FloorSamples) addRerun(ev *Evidence) {
	for _, p := range ev.Procs {
		switch {
		case p.InProcess:
			s.rerunWhy = cmp.Or(s.rerunWhy, "the agent runs in the runner's process: its CPU is the runner's")
		case p.CPU == nil:
			s.rerunWhy = cmp.Or(s.rerunWhy, "a case run again alone has no process CPU in its evidence (saved before it was read)")
		case p.CPU.Unmeasured != "":
			s.rerunWhy = cmp.Or(s.rerunWhy, "a case run again alone: "+p.CPU.Unmeasured)
		default:
			s.rerunMs += p.CPU.Ms
		}
	}
}

func (s *FloorSamples) note(why string) {
	if s.why == nil {
		s.why = map[string]int{}
	}
	s.why[driver.OneLine(why, 200)]++
}

// Floor is the median of the sessions gathered, or why there is none,
// with what a pooled case cost its agent (PooledCPUMs) when the pool's
// CPU was added. Its ratios are SetRatio's.
func (s *FloorSamples) Floor() Floor {
	f := s.floor()
	s.pooledCPU(&f)
	f.SetRatio(0)
	return f
}

// pooledCPU sets f's PooledCPUMs, or PooledCPUNote why it is not known,
// once the pool's CPU was added and a case ran pooled.
func (s *FloorSamples) pooledCPU(f *Floor) {
	if s.pool == nil || s.pooled == 0 {
		return
	}
	total := s.pool.Ms + s.rerunMs
	switch why := cmp.Or(s.pool.Unmeasured, s.rerunWhy); {
	case why != "":
		f.PooledCPUNote = "not measured: " + driver.OneLine(why, 200)
	case s.pool.Running > 0:
		f.PooledCPUNote = fmt.Sprintf("not measured: %d pooled process(es) had not ended when it was read", s.pool.Running)
	case total == 0:
		f.PooledCPUNote = fmt.Sprintf("under 10ms of CPU in all for %d pooled case(s) (the resolution of /proc)", s.pooled)
	default:
		f.PooledCPUMs = math.Round(float64(total)/float64(s.pooled)*1000) / 1000
	}
}

func (s *FloorSamples) floor() Floor {
	if n := len(s.ms); n > 0 {
		ms := slices.Sorted(slices.Values(s.ms))
		med := float64(ms[n/2])
		if n%2 == 0 {
			med = float64(ms[n/2-1]+ms[n/2]) / 2
		}
		return Floor{FloorCPUMs: med, FloorSessions: n}
	}
	switch {
	case len(s.why) > 0:
		// The most frequent reason (the first in order on a tie).
		whys := slices.Sorted(maps.Keys(s.why))
		top := whys[0]
		for _, w := range whys {
			if s.why[w] > s.why[top] {
				top = w
			}
		}
		return Floor{FloorNote: fmt.Sprintf("not measured: %s (%d of %d pooled session(s))", top, s.why[top], s.pooled)}
	case s.firsts > 0:
		return Floor{FloorNote: fmt.Sprintf("no pooled process served a second session (%d session(s), each its process's first, which is not warm)", s.firsts)}
	}
	return Floor{FloorNote: "no case ran as a session of a pooled process"}
}

// SetCPU records the CPU time d the run of n cases used (this process's
// and that of every agent process it started, each ended), in all and a
// case, and the ratio of a case's to the floor.
func (r *Report) SetCPU(d time.Duration, n int) {
	r.CPUMs, r.CPUPerCaseMs = d.Milliseconds(), 0
	if n > 0 {
		r.CPUPerCaseMs = math.Round(float64(d.Microseconds())/1000/float64(n)*1000) / 1000
	}
	r.SetRatio(r.CPUPerCaseMs)
}

// SetPoolCPU records what a pooled case cost its agent (PooledCPUMs), from
// c, what the run's pooled processes cost once they all ended, and the
// processes of the cases run again alone in its evidence.
func (r *Report) SetPoolCPU(c driver.PoolCPU) {
	var s FloorSamples
	s.Add(r)
	s.AddPool(c)
	f := s.Floor()
	r.PooledCPUMs, r.PooledCPUNote = f.PooledCPUMs, f.PooledCPUNote
	r.SetRatio(r.CPUPerCaseMs)
}
