package explore_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/explore"
	"github.com/todoharness/todoharness/driver"
)

// countStarts wraps t's in-process agent to count its starts: pooled
// counts the pool's processes (their folder is a pool's; the fresh process
// a restart starts in the folders of the one it retired takes that one's
// place, and is not counted again), all every start.
func countStarts(t driver.Target, pooled, all *atomic.Int64) driver.Target {
	agent := t.InProcess
	var dirs sync.Map
	t.InProcess = func(ctx context.Context, p driver.ProcIO) int {
		all.Add(1)
		if _, seen := dirs.LoadOrStore(p.Dir, true); !seen && strings.HasPrefix(filepath.Base(p.Dir), "conform-pool-") {
			pooled.Add(1)
		}
		return agent(ctx, p)
	}
	return t
}

// poolExploration is an exploration of the reference agent with a fault
// ("" for none), pooled or not, n scenarios in batches of batch, two at
// once, nothing shrunk: what it found, and how many processes it started.
func poolExploration(t *testing.T, fault string, pool bool, n, batch int) (res *explore.Result, pooledStarts, starts int64) {
	t.Helper()
	var pooled, all atomic.Int64
	cfg := runConfig(t, countStarts(reference(fault), &pooled, &all), validator(t))
	cfg.Pool, cfg.Parallel = pool, 2
	res, err := explore.Explore(context.Background(), explore.Config{Run: cfg, Seed: 7, N: n, Batch: batch, Confirm: -1,
		ShrinkIf: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	return res, pooled.Load(), all.Load()
}

// The batches of a pooled exploration share one pool: the processes the
// first batch started serve the later batches' scenarios, instead of each
// batch starting (and ending) processes of its own.
func TestTheBatchesShareOnePool(t *testing.T) {
	res, pooled, _ := poolExploration(t, "", true, 24, 4)
	if !res.OK() || res.PooledScenarios == 0 {
		t.Fatalf("reference agent: %d failure(s), %d scenario(s) pooled: want none and some", len(res.Failures), res.PooledScenarios)
	}
	// Two slots, and a case gives up its slot while it waits: at most a
	// batch's four pooled processes, for the six batches.
	if pooled > 4 {
		t.Errorf("%d pooled processes started for %d pooled scenarios in 6 batches of 4: want at most 4, one pool for every batch", pooled, res.PooledScenarios)
	}
}

// Each batch after the first detects the dialect from the first batch's
// probe: its first scenario, when poolable, leases a pooled process as the
// others do (its initialize, the process's answer replayed, lets the
// others start), rather than starting a process of its own. Against the
// reference agent every poolable scenario ran pooled, and only the probe
// and the scenarios that need a fresh process started one of their own.
func TestEachBatchsFirstScenarioIsPooled(t *testing.T) {
	const n, batch = 24, 4
	var pooled, all atomic.Int64
	var dirs sync.Map
	target := countStarts(reference(""), &pooled, &all)
	agent := target.InProcess
	target.InProcess = func(ctx context.Context, p driver.ProcIO) int {
		dirs.Store(filepath.Base(p.Dir), true)
		return agent(ctx, p)
	}
	cfg := runConfig(t, target, validator(t))
	cfg.Pool, cfg.Parallel = true, 2
	res, err := explore.Explore(context.Background(), explore.Config{Run: cfg, Seed: 7, N: n, Batch: batch, Confirm: -1,
		ShrinkIf: func(string) bool { return false }})
	if err != nil {
		t.Fatal(err)
	}
	poolable, firsts := 0, 0
	for i := range n {
		if !(explore.Generator{Seed: 7, Policy: res.Policy}).Scenario(i).Poolable() {
			continue
		}
		poolable++
		if i >= batch && i%batch == 0 {
			firsts++
		}
		prefix := fmt.Sprintf("conform-explore-%d-", i)
		dirs.Range(func(k, _ any) bool {
			if strings.HasPrefix(k.(string), prefix) {
				t.Errorf("explore-%d, poolable, started a process of its own (%s)", i, k)
			}
			return true
		})
	}
	if firsts == 0 {
		t.Fatalf("no batch after the first starts with a poolable scenario (seed 7, %d in batches of %d): the spec tests nothing", n, batch)
	}
	if !res.OK() || res.PooledScenarios != poolable {
		t.Errorf("reference agent: %d failure(s), %d of %d poolable scenarios pooled (%d of them first of a later batch): want none, all",
			len(res.Failures), res.PooledScenarios, poolable, firsts)
	}
	t.Logf("%d processes started (%d pooled) for %d scenarios, %d poolable, %d of them first of a later batch", all.Load(), pooled.Load(), n, poolable, firsts)
}

// A pooled scenario that fails only with the signatures of failures that
// a fresh process confirmed already is not run again alone: it is counted
// under those failures as failed pooled (pooledHits, pooledKnown), never
// as a hit of its own and never as a pass. The exploration still reports
// exactly the failures, and as many scenarios a failure, as with a process
// a scenario, each failure confirmed alone.
func TestKnownPooledFailuresAreNotRunAgain(t *testing.T) {
	knownPooledFailures(t, 32, 4, 33)
}

// Against an agent whose failures are all known the pool does not stop:
// the stop rule (three pooled failures, fewer passes) counts a failure not
// run again with the passes, as it costs what a pass costs. In batches of
// sixteen, each batch a run with its own stop rule, the batches after the
// first stay pooled.
func TestThePoolGoesOnWhenTheFailuresAreKnown(t *testing.T) {
	knownPooledFailures(t, 64, 16, 50)
}

// knownPooledFailures explores n scenarios of the no-plan fault in
// batches of batch, pooled and not, and wants at least pct percent of the
// poolable ones judged pooled.
func knownPooledFailures(t *testing.T, n, batch, pct int) {
	off, _, _ := poolExploration(t, "no-plan", false, n, batch)
	on, pooled, starts := poolExploration(t, "no-plan", true, n, batch)
	if off.OK() {
		t.Fatal("no-plan: the exploration found no failure")
	}
	if a, b := allHits(t, off), allHits(t, on); !equalCounts(a, b) {
		t.Errorf("a process a scenario finds %v, pooled %v (hits and pooled hits)", a, b)
	}
	if on.Scenarios != n || on.PooledKnown == 0 {
		t.Errorf("%d scenarios, %d pooled, %d failed pooled as known failures: want %d, and some known", on.Scenarios, on.PooledScenarios, on.PooledKnown, n)
	}
	// Once the first batches confirmed the failures alone, the later
	// scenarios fail only known ones: the pool goes on, and few run again
	// (before, every pooled failure ran again, and each batch's pool
	// stopped after three of them: none was judged pooled).
	poolable := 0
	for i := range n {
		if (explore.Generator{Seed: 7, Policy: on.Policy}).Scenario(i).Poolable() {
			poolable++
		}
	}
	if 100*on.PooledScenarios < pct*poolable {
		t.Errorf("%d of %d poolable scenarios judged pooled (%d of them failing known failures), %d ran again alone: want at least %d%%; the pool stopped, or known failures ran again",
			on.PooledScenarios, poolable, on.PooledKnown, on.PoolRanAlone, pct)
	}
	t.Logf("pooled: %d processes started (%d pooled) for %d scenarios (%d poolable): %d judged pooled, %d of them known failures, %d ran again alone",
		starts, pooled, n, poolable, on.PooledScenarios, on.PooledKnown, on.PoolRanAlone)
	var b strings.Builder
	if err := on.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "failed as sessions of pooled processes with the signature of a failure already confirmed alone in a fresh process, and were not run again") ||
		!strings.Contains(b.String(), "failed pooled with its signature, already confirmed alone; not run again") {
		t.Errorf("the summary does not say what failed pooled and was not run again:\n%s", b.String())
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// BenchmarkPooledScenarios explores the reference agent in process with
// the pool on as a real agent is explored: one session a pooled process,
// two scenarios at once (Run.Parallel, a 2-core machine's), 64 scenarios
// in batches of 16 (Config.Batch's default there) and in one batch of 64:
// what the barrier between batches (each waits for its slowest scenario,
// then for the runs again alone) costs the rate.
func BenchmarkPooledScenarios(b *testing.B) {
	v, err := driver.NewSchemaValidator()
	if err != nil {
		b.Fatal(err)
	}
	for _, batch := range []int{16, 64} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			cfg := conformance.Config{Agent: reference(""), Timeout: time.Minute, Grace: 5 * time.Second, Settle: 20 * time.Millisecond,
				Parallel: 2, Pool: true, Validator: conformance.Compiled(v), TempDir: b.TempDir()}
			benchExplore(b, cfg, batch)
		})
	}
}

