package conformance

import (
	"context"
	"encoding/json"
	"runtime"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/todoharness/todoharness/driver"
)

// A case gives up its parallel slot when its last step is answered: with
// one slot and an agent that outstays its stdin (it waits out the grace
// and is stopped by SIGTERM), the next case starts while the previous one
// is still waiting for its agent to exit. The exit is still observed and
// judged (ACP-EXIT-1 fails), and each case's time splits into the agent's
// and the waiting.
func TestSlotFreedWhenTheLastStepIsAnswered(t *testing.T) {
	var cases []*Case
	for _, c := range builtinCases(t) {
		if c.ID == "plan-basic" || c.ID == "replace" {
			cases = append(cases, c)
		}
	}
	rep := runFake(t, "slow-exit", func(c *Config) {
		c.Cases, c.Parallel, c.Grace = cases, 1, 500*time.Millisecond
	})
	if c, _ := rep.Check("ACP-EXIT-1"); c.Outcome != Fail {
		t.Errorf("ACP-EXIT-1 %s: the exit was not judged", c.Outcome)
	}
	evs := make([]*Evidence, 0, len(rep.Cases))
	for _, cr := range rep.Cases {
		ev := cr.Evidence()
		if ev.Answered <= 0 || ev.ExitWait <= 0 {
			t.Errorf("%s: answered at %s, waited %s for the exit", cr.ID, ev.Answered, ev.ExitWait)
		}
		if cr.Waiting <= 0 || cr.Agent+cr.Waiting != cr.Duration {
			t.Errorf("%s: agent %s + waiting %s != %s", cr.ID, cr.Agent, cr.Waiting, cr.Duration)
		}
		evs = append(evs, ev)
	}
	if len(evs) != 3 {
		t.Fatalf("%d cases, want the probe and 2", len(evs))
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].Started.Before(evs[j].Started) })
	for i := 1; i < len(evs); i++ {
		prev := evs[i-1]
		if !evs[i].Started.Before(prev.Started.Add(prev.Duration)) {
			t.Errorf("%s started after %s ended: its slot was held through the exit", evs[i].Case.ID, prev.Case.ID)
		}
		if !evs[i].Started.After(prev.Started.Add(prev.Answered)) {
			t.Errorf("%s started before %s's last step was answered, with one slot", evs[i].Case.ID, prev.Case.ID)
		}
	}
	b, err := json.Marshal(rep.Cases[0])
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["agentMs"]; !ok {
		t.Errorf("no agentMs in the JSON report: %s", b)
	}
	if _, ok := m["waitingMs"]; !ok {
		t.Errorf("no waitingMs in the JSON report: %s", b)
	}
}

// With one slot the cases after the first start one at a time, the one with
// the most steps first (a long case started last would run alone at the
// end, the other slots idle), the catalogue's order among equals.
func TestLongestCaseTakesTheFirstSlot(t *testing.T) {
	t.Parallel()
	short, long, mid := stubCase(false), stubCase(false), stubCase(false)
	short.ID, long.ID, mid.ID = "short", "long", "mid"
	mid.Steps = append(mid.Steps, driver.Step{Op: driver.OpNewSession})
	long.Steps = append(long.Steps, driver.Step{Op: driver.OpNewSession}, driver.Step{Op: driver.OpNewSession})
	if got := longestFirst([]*Case{short, long, mid}); !slices.Equal(got, []int{1, 2, 0}) {
		t.Errorf("longestFirst(short, long, mid) = %v, want [1 2 0]", got)
	}
	first := stubCase(false)
	first.ID = "first"
	tg := stubTarget(func(_ context.Context, p driver.ProcIO) int { stubServe(p, nil); return 0 })
	cfg := Config{Agent: tg, Cases: []*Case{first, short, mid, long}, Dialect: driver.DialectTodoWrite, Timeout: time.Minute,
		Grace: 10 * time.Second, Settle: testSettle, Validator: Compiled(sharedValidator(t)), Parallel: 1}
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	var started []string
	evs := make([]*Evidence, 0, len(rep.Cases))
	for _, cr := range rep.Cases {
		evs = append(evs, cr.Evidence())
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Started.Before(evs[j].Started) })
	for _, ev := range evs {
		started = append(started, ev.Case.ID)
	}
	if want := []string{"first", "long", "mid", "short"}; !slices.Equal(started, want) {
		t.Errorf("cases started in the order %v, want %v", started, want)
	}
}

// An agent in process starts no process: by default every case runs at
// once (a process agent gets one case per CPU).
func TestInProcessRunsEveryCaseAtOnce(t *testing.T) {
	t.Parallel()
	var cases []*Case
	for _, id := range []string{"a", "b", "c"} {
		c := stubCase(false)
		c.ID = id
		cases = append(cases, c)
	}
	tg := stubTarget(func(_ context.Context, p driver.ProcIO) int { stubServe(p, nil); return 0 })
	rep, err := Run(context.Background(), Config{Agent: tg, Cases: cases, Dialect: driver.DialectTodoWrite, Timeout: time.Minute,
		Grace: 10 * time.Second, Settle: testSettle, Validator: Compiled(sharedValidator(t))})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Parallel != len(cases)+1 {
		t.Errorf("in process: %d cases at once, want every case (%d)", rep.Parallel, len(cases)+1)
	}
	if got := defaultParallel(driver.Target{Command: []string{"agent"}}, 3); got != runtime.NumCPU() {
		t.Errorf("a process agent: %d cases at once, want one per CPU (%d)", got, runtime.NumCPU())
	}
}
