package main

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/todoharness/todoharness/internal/textcut"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// pkg is a package with tests: its import path, its folder and the size
// of its test files (the larger start first: they tend to run longest).
type pkg struct {
	path, dir string
	// name is the path shown: relative to the module's folder.
	name      string
	testBytes int64
}

// job is one package tested once: with the race detector or without;
// run, when set, is the go test -run of a plain job.
type job struct {
	pkg  pkg
	race bool
	run  string
}

// label is the job's name in the progress lines.
func (j job) label() string {
	if j.race {
		return j.pkg.name
	}
	return j.pkg.name + " (no -race)"
}

// result is how one job ended.
type result struct {
	job     job
	ok      bool
	elapsed time.Duration
	// cpu is the user and system time of go test and the test binary.
	cpu    time.Duration
	output []byte
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("testrun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	// One package more than the CPUs: the suites wait on timers (settles,
	// grace periods, agents' exits) a third of the time, and a quiet 2-core
	// run with two at a time kept the CPUs 85% busy (docs/performance.md).
	// make stress passes with two busy loops beside two packages, a load
	// above this one.
	parallel := fs.Int("p", runtime.NumCPU()+1, "packages tested at once")
	race := fs.Bool("race", false, "build with the race detector")
	var plain []string
	fs.Func("plain", "a package pattern also tested without -race, in the same queue (repeatable)", func(v string) error {
		plain = append(plain, v)
		return nil
	})
	var norace []string
	fs.Func("norace", "a package pattern tested without -race instead of with it (repeatable)", func(v string) error {
		norace = append(norace, v)
		return nil
	})
	plainRun := fs.String("plain-run", "", "the tests the -plain jobs run (go test -run): those -race skips or shrinks, the others ran with -race already")
	timeout := fs.Duration("timeout", 10*time.Minute, "each package's test timeout (go test -timeout)")
	timesFile := fs.String("times", defaultTimesFile(), "where each job's last CPU time is kept, to start the longest first (\"\" for none)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *parallel < 1 {
		fmt.Fprintf(stderr, "testrun: -p %d: want at least 1\n", *parallel)
		return 2
	}
	patterns := fs.Args()
	if len(patterns) == 0 {
		patterns = []string{"./..."}
	}
	jobs, err := plan(ctx, patterns, plain, norace, *plainRun, *race)
	if err != nil {
		fmt.Fprintf(stderr, "testrun: %v\n", err)
		return 2
	}
	last := readTimes(*timesFile)
	longestFirst(jobs, last)
	colour := isTerminal(stdout)
	start := time.Now()
	// -trimpath: the compiled packages do not depend on the folder the
	// repository is in, so a fresh clone reuses the build cache of
	// another; -ldflags=-s -w: no symbol table or DWARF in the test
	// binaries (stack traces and race reports come from the runtime's own
	// tables, which stay). Linking the wire tier's four provider SDKs
	// takes 1.2 GB with them, less without.
	common := []string{"-trimpath", "-ldflags=-s -w"}
	fmt.Fprintf(stdout, "building %d test jobs ...\n", len(jobs))
	if err := build(ctx, stdout, common, patterns, append(slices.Clone(plain), norace...), *race); err != nil {
		fmt.Fprintf(stdout, "FAIL: the build failed (%v)\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "built in %s; testing, %d at a time\n", time.Since(start).Round(100*time.Millisecond), *parallel)
	goTest := append([]string{"test", "-count=1", "-timeout", timeout.String()}, common...)
	results := make(chan result)
	took := map[string]float64{}
	go func() {
		defer close(results)
		for r := range testAll(ctx, goTest, jobs, *parallel) {
			took[r.job.label()] = r.cpu.Seconds()
			results <- r
		}
	}()
	status := summarise(ctx, stdout, results, jobs, colour, start)
	if err := writeTimes(*timesFile, last, took); err != nil {
		fmt.Fprintf(stderr, "testrun: keeping the packages' times: %v\n", err)
	}
	return status
}

// defaultTimesFile is testrun-times.json in the user's cache folder (shared
// by every clone on the machine, like Go's build cache), or "" when there
// is none.
func defaultTimesFile() string {
	dir, err := os.UserCacheDir()
	if err != nil {
		return ""
	}
	return filepath.Join(dir, "todoharness", "testrun-times.json")
}

// readTimes returns the CPU seconds of each job of the last runs, by
// label: none when file is "", missing or unreadable (the order is then
// the listing's).
func readTimes(file string) map[string]float64 {
	times := map[string]float64{}
	if file == "" {
		return times
	}
	if data, err := os.ReadFile(file); err == nil {
		_ = json.Unmarshal(data, &times)
	}
	return times
}

// writeTimes keeps the times of this run's jobs (took) with those of jobs
// it did not run (last), replacing file whole.
func writeTimes(file string, last, took map[string]float64) error {
	if file == "" || len(took) == 0 {
		return nil
	}
	all := map[string]float64{}
	maps.Copy(all, last)
	maps.Copy(all, took)
	data, err := json.MarshalIndent(all, "", "\t")
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return err // names the folder
	}
	tmp, err := os.CreateTemp(filepath.Dir(file), ".testrun-times-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("write %s: %w", tmp.Name(), err)
	}
	return os.Rename(tmp.Name(), file) // names both files
}

// longestFirst orders jobs for the queue: those with no time in last first,
// in the order they came (new packages, or every job on a machine's first
// run: the plain jobs, then the larger test files first), then the others
// by their last CPU time, longest first (CPU, not wall: a run beside other
// work, or of a few packages, stretches wall times unevenly). On a small
// machine the run ends when its last long package does: one of them
// started late (the order of test-file sizes put ./suites/conformance, the
// longest, sixth) finishes alone while the other CPUs are idle.
func longestFirst(jobs []job, last map[string]float64) {
	slices.SortStableFunc(jobs, func(a, b job) int {
		ta, okA := last[a.label()]
		tb, okB := last[b.label()]
		switch {
		case !okA && !okB:
			return 0
		case !okA:
			return -1
		case !okB:
			return 1
		}
		return cmp.Compare(tb, ta)
	})
}

// testAll tests the jobs, parallel at a time, until ctx ends; the results
// come in as the tests end.
func testAll(ctx context.Context, goTest []string, jobs []job, parallel int) <-chan result {
	results := make(chan result)
	work := make(chan job)
	var wg sync.WaitGroup
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				results <- testPackage(ctx, goTest, j)
			}
		}()
	}
	go func() {
		defer close(work)
		for _, j := range jobs {
			select {
			case work <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()

	return results
}

// summarise prints each result as it comes, then the slowest package,
// the CPU time and the counts; the status is 1 when a job failed or was
// not run.
func summarise(ctx context.Context, stdout io.Writer, results <-chan result, jobs []job, colour bool, start time.Time) int {
	width := 0
	for _, j := range jobs {
		width = max(width, len(j.label()))
	}
	var cpu time.Duration
	var passed, failed []result
	n := 0
	for r := range results {
		n++
		cpu += r.cpu
		status := "ok  "
		if !r.ok {
			status = "FAIL"
			failed = append(failed, r)
			stdout.Write(r.output)
			if len(r.output) > 0 && r.output[len(r.output)-1] != '\n' {
				fmt.Fprintln(stdout)
			}
		} else {
			passed = append(passed, r)
		}
		if colour {
			status = map[bool]string{true: "\x1b[32m", false: "\x1b[31m"}[r.ok] + status + "\x1b[0m"
		}
		fmt.Fprintf(stdout, "[%*d/%d] %s %-*s %6.1fs  (cpu %5.1fs)\n", len(fmt.Sprint(len(jobs))), n, len(jobs), status, width, r.job.label(), r.elapsed.Seconds(), r.cpu.Seconds())
	}
	all := append(slices.Clone(passed), failed...)
	if len(all) > 0 {
		slowest := slices.MaxFunc(all, func(a, b result) int { return cmp.Compare(a.elapsed, b.elapsed) })
		fmt.Fprintf(stdout, "all packages in %s, cpu %s; the slowest: %s (%.1fs)\n", time.Since(start).Round(100*time.Millisecond), cpu.Round(100*time.Millisecond), slowest.job.label(), slowest.elapsed.Seconds())
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stdout, "interrupted: %d of %d packages tested\n", len(all), len(jobs))
	}
	for _, r := range failed {
		fmt.Fprintf(stdout, "FAIL %s\n", r.job.label())
		// What failed, again here: a CI log is often read from its end,
		// and a failure's whole output is far above it.
		for _, l := range failureDigest(r.output) {
			fmt.Fprintf(stdout, "    %s\n", l)
		}
	}
	// The closing line CI reads, in packages.
	fmt.Fprintf(stdout, "%d passed, %d failed\n", len(passed), len(failed)+len(jobs)-len(all))
	if len(failed) > 0 || len(all) < len(jobs) {
		return 1
	}
	return 0
}

// testPackage runs go test on one job's package.
func testPackage(ctx context.Context, goTest []string, j job) result {
	start := time.Now()
	args := slices.Clone(goTest)
	if j.race {
		args = append(args, "-race")
	}
	if j.run != "" {
		args = append(args, "-run", j.run)
	}
	cmd := exec.CommandContext(ctx, "go", append(args, j.pkg.path)...)
	// Ctrl-C reaches go test and its test binary from the terminal; on
	// SIGTERM they get it too, and time to print what was running.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintf(&out, "testrun: go test %s: %v\n", j.pkg.path, err)
	}
	r := result{job: j, ok: err == nil, elapsed: time.Since(start), output: out.Bytes()}
	// go test's own usage includes the test binary's: it waits for it.
	if ps := cmd.ProcessState; ps != nil {
		r.cpu = ps.UserTime() + ps.SystemTime()
	}
	return r
}