// In one batch, the pooled scenarios that failed with a signature no
// fresh process had confirmed when they ended (eight sessions at once a
// pooled process, so none is the first and only session of its process)
// are run again alone one per signature, not each: the others are decided
// from what those runs again alone confirmed (not run again, counted as
// failed pooled under the failure). At most as many runs again alone as
// distinct failures, and the same failures, as many scenarios each, as a
// process a scenario finds.
func TestOneRunAgainAlonePerSignatureInABatch(t *testing.T) {
	const n = 32
	explored := func(pool bool) (*explore.Result, int64) {
		var pooled, all atomic.Int64
		cfg := runConfig(t, countStarts(reference("no-plan"), &pooled, &all), validator(t))
		cfg.Pool, cfg.Parallel, cfg.Agent.PoolSessions = pool, 8, 8
		res, err := explore.Explore(context.Background(), explore.Config{Run: cfg, Seed: 7, N: n, Batch: n, Confirm: -1,
			ShrinkIf: func(string) bool { return false }})
		if err != nil {
			t.Fatal(err)
		}
		return res, all.Load()
	}
	off, _ := explored(false)
	on, starts := explored(true)
	if a, b := allHits(t, off), allHits(t, on); len(a) == 0 || !equalCounts(a, b) {
		t.Errorf("a process a scenario finds %v, pooled %v (hits and pooled hits): want the same, some", a, b)
	}
	// The same seed names the same first scenario of each failure (the
	// one shrunk), pooled or not: the lowest that showed it.
	if a, b := firstScenarios(off), firstScenarios(on); !equalCounts(a, b) {
		t.Errorf("each failure's first scenario: a process a scenario %v, pooled %v: want the same", a, b)
	}
	t.Logf("%d processes started for %d scenarios: %d judged pooled, %d of them known failures, %d ran again alone; %d distinct failures",
		starts, n, on.PooledScenarios, on.PooledKnown, on.PoolRanAlone, len(on.Failures))
	if on.PoolRanAlone > len(on.Failures) || on.PooledKnown == 0 {
		t.Errorf("%d scenarios ran again alone, %d failed pooled as known failures, of %d distinct failures in one batch: want at most one run again alone a failure, some known",
			on.PoolRanAlone, on.PooledKnown, len(on.Failures))
	}
}

// firstScenarios is each failure's first scenario (Failure.Index), by
// check and signature.
func firstScenarios(r *explore.Result) map[string]int {
	out := map[string]int{}
	for _, f := range r.Failures {
		out[f.Check+" "+f.Signature] = f.Index
	}
	return out
}

// allHits is each failure's scenarios (hits and pooled hits), by check
// and signature; a failure that no scenario confirmed alone is an error.
func allHits(t *testing.T, r *explore.Result) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, f := range r.Failures {
		out[f.Check+" "+f.Signature] = f.Hits + f.PooledHits
		if f.Hits < 1 {
			t.Errorf("pool %s: %s %s: %d hits (%d pooled): a failure reported without a scenario confirming it alone", r.Pool, f.Check, f.Signature, f.Hits, f.PooledHits)
		}
	}
	return out
}
