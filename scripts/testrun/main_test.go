package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The digest repeats what failed, from a ginkgo failure's output: the
// failure lines and the gomega comparison, and nothing else.
func TestFailureDigest(t *testing.T) {
	out := strings.Join([]string{
		"=== RUN   TestConformance",
		"••••",
		"  [FAILED] the bridge answers before its updates",
		"  a long summary table the digest leaves out",
		"  Expected",
		"      <[]string | len:2, cap:2>: [\"ACP-TURN-1\", \"TW-LOAD-2\"]",
		"  to equal",
		"      <[]string | len:1, cap:1>: [\"ACP-TURN-1\"]",
		"  In [It] at: suites/conformance/conformance_test.go:293",
		"  more noise",
		"Summarizing 1 Failure:",
		"  [FAIL] breaking one behaviour at a time fails exactly these checks [It] bridge updates-after-response",
		"--- FAIL: TestConformance (167.60s)",
		"FAIL",
	}, "\n")
	want := []string{
		"[FAILED] the bridge answers before its updates",
		"Expected",
		"<[]string | len:2, cap:2>: [\"ACP-TURN-1\", \"TW-LOAD-2\"]",
		"to equal",
		"<[]string | len:1, cap:1>: [\"ACP-TURN-1\"]",
		"In [It] at: suites/conformance/conformance_test.go:293",
		"[FAIL] breaking one behaviour at a time fails exactly these checks [It] bridge updates-after-response",
		"--- FAIL: TestConformance (167.60s)",
	}
	if got := failureDigest([]byte(out)); !slices.Equal(got, want) {
		t.Errorf("digest:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The digest is bounded: lines are cut at digestWidth, and there are at
// most digestLines of them.
func TestFailureDigestBounded(t *testing.T) {
	long := "--- FAIL: " + strings.Repeat("x", 2*digestWidth)
	out := strings.Repeat(long+"\n", 2*digestLines)
	got := failureDigest([]byte(out))
	if len(got) != digestLines {
		t.Fatalf("%d lines, want %d", len(got), digestLines)
	}
	if n := len(got[0]); n > digestWidth+len("…") {
		t.Errorf("a line of %d bytes, want at most %d", n, digestWidth+len("…"))
	}
}

// The queue starts with the jobs no earlier run timed, in the order they
// came, then the timed ones, longest first.
func TestLongestFirst(t *testing.T) {
	mk := func(name string, race bool) job { return job{pkg: pkg{name: name}, race: race} }
	jobs := []job{mk("./new1", true), mk("./short", true), mk("./explore", false), mk("./long", true), mk("./new2", true), mk("./mid", true)}
	last := map[string]float64{"./short": 3, "./explore (no -race)": 130, "./long": 260, "./mid": 120, "./gone": 500}
	longestFirst(jobs, last)
	var got []string
	for _, j := range jobs {
		got = append(got, j.label())
	}
	want := []string{"./new1", "./new2", "./long", "./explore (no -race)", "./mid", "./short"}
	if !slices.Equal(got, want) {
		t.Errorf("order %q, want %q", got, want)
	}
}

// The times are kept across runs: a run's jobs replace their own, the
// others' stay; a missing or broken file is no times at all.
func TestTimesKept(t *testing.T) {
	file := filepath.Join(t.TempDir(), "sub", "times.json")
	if got := readTimes(file); len(got) != 0 {
		t.Fatalf("times from a missing file: %v", got)
	}
	if err := writeTimes(file, nil, map[string]float64{"./a": 10, "./b": 20}); err != nil {
		t.Fatal(err)
	}
	last := readTimes(file)
	if err := writeTimes(file, last, map[string]float64{"./b": 5}); err != nil {
		t.Fatal(err)
	}
	if got, want := readTimes(file), map[string]float64{"./a": 10, "./b": 5}; !maps.Equal(got, want) {
		t.Errorf("times %v, want %v", got, want)
	}
	if err := os.WriteFile(file, []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := readTimes(file); len(got) != 0 {
		t.Errorf("times from a broken file: %v", got)
	}
	if err := writeTimes("", nil, map[string]float64{"./a": 1}); err != nil {
		t.Errorf("no file: %v", err)
	}
}

// make test runs the exploration package a second time without -race, only
// its tests named by PLAIN_RUN: every test of it that reads
// testutil.RaceEnabled (to skip or shrink under -race) must be among them,
// or its whole run would never happen.
func TestPlainRunNamesEveryRaceDependentTest(t *testing.T) {
	mk, err := os.ReadFile("../../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^PLAIN_RUN := (.+)$`).FindSubmatch(mk)
	if m == nil {
		t.Fatal("Makefile: no PLAIN_RUN := line")
	}
	run, err := regexp.Compile(strings.ReplaceAll(string(m[1]), "$$", "$"))
	if err != nil {
		t.Fatalf("Makefile: PLAIN_RUN: %v", err)
	}
	if !regexp.MustCompile(`-plain \./conformance/explore/ -plain-run '\$\(PLAIN_RUN\)'`).Match(mk) {
		t.Fatal("Makefile: the test target does not run ./conformance/explore/ with -plain-run '$(PLAIN_RUN)'")
	}
	raceDependent := raceDependentTests(t, "../../conformance/explore")
	if len(raceDependent) == 0 {
		t.Fatal("no test of ./conformance/explore reads testutil.RaceEnabled: is PLAIN_RUN still needed?")
	}
	for _, name := range raceDependent {
		if !run.MatchString(name) {
			t.Errorf("%s reads testutil.RaceEnabled, and the Makefile's PLAIN_RUN %q does not run it without -race", name, run)
		}
	}
}

// raceDependentTests are the Test functions of dir's test files whose body
// names RaceEnabled.
func raceDependentTests(t *testing.T, dir string) []string {
	files, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("test files of %s: %v", dir, err)
	}
	var out []string
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv != nil || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") {
				continue
			}
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				if id, ok := n.(*ast.Ident); ok && id.Name == "RaceEnabled" {
					out = append(out, fn.Name.Name)
					return false
				}
				return true
			})
		}
	}
	return slices.Compact(out)
}

// A -norace package is tested once, without -race; the others of the
// patterns with it; a -plain package once more, narrowed to -plain-run.
func TestPlanNoRace(t *testing.T) {
	jobs, err := plan(t.Context(), []string{"../../internal/textcut/", "../../internal/jsonx/"}, []string{"../../internal/yamlx/"},
		[]string{"../../internal/jsonx/"}, "^TestX$", true)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, j := range jobs {
		got = append(got, fmt.Sprintf("%s race=%v run=%q", strings.TrimPrefix(j.pkg.path, "github.com/todoharness/todoharness/"), j.race, j.run))
	}
	slices.Sort(got)
	want := []string{`internal/jsonx race=false run=""`, `internal/textcut race=true run=""`, `internal/yamlx race=false run="^TestX$"`}
	if !slices.Equal(got, want) {
		t.Errorf("jobs %q, want %q", got, want)
	}
}