// plan lists the jobs: every package of patterns (with -race when race is
// set) but those of norace, every package of norace without it, and every
// package of plain once more without it, its tests narrowed to plainRun.
// The plain jobs come first: they are the long explorations that skip
// under -race.
func plan(ctx context.Context, patterns, plain, norace []string, plainRun string, race bool) ([]job, error) {
	var jobs []job
	if len(plain) > 0 {
		pkgs, err := list(ctx, plain)
		if err != nil {
			return nil, err
		}
		for _, p := range pkgs {
			jobs = append(jobs, job{pkg: p, run: plainRun})
		}
	}
	without := map[string]bool{}
	if len(norace) > 0 {
		pkgs, err := list(ctx, norace)
		if err != nil {
			return nil, err
		}
		for _, p := range pkgs {
			without[p.path] = true
		}
	}
	pkgs, err := list(ctx, patterns)
	if err != nil {
		return nil, err
	}
	for _, p := range pkgs {
		jobs = append(jobs, job{pkg: p, race: race && !without[p.path]})
	}
	return jobs, nil
}

// build compiles (and caches) every package the jobs' tests need, test
// packages included, without linking anything, so that the packages' own
// go test runs do not compile the same dependencies twice.
func build(ctx context.Context, stdout io.Writer, common, patterns, plain []string, race bool) error {
	variants := [][]string{patterns}
	if len(plain) > 0 {
		variants = append(variants, plain)
	}
	for i, pats := range variants {
		args := append([]string{"list", "-export", "-deps", "-test", "-f", "{{if .Error}}{{.Error}}{{end}}"}, common...)
		if race && i == 0 {
			args = append(args, "-race")
		}
		out, err := exec.CommandContext(ctx, "go", append(args, pats...)...).CombinedOutput()
		if err != nil || len(bytes.TrimSpace(out)) > 0 {
			stdout.Write(out)
			return cmp.Or(err, errors.New("see above"))
		}
	}
	return nil
}

