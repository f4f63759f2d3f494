package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/conformance/explore"
)

func TestParseShard(t *testing.T) {
	for _, tc := range []struct {
		in   string
		i, n int
		bad  bool
	}{{"", 0, 1, false}, {"1/1", 0, 1, false}, {"3/4", 2, 4, false}, {"0/4", 0, 0, true}, {"5/4", 0, 0, true}, {"2", 0, 0, true}, {"a/b", 0, 0, true}} {
		i, n, err := parseShard(tc.in)
		if (err != nil) != tc.bad || (!tc.bad && (i != tc.i || n != tc.n)) {
			t.Errorf("parseShard(%q) = %d, %d, %v", tc.in, i, n, err)
		}
	}
}

// conformRun runs the command line and returns its exit status and output.
func conformRun(t *testing.T, args ...string) (int, string) {
	t.Helper()
	var out bytes.Buffer
	code := Run(context.Background(), args, strings.NewReader(""), &out, &out)
	return code, out.String()
}

// verdicts is what a catalogue report decides: the verdict, and each
// check's outcome on each case.
func verdicts(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Verdict string `json:"verdict"`
		Checks  []struct {
			ID      string `json:"id"`
			Outcome string `json:"outcome"`
			Cases   []struct {
				Case    string `json:"case"`
				Outcome string `json:"outcome"`
			} `json:"cases"`
		} `json:"checks"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	out := map[string]any{"verdict": r.Verdict}
	for _, c := range r.Checks {
		cs := map[string]string{}
		for _, v := range c.Cases {
			cs[v.Case] = v.Outcome
		}
		out[c.ID] = []any{c.Outcome, cs}
	}
	return out
}

// The shards of a run, merged, give the unsharded run's verdict and
// exploration: the same check outcomes on the same cases, the same
// failures with the same hits, first scenarios and shrunk cases.
func TestFourShardsMergeIntoTheUnshardedRun(t *testing.T) {
	dir := t.TempDir()
	common := []string{"conform", "-q", "--in-process", "--env", "TODOHARNESS_FAULT=accept-duplicates", "--settle", "20ms", "--parallel", "16",
		"--case", "reject-duplicate", "--case", "reject-empty", "--explore", "12", "--seed", "1"}
	whole := filepath.Join(dir, "whole")
	if code, out := conformRun(t, append(common, "--out", whole, "--json", filepath.Join(dir, "whole.json"))...); code != 1 {
		t.Fatalf("unsharded run: exit %d, want 1\n%s", code, out)
	}
	var shards []string
	for i := 1; i <= 4; i++ {
		d := filepath.Join(dir, "shard-"+strconv.Itoa(i))
		shards = append(shards, d)
		if code, out := conformRun(t, append(common, "--shard", strconv.Itoa(i)+"/4", "--out", d)...); code != 0 && code != 1 && code != 3 { // a shard may hold no failing case, or not every check
			t.Fatalf("shard %d: exit %d\n%s", i, code, out)
		}
	}
	merged, mergedExplore := filepath.Join(dir, "merged.json"), filepath.Join(dir, "merged-explore.json")
	if code, out := conformRun(t, append([]string{"conform", "merge", "--json", merged, "--explore-json", mergedExplore}, shards...)...); code != 1 {
		t.Fatalf("merge: exit %d, want 1\n%s", code, out)
	}
	if w, m := verdicts(t, filepath.Join(dir, "whole.json")), verdicts(t, merged); !reflect.DeepEqual(w, m) {
		t.Errorf("merged catalogue report differs:\nwhole  %v\nmerged %v", w, m)
	}
	w, err := explore.ReadResult(filepath.Join(whole, explore.ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	m, err := explore.ReadResult(mergedExplore)
	if err != nil {
		t.Fatal(err)
	}
	if w.Scenarios != 12 || m.Scenarios != w.Scenarios || len(w.Failures) == 0 || len(m.Failures) != len(w.Failures) {
		t.Fatalf("scenarios %d and %d, failures %d and %d", w.Scenarios, m.Scenarios, len(w.Failures), len(m.Failures))
	}
	for k := range w.Failures {
		a, b := w.Failures[k], m.Failures[k]
		// The scenarios that showed it, whether a fresh process confirmed
		// it on each (hits) or it was seen pooled once confirmed
		// (pooledHits): which of them ran alone follows how the sessions
		// met in the pool, not the seed.
		if a.Check != b.Check || a.Hits+a.PooledHits != b.Hits+b.PooledHits || a.Index != b.Index || a.CaseYAML != b.CaseYAML {
			t.Errorf("failure %d: whole %s hits %d+%d index %d, merged %s hits %d+%d index %d\n%s\n%s", k, a.Check, a.Hits, a.PooledHits, a.Index, b.Check, b.Hits, b.PooledHits, b.Index, a.CaseYAML, b.CaseYAML)
		}
	}
	// The shrunk case, run with --cases, fails the same check.
	code, out := conformRun(t, "conform", "-q", "--in-process", "--env", "TODOHARNESS_FAULT=accept-duplicates", "--settle", "20ms",
		"--no-builtin", "--cases", filepath.Join(whole, explore.FailuresDir), "--check", "TW-VALID-DUP")
	if code != 1 || !strings.Contains(out, "TW-VALID-DUP") {
		t.Errorf("the shrunk cases: exit %d, want 1 with TW-VALID-DUP failing\n%s", code, out)
	}
}

// An exploration alone runs no catalogue: a catalogue report asked for
// with it is refused before any agent starts, not silently left unwritten.
func TestExploreAloneRefusesCatalogueReports(t *testing.T) {
	dir := t.TempDir()
	for _, flag := range []string{"--json", "--junit", "--html", "--write-baseline"} {
		path := filepath.Join(dir, "report")
		code, out := conformRun(t, "conform", "-q", "--in-process", "--no-builtin", "--explore", "3", "--seed", "1", flag, path)
		if code != 2 || !strings.Contains(out, flag+" "+path) || !strings.Contains(out, "runs no catalogue") {
			t.Errorf("%s: exit %d, want 2 naming the flag and why\n%s", flag, code, out)
		}
		if strings.Contains(out, "explore: seed") {
			t.Errorf("%s: the exploration started before the refusal\n%s", flag, out)
		}
	}
	// With --cases a catalogue runs, and --json writes its report.
	path := filepath.Join(dir, "with-cases.json")
	code, out := conformRun(t, "conform", "-q", "--in-process", "--settle", "20ms", "--no-builtin", "--cases", "../../../fixtures/explored/opencode",
		"--explore", "2", "--seed", "1", "--json", path)
	if code != 3 { // INCOMPLETE: the kept cases feed not every MUST check
		t.Fatalf("with --cases: exit %d, want 3\n%s", code, out)
	}
	if _, err := os.Stat(path); err != nil {
		t.Errorf("with --cases: --json wrote nothing: %v", err)
	}
}

// Sizes whose scenario indexes would overflow are refused before anything
// runs (--explore 3000000000000000000 --shard 1/2 panicked in the
// generator, "invalid argument to IntN").
func TestExploreRefusesSizesThatOverflow(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--explore", "3000000000000000000", "--shard", "1/2"}, "--explore 3000000000000000000: at most"},
		{[]string{"--explore", "10", "--shard", "1/2500000000000000000"}, "--shard 1/2500000000000000000: at most"},
	} {
		code, out := conformRun(t, append([]string{"conform", "-q", "--in-process", "--no-builtin", "--seed", "1"}, tc.args...)...)
		if code != 2 || !strings.Contains(out, tc.want) || strings.Contains(out, "explore: seed") {
			t.Errorf("%v: exit %d, want 2 with %q before anything runs\n%s", tc.args, code, tc.want, out)
		}
	}
}

// A shrunk case's header says the whole command that runs it again (the
// agent's flags as given, quoted for a shell, --fed-only), and that
// command fails against the agent it was found on and passes (exit 0, not
// INCOMPLETE for the checks no kept case feeds) against the reference.
func TestTheReproduceLineRunsTheCase(t *testing.T) {
	out := filepath.Join(t.TempDir(), "explored")
	code, stdout := conformRun(t, "conform", "-q", "--in-process", "--env", "TODOHARNESS_FAULT=accept-duplicates", "--env", "NOTE=it's a test",
		"--settle", "20ms", "--policy", "single", "--no-builtin", "--explore", "12", "--seed", "1", "--out", out)
	if code != 1 {
		t.Fatalf("exploration: exit %d, want 1\n%s", code, stdout)
	}
	dir := filepath.Join(out, explore.FailuresDir, "explored-tw-valid-dup--duplicate--prompt")
	b, err := os.ReadFile(filepath.Join(dir, "case.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	const want = `# Reproduce: todoharness conform --in-process --env TODOHARNESS_FAULT=accept-duplicates --env 'NOTE=it'\''s a test' --policy single --settle 20ms --no-builtin --fed-only --cases <this folder>`
	if !strings.Contains(string(b), want+"\n") {
		t.Fatalf("case.yaml has no line\n%s\n%s", want, b)
	}
	args := []string{"conform", "-q", "--in-process", "--env", "TODOHARNESS_FAULT=accept-duplicates", "--env", "NOTE=it's a test", "--policy", "single", "--settle", "20ms", "--no-builtin", "--fed-only", "--cases", dir}
	if code, stdout := conformRun(t, args...); code != 1 || !strings.Contains(stdout, "TW-VALID-DUP") {
		t.Errorf("the Reproduce line against the agent it was found on: exit %d, want 1 (TW-VALID-DUP)\n%s", code, stdout)
	}
	args = slices.Delete(args, 3, 5) // the reference agent: no fault
	if code, stdout := conformRun(t, args...); code != 0 || !strings.Contains(stdout, "--fed-only: ") {
		t.Errorf("against the reference: exit %d, want 0 with the checks left out listed\n%s", code, stdout)
	}
	// Without --fed-only the same run is INCOMPLETE: no case feeds the
	// other TW-VALID checks.
	if code, stdout := conformRun(t, slices.DeleteFunc(args, func(a string) bool { return a == "--fed-only" })...); code != 3 {
		t.Errorf("without --fed-only: exit %d, want 3\n%s", code, stdout)
	}
}

// An exploration never writes through a symbolic link under --out (issue
// 42, 13; docs/ci.md promises it): explore.json that is a link is
// replaced by the report, an explore-failures that is a link to a folder
// elsewhere is refused (named on stderr, the exploration's verdict kept),
// and nothing lands outside --out.
func TestExplorationNeverWritesThroughLinksUnderOut(t *testing.T) {
	dir := t.TempDir()
	out, outside := filepath.Join(dir, "out"), filepath.Join(dir, "outside")
	for _, d := range []string{out, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	victim := filepath.Join(outside, "victim.json")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(out, explore.ResultFile)); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(out, explore.FailuresDir)); err != nil {
		t.Fatal(err)
	}
	code, text := conformRun(t, "conform", "-q", "--in-process", "--no-builtin", "--env", "TODOHARNESS_FAULT=accept-duplicates", "--settle", "20ms",
		"--explore", "12", "--seed", "1", "--out", out)
	if code != 1 || !strings.Contains(text, "symbolic link") || !strings.Contains(text, "--out "+out+" was not written") {
		t.Fatalf("exit %d, want 1 (a failure found) and the link under --out named\n%s", code, text)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("explore.json was written through its link: the file outside holds %.80q", b)
	}
	if es, _ := os.ReadDir(outside); len(es) != 1 {
		t.Errorf("written into the folder outside through the link: %v", es)
	}
	if fi, err := os.Lstat(filepath.Join(out, explore.ResultFile)); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("explore.json is not the report: %v %v", fi, err)
	}
	r, err := explore.ReadResult(filepath.Join(out, explore.ResultFile))
	if err != nil || len(r.Failures) == 0 {
		t.Fatalf("the report: %v, %+v", err, r)
	}
	for _, f := range r.Failures {
		if f.Case != "" || f.CaseYAML == "" {
			t.Errorf("%s: case %q (not written), text %d bytes", f.Check, f.Case, len(f.CaseYAML))
		}
	}
}
