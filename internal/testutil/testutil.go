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

	"github.com/sebdah/goldie/v2"
)

// ModulePath is the module whose root RepoRoot looks for.
const ModulePath = "github.com/todoharness/todoharness"

// SharedEnv overrides the shared folder SharedDir returns.
const SharedEnv = "TODOHARNESS_SHARED"

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

// SharedDir returns the shared folder that sits beside the checkout
// (<repo>/../shared: DESIGN.md, spec/, interop/), or $TODOHARNESS_SHARED when
// set. The folder may not exist; see SharedFile.
func SharedDir() string {
	if d := os.Getenv(SharedEnv); d != "" {
		if abs, err := filepath.Abs(d); err == nil {
			return abs
		}
		return d
	}
	return filepath.Clean(filepath.Join(RepoRoot(), "..", "shared"))
}

// SharedFile returns the path of rel (slash-separated) inside SharedDir, or
// an error saying exactly where it was looked for and how to point the tests
// elsewhere when it is missing.
func SharedFile(rel string) (string, error) {
	p := filepath.Join(SharedDir(), filepath.FromSlash(rel))
	if _, err := os.Stat(p); err != nil {
		where := fmt.Sprintf("the shared folder beside the checkout (%s); set %s to use another location", SharedDir(), SharedEnv)
		if d := os.Getenv(SharedEnv); d != "" {
			where = fmt.Sprintf("%s=%s, which does not hold it; unset it to use the shared folder beside the checkout", SharedEnv, d)
		}
		return "", fmt.Errorf("shared fixture %s not found at %s: %v (looked in %s)", rel, p, err, where)
	}
	return p, nil
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
