package cli

import (
	"context"
	"errors"
	"github.com/todoharness/todoharness/internal/testutil"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The CLI shell: one verdict per folder, the text report on stdout, the
// JUnit file, exit status 1 when a scenario does not pass.
func TestSnapshotRunReportsAScenarioThatCannotRun(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "no-log")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "input.json"), []byte(`{"steps":[{"op":"initialize"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	junit := filepath.Join(t.TempDir(), "out", "snap.xml")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	stdout, stderr, err := runCLI(ctx, "snapshot", "run", dir, "--agent", "no-such-agent-anywhere", "--junit", junit)
	var code exitCode
	if !errors.As(err, &code) || code != 1 {
		t.Fatalf("exit %v, want 1; stderr %q", err, stderr)
	}
	if !strings.Contains(stdout, "COULD NOT RUN no-log") || !strings.Contains(stdout, "no session.jsonl") ||
		!strings.Contains(stdout, "1 scenario(s) against no-such-agent-anywhere: 0 pass, 0 fail, 1 could not run") {
		t.Fatalf("stdout %q", stdout)
	}
	if !strings.Contains(stderr, "error   no-log") {
		t.Fatalf("stderr %q, want a progress line", stderr)
	}
	data, err := os.ReadFile(junit)
	if err != nil || !strings.Contains(string(data), `<error message="scenario `) {
		t.Fatalf("JUnit %q, %v", data, err)
	}
}

func TestSnapshotRunNeedsAFolder(t *testing.T) {
	_, _, err := runCLI(context.Background(), "snapshot", "run")
	if err == nil || !strings.Contains(err.Error(), "requires at least 1 arg") {
		t.Fatalf("err %v", err)
	}
}

// `cassette from-log` rebuilds the exchanges of the original's logs, in
// both formats.
func TestCassetteFromLogOfTheInteropLogs(t *testing.T) {
	for _, name := range []string{"todo-plan", "head-todo-write", "head-packed-chunks"} {
		t.Run(name, func(t *testing.T) {
			log := filepath.Join(testutil.RepoRoot(), "fixtures", "interop", "deepseek-harness", name, "session.jsonl")
			out := filepath.Join(t.TempDir(), "c.yaml")
			stdout, stderr, err := runCLI(context.Background(), "cassette", "from-log", log, out)
			if err != nil {
				t.Fatalf("%v; stderr %q", err, stderr)
			}
			if want := "wrote " + out + ": 2 exchange(s); rebuilt from session log " + name + "/session.jsonl"; !strings.Contains(stdout, want) {
				t.Fatalf("stdout %q, want %q", stdout, want)
			}
			if _, err := os.Stat(out); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// An interrupted run (SIGINT/SIGTERM end the command's context) starts no
// further scenario and says so for each.
func TestSnapshotRunStopsWhenInterrupted(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	stdout, _, err := runCLI(ctx, "snapshot", "run", "a", "b", "--agent", "no-such-agent-anywhere")
	var code exitCode
	if !errors.As(err, &code) || code != 1 {
		t.Fatalf("exit %v, want 1", err)
	}
	if strings.Count(stdout, "not run: the run was interrupted") != 2 {
		t.Fatalf("stdout %q, want both scenarios not run", stdout)
	}
}