// list returns the packages matching patterns that have test files,
// larger test files first.
func list(ctx context.Context, patterns []string) ([]pkg, error) {
	format := `{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}|{{.Dir}}|{{join .TestGoFiles ","}},{{join .XTestGoFiles ","}}{{end}}`
	out, err := exec.CommandContext(ctx, "go", append([]string{"list", "-f", format}, patterns...)...).Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return nil, fmt.Errorf("go list %s: %w\n%s", strings.Join(patterns, " "), err, ee.Stderr)
		}
		return nil, fmt.Errorf("go list: %w", err)
	}
	var pkgs []pkg
	for line := range strings.Lines(string(out)) {
		f := strings.Split(strings.TrimSpace(line), "|")
		if len(f) != 3 {
			continue
		}
		p := pkg{path: f[0], dir: f[1], name: f[0]}
		if wd, err := os.Getwd(); err == nil {
			if rel, err := filepath.Rel(wd, f[1]); err == nil && !strings.HasPrefix(rel, "..") {
				p.name = "./" + filepath.ToSlash(rel)
			}
		}
		for name := range strings.SplitSeq(f[2], ",") {
			if fi, err := os.Stat(filepath.Join(p.dir, name)); name != "" && err == nil {
				p.testBytes += fi.Size()
			}
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) == 0 {
		return nil, fmt.Errorf("no package of %s has tests", strings.Join(patterns, " "))
	}
	slices.SortStableFunc(pkgs, func(a, b pkg) int { return cmp.Compare(b.testBytes, a.testBytes) })
	return pkgs, nil
}

// isTerminal says whether colour codes may go to w: a terminal, and no
// $NO_COLOR.
func isTerminal(w io.Writer) bool {
	if _, set := os.LookupEnv("NO_COLOR"); set {
		return false
	}
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// digestLines bounds failureDigest; digestWidth cuts each of its lines.
const (
	digestLines = 40
	digestWidth = 400
)

// failureDigest picks out of a failed package's output the lines that say
// what failed: go test's "--- FAIL" lines, ginkgo's "[FAIL]"/"[FAILED]"
// lines, and each gomega "Expected" with the four lines after it (the
// value, the matcher, the value matched against); at most digestLines,
// each at most digestWidth bytes.
func failureDigest(out []byte) []string {
	var picked []string
	lines := strings.Split(string(out), "\n")
	keep := 0 // lines still to keep after an "Expected"
	for _, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case t == "Expected":
			keep = 4
		case strings.HasPrefix(t, "--- FAIL"), strings.HasPrefix(t, "[FAIL]"), strings.HasPrefix(t, "[FAILED]"):
		case keep > 0:
			keep--
		default:
			continue
		}
		t = textcut.Truncate(t, digestWidth)
		picked = append(picked, t)
		if len(picked) == digestLines {
			break
		}
	}
	return picked
}
