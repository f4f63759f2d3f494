package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/explore"
	"github.com/todoharness/todoharness/internal/testutil"
)

// savedRun is the evidence of a saved run whose verdict is FAIL (the
// reference agent accepting duplicate tasks), as --out leaves it.
func savedRun(t *testing.T) []*conformance.Evidence {
	t.Helper()
	evs, err := conformance.ReadEvidenceArchive(filepath.Join(testutil.RepoRoot(), "conformance", "testdata", "evidence", "bridge-accept-duplicates.jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	return evs
}

// writeShard writes evs as --out does into dir: a folder per case.
func writeShard(t *testing.T, dir string, evs []*conformance.Evidence) {
	t.Helper()
	for _, ev := range evs {
		d := filepath.Join(dir, ev.Case.ID)
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := conformance.WriteEvidence(d, ev); err != nil {
			t.Fatal(err)
		}
	}
}

// twoShards splits the saved run as --shard 1/2 and 2/2 would: every
// other case, the probe in both.
func twoShards(t *testing.T, dir string) (a, b string) {
	t.Helper()
	a, b = filepath.Join(dir, "shard-1"), filepath.Join(dir, "shard-2")
	var sa, sb []*conformance.Evidence
	for k, ev := range savedRun(t) {
		ea, eb := *ev, *ev
		ea.Run.Shard, eb.Run.Shard = "1/2", "2/2"
		if ev.Case.Probe || k%2 == 0 {
			sa = append(sa, &ea)
		}
		if ev.Case.Probe || k%2 == 1 {
			sb = append(sb, &eb)
		}
	}
	writeShard(t, a, sa)
	writeShard(t, b, sb)
	return a, b
}

// secondShardAs is twoShards with the second shard's evidence changed by
// mut.
func secondShardAs(t *testing.T, dir string, mut func(*conformance.Evidence)) []string {
	t.Helper()
	a, b := twoShards(t, dir)
	evs, err := conformance.ReadEvidenceDir(b)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		mut(ev)
	}
	writeShard(t, b, evs)
	return []string{a, b}
}

// writeResult writes an exploration report into dir.
func writeResult(t *testing.T, dir string, r *explore.Result) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := explore.WriteResult(filepath.Join(dir, explore.ResultFile), r); err != nil {
		t.Fatal(err)
	}
}

// The shards of a saved run merge into its verdict (FAIL), whichever
// order the folders are given in.
func TestMergeOfTwoShardsOfASavedRun(t *testing.T) {
	a, b := twoShards(t, t.TempDir())
	for _, dirs := range [][]string{{a, b}, {b, a}} {
		if code, out := conformRun(t, append([]string{"conform", "merge"}, dirs...)...); code != 1 || !strings.Contains(out, "FAIL") {
			t.Errorf("merge %v: exit %d, want 1 (FAIL)\n%s", dirs, code, out)
		}
	}
}

// conform merge refuses, naming the file or the folders, every input that
// is not the shards of one run, and then writes no report and prints no
// verdict.
func TestMergeRefusesWhatIsNotTheShardsOfOneRun(t *testing.T) {
	agent := savedRun(t)[0].Run.Agent
	result := func(mut func(*explore.Result)) *explore.Result {
		r := &explore.Result{Seed: 1, N: 4, Shard: 0, Shards: 2, Agent: agent, Policy: "single", Scenarios: 2}
		if mut != nil {
			mut(r)
		}
		return r
	}
	for name, tc := range map[string]struct {
		setup func(t *testing.T, dir string) []string
		want  []string
	}{
		// Issue 42, 6: the shard's evidence was dropped and FAIL became
		// INCOMPLETE.
		"a corrupt evidence.json beside explore.json": {func(t *testing.T, dir string) []string {
			a, b := twoShards(t, dir)
			writeResult(t, a, result(nil))
			writeResult(t, b, result(func(r *explore.Result) { r.Shard = 1 }))
			if err := os.WriteFile(filepath.Join(a, "empty-list", conformance.EvidenceFile), []byte(`{"format": 1, "case": `), 0o644); err != nil {
				t.Fatal(err)
			}
			return []string{a, b}
		}, []string{filepath.Join("shard-1", "empty-list", conformance.EvidenceFile)}},
		"an evidence.json that is a FIFO beside explore.json": {func(t *testing.T, dir string) []string {
			a, b := twoShards(t, dir)
			writeResult(t, a, result(nil))
			writeResult(t, b, result(func(r *explore.Result) { r.Shard = 1 }))
			p := filepath.Join(a, "empty-list", conformance.EvidenceFile)
			os.Remove(p)
			if err := syscall.Mkfifo(p, 0o600); err != nil {
				t.Skipf("no FIFOs here: %v", err)
			}
			return []string{a, b}
		}, []string{"a FIFO", filepath.Join("shard-1", "empty-list", conformance.EvidenceFile)}},
		// Issue 42, 7: the first folder won silently.
		"the same cases in two folders": {func(t *testing.T, dir string) []string {
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			writeShard(t, a, savedRun(t))
			writeShard(t, b, savedRun(t))
			return []string{a, b}
		}, []string{"is in", "a folder given twice"}},
		// Issue 42, 8.
		"shards of two agents": {func(t *testing.T, dir string) []string {
			return secondShardAs(t, dir, func(ev *conformance.Evidence) { ev.Run.Agent = "another agent" })
		}, []string{`agent "another agent"`, "not the shards of one run"}},
		"shards of two tool versions": {func(t *testing.T, dir string) []string {
			return secondShardAs(t, dir, func(ev *conformance.Evidence) { ev.Run.ToolVersion = "v0.0.1" })
		}, []string{`tool version "v0.0.1"`}},
		"shards of two shard counts": {func(t *testing.T, dir string) []string {
			return secondShardAs(t, dir, func(ev *conformance.Evidence) { ev.Run.Shard = "2/3" })
		}, []string{`shard count "3"`}},
		"explorations of two catalogue versions": {func(t *testing.T, dir string) []string {
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			writeResult(t, a, result(nil))
			writeResult(t, b, result(func(r *explore.Result) { r.Shard, r.CatalogueVersion = 1, 99 }))
			return []string{a, b}
		}, []string{`catalogue version "99"`}},
		"explorations of two agents": {func(t *testing.T, dir string) []string {
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			writeResult(t, a, result(nil))
			writeResult(t, b, result(func(r *explore.Result) { r.Shard, r.Agent = 1, "another agent" }))
			return []string{a, b}
		}, []string{`agent "another agent"`}},
		"shard 8/2": {func(t *testing.T, dir string) []string {
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			writeResult(t, a, result(nil))
			writeResult(t, b, result(func(r *explore.Result) { r.Shard = 7 }))
			return []string{a, b}
		}, []string{filepath.Join("b", explore.ResultFile), "shard 7 of 2"}},
		"a negative scenario count": {func(t *testing.T, dir string) []string {
			a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
			writeResult(t, a, result(nil))
			writeResult(t, b, result(func(r *explore.Result) { r.Shard, r.Scenarios = 1, -5 }))
			return []string{a, b}
		}, []string{filepath.Join("b", explore.ResultFile), "negative"}},
		// The catalogue part judges, the exploration part refuses: the
		// old code wrote --json and printed FAIL before refusing.
		"evidence and a refused exploration": {func(t *testing.T, dir string) []string {
			a, b := twoShards(t, dir)
			writeResult(t, a, result(nil))
			writeResult(t, b, result(nil))
			return []string{a, b}
		}, []string{"shard 1/2 given twice"}},
		// Issue 42, 9.
		"explore.json a link to /dev/zero": {func(t *testing.T, dir string) []string {
			a := filepath.Join(dir, "a")
			writeShard(t, a, savedRun(t))
			if err := os.Symlink("/dev/zero", filepath.Join(a, explore.ResultFile)); err != nil {
				t.Fatal(err)
			}
			return []string{a}
		}, []string{filepath.Join("a", explore.ResultFile), "not a regular file"}},
		"explore.json larger than its limit": {func(t *testing.T, dir string) []string {
			a := filepath.Join(dir, "a")
			writeShard(t, a, savedRun(t))
			if err := os.WriteFile(filepath.Join(a, explore.ResultFile), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(filepath.Join(a, explore.ResultFile), explore.MaxResultBytes+1); err != nil {
				t.Fatal(err)
			}
			return []string{a}
		}, []string{filepath.Join("a", explore.ResultFile), "too large"}},
		// Issue 42, 14: a folder a run could not write whole.
		"a folder marked incomplete": {func(t *testing.T, dir string) []string {
			a, b := twoShards(t, dir)
			if err := os.WriteFile(filepath.Join(b, conformance.IncompleteFile), nil, 0o644); err != nil {
				t.Fatal(err)
			}
			return []string{a, b}
		}, []string{"was not written whole", conformance.IncompleteFile}},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			dirs := tc.setup(t, dir)
			jsonOut := filepath.Join(dir, "merged.json")
			code, out := conformRun(t, append([]string{"conform", "merge", "--json", jsonOut, "--explore-json", filepath.Join(dir, "x.json")}, dirs...)...)
			if code != 2 {
				t.Fatalf("exit %d, want 2\n%s", code, out)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("the error does not say %q:\n%s", w, out)
				}
			}
			if _, err := os.Stat(jsonOut); err == nil {
				t.Errorf("a refused merge wrote --json")
			}
			if strings.Contains(out, "FAIL") || strings.Contains(out, "PASS:") || strings.Contains(out, "INCOMPLETE:") {
				t.Errorf("a refused merge printed a verdict:\n%s", out)
			}
		})
	}
}

// --cases reads each case.yaml as a regular file of at most
// conformance.MaxCaseBytes (issue 42, 10): a link to /dev/zero and a
// file over the limit are refused, naming the file, before any agent
// starts (the FIFO: TestFIFOInputsEndOnSIGTERM).
func TestConformCasesRefusesWhatIsNotACaseFile(t *testing.T) {
	for name, setup := range map[string]func(t *testing.T, p string){
		"a link to /dev/zero": func(t *testing.T, p string) {
			if err := os.Symlink("/dev/zero", p); err != nil {
				t.Fatal(err)
			}
		},
		"larger than the limit": func(t *testing.T, p string) {
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(p, conformance.MaxCaseBytes+1); err != nil {
				t.Fatal(err)
			}
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "x"), 0o755); err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, "x", conformance.CaseFile)
			setup(t, p)
			code, out := conformRun(t, "conform", "-q", "--in-process", "--no-builtin", "--cases", dir)
			if code != 2 || !strings.Contains(out, p) {
				t.Fatalf("exit %d, want 2 naming %s\n%s", code, p, out)
			}
		})
	}
}
