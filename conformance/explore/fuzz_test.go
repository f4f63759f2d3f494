package explore

import (
	"encoding/json"
	"sort"
	"strings"
	"testing"
)

// seedResult is a consistent report of shard shard of 2.
func seedResult(shard int) []byte {
	r := Result{Seed: 7, N: 10, Shard: shard, Shards: 2, Agent: "a", Policy: "single", Scenarios: 5, ToolVersion: "v1", CatalogueVersion: 3, Pool: "on",
		Failures: []Failure{{Check: "TW-PLAN-1", Hits: 2, Seed: 7, Index: shard + 2, Reason: "r", CaseYAML: "id: x\n"}}}
	b, _ := json.Marshal(r)
	return b
}

// ParseResult (the reader of explore.json) refuses what an exploration
// cannot have written, each time naming the file and what is wrong.
func TestParseResultRefusesInconsistentReports(t *testing.T) {
	for name, mut := range map[string]func(r *Result){
		"shard 8 of 2":          func(r *Result) { r.Shard = 7 },
		"no shard count":        func(r *Result) { r.Shards = 0 },
		"a negative shard":      func(r *Result) { r.Shard = -1 },
		"negative scenarios":    func(r *Result) { r.Scenarios = -5 },
		"negative not judged":   func(r *Result) { r.NotJudged = -1 },
		"more than its share":   func(r *Result) { r.Scenarios = 6 },
		"no hits":               func(r *Result) { r.Failures[0].Hits = 0 },
		"more hits than judged": func(r *Result) { r.Failures[0].Hits = 6 },
		"another seed":          func(r *Result) { r.Failures[0].Seed = 8 },
		"another shard's index": func(r *Result) { r.Failures[0].Index = 3 },
		"an index past n":       func(r *Result) { r.Failures[0].Index = 12 },
		"a failure twice":       func(r *Result) { r.Failures = append(r.Failures, r.Failures[0]) },
		"no check":              func(r *Result) { r.Failures[0].Check = "" },
		"reproduced > reruns":   func(r *Result) { r.Failures[0].Reruns, r.Failures[0].Reproduced = 1, 2 },
		"negative scenariosMs":  func(r *Result) { r.ScenariosMs = -1 },
		"negative cpuMs":        func(r *Result) { r.CPUMs = -1 },
		"cpuMs past a lifetime": func(r *Result) { r.CPUMs = maxCostMs + 1 },
		"a negative rate":       func(r *Result) { r.ScenariosPerMinute = -1 },
		"an unknown pool mode":  func(r *Result) { r.Pool = "yes" },
		"pooled hits unknown":   func(r *Result) { r.Failures[0].PooledHits = 1 },
		"pooled hits > known":   func(r *Result) { r.PooledScenarios, r.PooledKnown, r.Failures[0].PooledHits = 2, 2, 3 },
		"hits+pooled > judged":  func(r *Result) { r.PooledScenarios, r.PooledKnown, r.Failures[0].PooledHits = 4, 4, 4 },
		"known > pooled":        func(r *Result) { r.PooledScenarios, r.PooledKnown = 1, 2 },
		"pooled+alone > judged": func(r *Result) { r.PooledScenarios, r.PoolRanAlone = 3, 3 },
		"negative pooled":       func(r *Result) { r.PooledScenarios = -1 },
		"negative floor":        func(r *Result) { r.FloorCPUMs, r.FloorSessions = -1, 3 },
		"negative pooled CPU":   func(r *Result) { r.PooledCPUMs = -1 },
		"pooled CPU past life":  func(r *Result) { r.PooledCPUMs = maxCostMs + 1 },
		"negative pooled ratio": func(r *Result) { r.PooledCPUMs, r.FloorCPUMs, r.FloorSessions, r.PooledToFloor = 50, 40, 3, -1 },
		"ratio without a floor": func(r *Result) { r.PooledCPUMs, r.PooledToFloor = 50, 1.25 },
		"ratio without the CPU": func(r *Result) { r.FloorCPUMs, r.FloorSessions, r.PooledToFloor = 40, 3, 1.25 },
		"pooled CPU and a note": func(r *Result) { r.PooledCPUMs, r.PooledCPUNote = 50, "not measured: no /proc" },
		"pooled CPU, pool off":  func(r *Result) { r.PooledCPUMs, r.Pool = 50, "off" },
	} {
		t.Run(name, func(t *testing.T) {
			var r Result
			if err := json.Unmarshal(seedResult(0), &r); err != nil {
				t.Fatal(err)
			}
			if _, err := ParseResult(seedResult(0), "x/explore.json"); err != nil {
				t.Fatalf("the consistent report: %v", err)
			}
			measured := r
			measured.PooledScenarios, measured.FloorCPUMs, measured.FloorSessions, measured.PooledCPUMs, measured.PooledToFloor = 4, 40, 3, 50, 1.25
			mb, _ := json.Marshal(measured)
			if _, err := ParseResult(mb, "x/explore.json"); err != nil {
				t.Fatalf("the consistent report with a floor and a pooled scenario's CPU: %v", err)
			}
			mut(&r)
			b, _ := json.Marshal(r)
			if _, err := ParseResult(b, "x/explore.json"); err == nil || !strings.Contains(err.Error(), "x/explore.json") {
				t.Fatalf("ParseResult = %v, want a refusal naming the file", err)
			}
		})
	}
}

