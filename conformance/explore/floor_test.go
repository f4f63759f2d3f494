package explore_test

import (
	"context"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/explore"
)

// Where a session's CPU cannot be read, the exploration gives no floor and
// says why, in explore.json and its summary: with the pool off, and with
// the agent in the runner's process (its CPU is the runner's); a merge of
// shards gives none either (medians do not add up).
func TestTheExplorationSaysWhyThereIsNoFloor(t *testing.T) {
	v := validator(t)
	var shards []*explore.Result
	for _, tc := range []struct {
		pool             bool
		note, pooledNote string
	}{{false, "pool off: every scenario had a process of its own", ""}, {true, "the agent runs in the runner's process", "the agent runs in the runner's process"}} {
		cfg := runConfig(t, reference(""), v)
		cfg.Pool, cfg.Parallel = tc.pool, 2
		res, err := explore.Explore(context.Background(), explore.Config{Run: cfg, Seed: 3, N: 4, Shards: 2, Shard: len(shards)})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := res.WriteSummary(&b); err != nil {
			t.Fatal(err)
		}
		if res.FloorSessions != 0 || res.FloorCPUMs != 0 || res.CPUToFloor != 0 || !strings.Contains(res.FloorNote, tc.note) ||
			!strings.Contains(b.String(), "explore: floor: - ("+res.FloorNote+")") {
			t.Errorf("pool %v: floor %+v, want none, saying %q; summary:\n%s", tc.pool, res.Floor, tc.note, b.String())
		}
		// Nor the CPU a pooled scenario cost its agent: the pool off has
		// none, and the agent in process has no CPU of its own.
		if res.PooledCPUMs != 0 || res.PooledToFloor != 0 || !strings.Contains(res.PooledCPUNote, tc.pooledNote) || (tc.pooledNote == "") != (res.PooledCPUNote == "") ||
			(tc.pooledNote != "" && !strings.Contains(b.String(), "; the CPU a pooled scenario cost its agent: - ("+res.PooledCPUNote+")\n")) {
			t.Errorf("pool %v: pooledCpuMs %g, pooledToFloor %g, note %q: want none, saying %q; summary:\n%s", tc.pool, res.PooledCPUMs, res.PooledToFloor, res.PooledCPUNote, tc.pooledNote, b.String())
		}
		res.Pool = conformance.PoolOn // (the two shards ran in different modes)
		shards = append(shards, res)
	}
	merged, err := explore.Merge(shards)
	if err != nil {
		t.Fatal(err)
	}
	if merged.FloorSessions != 0 || !strings.HasPrefix(merged.FloorNote, "not merged") {
		t.Errorf("merged: floor %+v, want none, saying it is not merged", merged.Floor)
	}
	if merged.PooledCPUMs != 0 || !strings.HasPrefix(merged.PooledCPUNote, "not merged") {
		t.Errorf("merged: pooledCpuMs %g, note %q: want none, saying it is not merged", merged.PooledCPUMs, merged.PooledCPUNote)
	}
}
