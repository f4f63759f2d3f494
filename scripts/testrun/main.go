package main

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
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

// result is how one package's tests ended.
type result struct {
	pkg     pkg
	ok      bool
	elapsed time.Duration
	output  []byte
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("testrun", flag.ContinueOnError)
	fs.SetOutput(stderr)
	parallel := fs.Int("p", runtime.NumCPU(), "packages tested at once")
	race := fs.Bool("race", false, "build with the race detector")
	timeout := fs.Duration("timeout", 10*time.Minute, "each package's test timeout (go test -timeout)")
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
	pkgs, err := list(ctx, patterns)
	if err != nil {
		fmt.Fprintf(stderr, "testrun: %v\n", err)
		return 2
	}
	colour := isTerminal(stdout)
	start := time.Now()
	var build []string
	if *race {
		build = append(build, "-race")
	}
	if !buildAll(ctx, stdout, pkgs, build, patterns, *race) {
		return 1
	}
	fmt.Fprintf(stdout, "built in %s; testing, %d at a time\n", time.Since(start).Round(100*time.Millisecond), *parallel)

	// -ldflags=-w: no DWARF in the test binaries (stack traces and race
	// reports come from the symbol table, which stays). Linking the wire
	// tier's four provider SDKs with it takes 1.2 GB instead of 1.5 GB.
	goTest := append([]string{"test", "-count=1", "-ldflags=-w", "-timeout", timeout.String()}, build...)
	results := testAll(ctx, goTest, pkgs, *parallel)
	return summarise(ctx, stdout, results, pkgs, colour, start)
}

// buildAll builds every package first, once, so the packages' own builds
// (one go test per package) do not compile the same dependencies twice;
// it says so on stdout, and why not when the build fails.
func buildAll(ctx context.Context, stdout io.Writer, pkgs []pkg, build, patterns []string, race bool) bool {
	fmt.Fprintf(stdout, "building %d packages with tests%s ...\n", len(pkgs), map[bool]string{true: " (-race)", false: ""}[race])
	// go list -export compiles (and caches) every package the tests need,
	// test packages included, without linking anything.
	buildArgs := append(append([]string{"list", "-export", "-deps", "-test", "-f", "{{if .Error}}{{.Error}}{{end}}"}, build...), patterns...)
	if out, err := exec.CommandContext(ctx, "go", buildArgs...).CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		stdout.Write(out)
		fmt.Fprintf(stdout, "FAIL: the build failed (%v)\n", cmp.Or(err, errors.New("see above")))
		return false
	}
	return true
}

// testAll tests the packages, parallel at a time, until ctx ends; the
// results come in as the tests end.
func testAll(ctx context.Context, goTest []string, pkgs []pkg, parallel int) <-chan result {
	results := make(chan result)
	work := make(chan pkg)
	var wg sync.WaitGroup
	for range parallel {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for p := range work {
				results <- testPackage(ctx, goTest, p)
			}
		}()
	}
	go func() {
		defer close(work)
		for _, p := range pkgs {
			select {
			case work <- p:
			case <-ctx.Done():
				return
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()

	return results
}

// summarise prints each result as it comes, then the slowest package and
// the counts; the status is 1 when a package failed or was not tested.
func summarise(ctx context.Context, stdout io.Writer, results <-chan result, pkgs []pkg, colour bool, start time.Time) int {
	width := 0
	for _, p := range pkgs {
		width = max(width, len(p.name))
	}
	var passed, failed []result
	n := 0
	for r := range results {
		n++
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
		fmt.Fprintf(stdout, "[%*d/%d] %s %-*s %6.1fs\n", len(fmt.Sprint(len(pkgs))), n, len(pkgs), status, width, r.pkg.name, r.elapsed.Seconds())
	}
	all := append(slices.Clone(passed), failed...)
	if len(all) > 0 {
		slowest := slices.MaxFunc(all, func(a, b result) int { return cmp.Compare(a.elapsed, b.elapsed) })
		fmt.Fprintf(stdout, "all packages in %s; the slowest: %s (%.1fs)\n", time.Since(start).Round(100*time.Millisecond), slowest.pkg.name, slowest.elapsed.Seconds())
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stdout, "interrupted: %d of %d packages tested\n", len(all), len(pkgs))
	}
	for _, r := range failed {
		fmt.Fprintf(stdout, "FAIL %s\n", r.pkg.name)
	}
	// The closing line CI reads, in packages.
	fmt.Fprintf(stdout, "%d passed, %d failed\n", len(passed), len(failed)+len(pkgs)-len(all))
	if len(failed) > 0 || len(all) < len(pkgs) {
		return 1
	}
	return 0
}

// testPackage runs go test on one package.
func testPackage(ctx context.Context, goTest []string, p pkg) result {
	start := time.Now()
	cmd := exec.CommandContext(ctx, "go", append(slices.Clone(goTest), p.path)...)
	// Ctrl-C reaches go test and its test binary from the terminal; on
	// SIGTERM they get it too, and time to print what was running.
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
	cmd.WaitDelay = 30 * time.Second
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintf(&out, "testrun: go test %s: %v\n", p.path, err)
	}
	return result{pkg: p, ok: err == nil, elapsed: time.Since(start), output: out.Bytes()}
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
