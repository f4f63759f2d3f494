package testutil

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRepoRootHasModule(t *testing.T) {
	r := RepoRoot()
	if !isModuleRoot(filepath.Join(r, "go.mod")) {
		t.Fatalf("RepoRoot() = %s: no go.mod for %s there", r, ModulePath)
	}
}

func TestInteropFile(t *testing.T) {
	p, err := InteropFile("todo-plan/session.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(RepoRoot(), "fixtures", "interop", "deepseek-harness", "todo-plan", "session.jsonl"); p != want {
		t.Fatalf("InteropFile = %s, want %s", p, want)
	}
	_, err = InteropFile("nothing.jsonl")
	if err == nil {
		t.Fatal("no error for a missing interop file")
	}
	for _, want := range []string{"nothing.jsonl", InteropDir()} {
		if !contains(err.Error(), want) {
			t.Fatalf("error %q does not mention %q", err, want)
		}
	}
}

func TestSpecDirEnv(t *testing.T) {
	t.Setenv(SpecDirEnv, "/somewhere/else")
	if got, from := SpecDir(); got != "/somewhere/else" || !contains(from, SpecDirEnv) {
		t.Fatalf("SpecDir() = %s (%s) with %s set", got, from, SpecDirEnv)
	}
	t.Setenv(SpecDirEnv, "")
	got, _ := SpecDir()
	if want := filepath.Join(filepath.Dir(RepoRoot()), "shared", "spec"); got != want {
		t.Fatalf("SpecDir() = %s, want %s", got, want)
	}
}

func TestGoldenDir(t *testing.T) {
	if got, want := GoldenDir("unit"), filepath.Join(RepoRoot(), "golden", "unit"); got != want {
		t.Fatalf("GoldenDir = %s, want %s", got, want)
	}
}

func TestAssertGoldenUpdatesWithEnv(t *testing.T) {
	suite := "testutil-selftest-" + filepath.Base(t.TempDir())
	dir := GoldenDir(suite)
	t.Cleanup(func() { os.RemoveAll(dir) })
	t.Setenv(UpdateEnv, "1")
	AssertGolden(t, suite, "x", []byte("hello\n"))
	data, err := os.ReadFile(filepath.Join(dir, "x.golden"))
	if err != nil || string(data) != "hello\n" {
		t.Fatalf("golden not written: %q, %v", data, err)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }
