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

func TestSharedDirEnv(t *testing.T) {
	t.Setenv(SharedEnv, "/somewhere/else")
	if got := SharedDir(); got != "/somewhere/else" {
		t.Fatalf("SharedDir() = %s with %s set", got, SharedEnv)
	}
	t.Setenv(SharedEnv, "")
	if got, want := SharedDir(), filepath.Clean(filepath.Join(RepoRoot(), "..", "shared")); got != want {
		t.Fatalf("SharedDir() = %s, want %s", got, want)
	}
}

func TestSharedFileMissingSaysWhere(t *testing.T) {
	t.Setenv(SharedEnv, t.TempDir())
	_, err := SharedFile("interop/nothing.jsonl")
	if err == nil {
		t.Fatal("no error for a missing shared file")
	}
	for _, want := range []string{"interop/nothing.jsonl", SharedEnv} {
		if !contains(err.Error(), want) {
			t.Fatalf("error %q does not mention %q", err, want)
		}
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
