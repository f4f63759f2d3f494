package testutil

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sebdah/goldie/v2"
)

// ModulePath is the module whose root RepoRoot looks for.
const ModulePath = "github.com/todoharness/todoharness"

// UpdateEnv, when truthy ("1", "true", "t"), makes Golden testers rewrite
// their files instead of comparing (as does `go test -update`).
const UpdateEnv = "GOLDIE_UPDATE"

var (
	rootOnce sync.Once
	root     string
	rootErr  error
)

// RepoRoot returns the absolute path of the repository root: the nearest
// directory, walking up from the working directory (go test runs a package's
// tests in its own folder), whose go.mod declares ModulePath. When the working
// directory is outside the repository it falls back to this source file's
// location. It panics when neither finds the root: no test can run sensibly
// without it.
func RepoRoot() string {
	rootOnce.Do(func() {
		root, rootErr = findRoot()
	})
	if rootErr != nil {
		panic(rootErr)
	}
	return root
}

func findRoot() (string, error) {
	var starts []string
	if wd, err := os.Getwd(); err == nil {
		starts = append(starts, wd)
	}
	if _, file, _, ok := runtime.Caller(0); ok && filepath.IsAbs(file) {
		starts = append(starts, filepath.Dir(file))
	}
	for _, start := range starts {
		for dir := start; ; dir = filepath.Dir(dir) {
			if isModuleRoot(filepath.Join(dir, "go.mod")) {
				return dir, nil
			}
			if filepath.Dir(dir) == dir {
				break
			}
		}
	}
	return "", fmt.Errorf("testutil: no go.mod declaring module %s above %s", ModulePath, strings.Join(starts, " or "))
}

func isModuleRoot(gomod string) bool {
	data, err := os.ReadFile(gomod)
	if err != nil {
		return false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`) == ModulePath
		}
	}
	return false
}

// InteropDir is the folder of the interop data copied from the original
// TypeScript implementation: <repo>/fixtures/interop/deepseek-harness (see
// the README there for upstream, commits and licence).
func InteropDir() string {
	return filepath.Join(RepoRoot(), "fixtures", "interop", "deepseek-harness")
}

// InteropFile returns the path of rel (slash-separated, e.g.
// "todo-plan/session.jsonl") inside InteropDir, or an error naming the path
// it looked for when it is missing.
func InteropFile(rel string) (string, error) {
	p := filepath.Join(InteropDir(), filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("interop fixture %s not found at %s (it is committed under fixtures/interop/deepseek-harness/): %w", rel, p, err)
	}
	return p, nil
}

// SpecDirEnv names the folder holding the upstream spec texts the
// conformance catalogue quotes (todo-write-rfc.md, todo-tool-readme.md).
const SpecDirEnv = "TODOHARNESS_SPEC_DIR"

// SpecDir returns where the optional spec texts are looked for:
// $TODOHARNESS_SPEC_DIR when set, else the spec folder of the team's shared
// folder beside the checkout. The folder need not exist: the texts are not
// part of the repository, and tests that need them skip (saying why)
// without them. The second result says where the folder came from.
func SpecDir() (dir, from string) {
	if d := os.Getenv(SpecDirEnv); d != "" {
		if abs, err := filepath.Abs(d); err == nil {
			d = abs
		}
		return d, "$" + SpecDirEnv
	}
	return filepath.Join(filepath.Dir(RepoRoot()), "shared", "spec"), "the default (shared/spec beside the checkout; set " + SpecDirEnv + " to use another folder)"
}

// GoldenDir returns the absolute folder of suite's golden files:
// <repo>/golden/<suite>.
func GoldenDir(suite string) string {
	return filepath.Join(RepoRoot(), "golden", filepath.FromSlash(suite))
}

// Updating reports whether golden files are being rewritten ($GOLDIE_UPDATE
// or the -update flag goldie registers).
func Updating() bool {
	if truthy(os.Getenv(UpdateEnv)) {
		return true
	}
	if f := flagLookup("update"); f != "" {
		return truthy(f)
	}
	return false
}

func truthy(s string) bool {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "t", "yes":
		return true
	}
	return false
}

// Golden returns a goldie tester whose files are
// <repo>/golden/<suite>/<name>.golden. Pass GinkgoTB() from a ginkgo spec or
// the *testing.T/B of a plain test. With $GOLDIE_UPDATE set (make golden) or
// -update when the test binary starts (make golden), Assert rewrites the file
// and then compares, so the run passes and the diff is left for review in git.
// A missing golden file fails with the path to create.
func Golden(t testing.TB, suite string) *goldie.Goldie {
	t.Helper()
	return goldie.New(t,
		goldie.WithFixtureDir(GoldenDir(suite)),
		goldie.WithNameSuffix(".golden"),
		goldie.WithDiffEngine(goldie.ClassicDiff),
	)
}

// AssertGolden compares actual with <repo>/golden/<suite>/<name>.golden,
// rewriting the file first when Updating(). It is Golden(t, suite).Assert
// with the update decided at call time rather than at binary start.
func AssertGolden(t testing.TB, suite, name string, actual []byte) {
	t.Helper()
	g := Golden(t, suite)
	if Updating() {
		if err := g.Update(t, name, actual); err != nil {
			t.Fatalf("update golden %s/%s: %v", suite, name, err)
		}
	} else if _, err := os.Stat(g.GoldenFileName(t, name)); err != nil {
		t.Fatalf("golden file %s is missing (%v): run `GOLDIE_UPDATE=1 make golden` (or go test with GOLDIE_UPDATE=1) to create it, then review it before committing.\nactual output:\n%s", g.GoldenFileName(t, name), err, actual)
	}
	g.Assert(t, name, actual)
}

// SyncBuffer is a bytes.Buffer safe for concurrent writers (a logger's
// goroutines, a process's stderr copier) and a reader.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// NoHang fails the test when f has not returned within d (what it calls
// hung); f keeps running in the background then.
func NoHang(t testing.TB, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still running after %s", what, d)
	}
}
