package explore_test

import (
	"context"
	"math"
	"testing"

	"github.com/todoharness/todoharness/cmd/todoharness/cli"
	"github.com/todoharness/todoharness/conformance/explore"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/internal/testutil/selfexec"
)

// Against an agent process, pooled, one session at a time a process, the
// exploration's floor is the median of its batches' sessions after their
// process's first, and explore.json puts the CPU a scenario next to it.
func TestTheExplorationGivesTheFloorOfAnAgentProcess(t *testing.T) {
	target := driver.Target{Name: "reference process", Command: append([]string{selfexec.Path()}, cli.ReferenceAgentArgs("todoharness")[1:]...),
		Env: selfexec.Environ("todoharness")}
	cfg := runConfig(t, target, validator(t))
	cfg.Pool, cfg.Parallel = true, 1
	res, err := explore.Explore(context.Background(), explore.Config{Run: cfg, Seed: 3, N: 24, Batch: 24, ShrinkRuns: 1, Confirm: -1})
	if err != nil {
		t.Fatal(err)
	}
	// 24 scenarios, one at a time (two open at once): those that need no
	// process of their own run as sessions of a few pooled processes.
	if res.FloorSessions < 1 || res.FloorSessions > 23 || res.FloorNote != "" {
		t.Fatalf("floor %+v: want the median of 1 to 23 sessions", res.Floor)
	}
	want := 0.0
	if res.FloorCPUMs > 0 {
		want = math.Round(res.CPUPerScenarioMs/res.FloorCPUMs*100) / 100
	}
	if res.CPUToFloor != want {
		t.Errorf("cpuToFloor %g, want %g (%g ms a scenario, floor %g ms)", res.CPUToFloor, want, res.CPUPerScenarioMs, res.FloorCPUMs)
	}
	// What a pooled scenario cost its agent: the pooled processes' lives
	// and the runs again alone over the pooled scenarios, beside the floor.
	if res.PooledCPUMs <= 0 || res.PooledCPUNote != "" {
		t.Errorf("pooledCpuMs %g, note %q: want the CPU a pooled scenario cost the agent", res.PooledCPUMs, res.PooledCPUNote)
	}
	if want := 0.0; res.FloorCPUMs > 0 {
		want = math.Round(res.PooledCPUMs/res.FloorCPUMs*100) / 100
		if res.PooledToFloor != want {
			t.Errorf("pooledToFloor %g, want %g", res.PooledToFloor, want)
		}
	}
	t.Logf("floor %+v, %g ms of CPU a scenario", res.Floor, res.CPUPerScenarioMs)
}