// twoShards reads the reports of the two shards of one run, from
// a/explore.json and b/explore.json.
func twoShards(t *testing.T) (a, b *Result) {
	t.Helper()
	a, err := ParseResult(seedResult(0), "a/explore.json")
	if err != nil {
		t.Fatal(err)
	}
	if b, err = ParseResult(seedResult(1), "b/explore.json"); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// Merge refuses shards that are not of one run, naming the shard files.
func TestMergeRefusesShardsOfOtherRuns(t *testing.T) {
	for name, mut := range map[string]func(r *Result){
		"another agent":             func(r *Result) { r.Agent = "b" },
		"another policy":            func(r *Result) { r.Policy = "parallel" },
		"another tool version":      func(r *Result) { r.ToolVersion = "v2" },
		"another catalogue version": func(r *Result) { r.CatalogueVersion = 4 },
		"no versions (older)":       func(r *Result) { r.ToolVersion, r.CatalogueVersion = "", 0 },
		"another pool mode":         func(r *Result) { r.Pool = "off" },
		"the same shard twice":      func(r *Result) { r.Shard, r.Failures[0].Index = 0, 2 },
	} {
		t.Run(name, func(t *testing.T) {
			a, b := twoShards(t)
			if _, err := Merge([]*Result{a, b}); err != nil {
				t.Fatalf("the two shards of one run: %v", err)
			}
			mut(b)
			if _, err := Merge([]*Result{a, b}); err == nil || !strings.Contains(err.Error(), "b/explore.json") {
				t.Fatalf("Merge = %v, want a refusal naming b/explore.json", err)
			}
		})
	}
}

// The merged exploration's rate and CPU are those of one machine running
// every shard in turn: the times add up, as the scenarios do; a shard
// whose CPU time was not read leaves the CPU out.
func TestMergeAddsTheShardsCosts(t *testing.T) {
	a, b := twoShards(t)
	a.cost(30_000, 4_000, true)
	b.cost(10_000, 1_000, true)
	m, err := Merge([]*Result{a, b})
	if err != nil {
		t.Fatal(err)
	}
	if m.ScenariosMs != 40_000 || m.ScenariosPerMinute != 15 || m.CPUMs != 5_000 || m.CPUPerScenarioMs != 500 {
		t.Errorf("merged %d scenarios: %d ms, %g a minute, %d ms CPU, %g ms a scenario; want 40000 ms, 15 a minute, 5000 ms, 500 ms",
			m.Scenarios, m.ScenariosMs, m.ScenariosPerMinute, m.CPUMs, m.CPUPerScenarioMs)
	}
	b.cost(10_000, 0, false)
	if m, err = Merge([]*Result{a, b}); err != nil {
		t.Fatal(err)
	}
	if m.CPUMs != 0 || m.CPUPerScenarioMs != 0 || m.ScenariosPerMinute != 15 {
		t.Errorf("a shard without CPU: merged %d ms CPU, %g ms a scenario, %g a minute; want no CPU, 15 a minute", m.CPUMs, m.CPUPerScenarioMs, m.ScenariosPerMinute)
	}
}

// FuzzParseResult is the reader of explore.json: any bytes are refused
// with an error naming the file, or read as a report whose counts are
// consistent (validate) and that encodes and reads back the same.
func FuzzParseResult(f *testing.F) {
	f.Add(seedResult(0))
	f.Add(seedResult(1))
	f.Add([]byte(`{"seed":1,"shards":2,"shard":7}`))
	f.Add([]byte(`{"seed":1,"shards":1,"scenarios":-5}`))
	f.Add([]byte(`{"shards":1,"failures":[{"check":"X","hits":1}]}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseResult(data, "fuzz/explore.json")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz/explore.json") {
				t.Fatalf("the error does not name the file: %v", err)
			}
			return
		}
		if err := r.validate(); err != nil {
			t.Fatalf("read an inconsistent report: %v", err)
		}
		b, err := EncodeResult(r)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ParseResult(b, "again"); err != nil {
			t.Fatalf("the report read does not read back: %v\n%s", err, b)
		}
	})
}

// FuzzMerge is the merge of the explorations of conform merge: two shard
// reports from any bytes either are refused (by the reader or by Merge,
// naming a shard's file) or merge into a consistent report whose
// scenarios and hits are the shards' sums, each failure (check and
// signature) once, in order.
func FuzzMerge(f *testing.F) {
	f.Add(seedResult(0), seedResult(1))
	f.Add(seedResult(0), seedResult(0))
	f.Add(seedResult(1), []byte(`{"seed":7,"n":10,"shard":0,"shards":2,"agent":"a","policy":"single","toolVersion":"v1","catalogueVersion":3,"scenarios":5,"failures":[{"check":"TW-LOAD-1","hits":5,"seed":7,"index":0}]}`))
	f.Add(seedResult(1), []byte(`{"seed":7,"n":10,"shard":0,"shards":2,"agent":"a","policy":"single","toolVersion":"v1","catalogueVersion":3,"pool":"on","scenarios":5,"pooledScenarios":3,"poolRanAlone":1,"pooledKnown":2,"failures":[{"check":"TW-PLAN-1","hits":2,"pooledHits":2,"seed":7,"index":0}]}`))
	f.Fuzz(func(t *testing.T, a, b []byte) {
		ra, err := ParseResult(a, "a/explore.json")
		if err != nil {
			return
		}
		rb, err := ParseResult(b, "b/explore.json")
		if err != nil {
			return
		}
		m, err := Merge([]*Result{ra, rb})
		if err != nil {
			if !strings.Contains(err.Error(), "explore.json") && !strings.Contains(err.Error(), "shards given") {
				t.Fatalf("the refusal names no shard: %v", err)
			}
			return
		}
		if err := m.validate(); err != nil {
			t.Fatalf("the merged report is inconsistent: %v", err)
		}
		if m.Scenarios != ra.Scenarios+rb.Scenarios || m.NotJudged != ra.NotJudged+rb.NotJudged {
			t.Fatalf("scenarios %d+%d merged into %d", ra.Scenarios, rb.Scenarios, m.Scenarios)
		}
		if m.PooledKnown != ra.PooledKnown+rb.PooledKnown || m.PooledScenarios != ra.PooledScenarios+rb.PooledScenarios || m.PoolRanAlone != ra.PoolRanAlone+rb.PoolRanAlone {
			t.Fatalf("pooled counts %+v and %+v merged into %+v", ra, rb, m)
		}
		hits, pooled := map[string]int{}, map[string]int{}
		for _, r := range []*Result{ra, rb} {
			for _, f := range r.Failures {
				hits[failureKey(f.Check, f.Signature)] += f.Hits
				pooled[failureKey(f.Check, f.Signature)] += f.PooledHits
			}
		}
		if !sort.SliceIsSorted(m.Failures, func(i, j int) bool { return m.Failures[i].Check < m.Failures[j].Check }) || len(m.Failures) != len(hits) {
			t.Fatalf("merged failures %+v, from %v", m.Failures, hits)
		}
		for _, f := range m.Failures {
			if k := failureKey(f.Check, f.Signature); f.Hits != hits[k] || f.PooledHits != pooled[k] {
				t.Fatalf("%s %s: %d hits and %d pooled merged, the shards had %d and %d", f.Check, f.Signature, f.Hits, f.PooledHits, hits[k], pooled[k])
			}
		}
	})
}
