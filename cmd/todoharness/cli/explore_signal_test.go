package cli

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/todoharness/todoharness/conformance/explore"
)

// An exploration stopped by SIGINT or SIGTERM is INTERRUPTED (exit 130),
// not a PASS of the scenarios it happened to judge, and so is `conform
// merge` of its folder: the exploration's report says it was interrupted.
// (Both exited 0, with "N scenario(s) not judged (interrupted)".)
func TestAnInterruptedExplorationExits130(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			out := filepath.Join(t.TempDir(), "explored")
			args := []string{"conform", "--in-process", "--no-builtin", "--settle", "20ms", "--explore", "1000000", "--seed", "1", "--out", out}
			cmd := exec.Command(os.Args[0], "-test.run=^TestLogCheckSignalChild$")
			cmd.Env = append(os.Environ(), "TODOHARNESS_LOGCHECK_CHILD="+strings.Join(args, "\n"))
			var stdout bytes.Buffer
			cmd.Stdout = &stdout
			errPipe, err := cmd.StderrPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			// Signal once the first batch is judged (its progress line):
			// the exploration is under way, the next batch running.
			var stderr bytes.Buffer
			lines := bufio.NewScanner(io.TeeReader(errPipe, &stderr))
			for lines.Scan() && !strings.Contains(lines.Text(), "/1000000 scenarios") {
			}
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, io.TeeReader(errPipe, &stderr))
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err = <-done:
			case <-time.After(2 * time.Minute):
				t.Fatalf("still running 2 minutes after %v\n%s%s", sig, stdout.String(), stderr.String())
			}
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 130 || !strings.Contains(stdout.String(), "explore: INTERRUPTED: ") {
				t.Fatalf("after %v: %v, want exit 130 saying INTERRUPTED\n%s%s", sig, err, stdout.String(), stderr.String())
			}
			res, err := explore.ReadResult(filepath.Join(out, explore.ResultFile))
			if err != nil {
				t.Fatal(err)
			}
			if res.Interrupted == "" || res.Scenarios == 0 || res.Scenarios >= 1000000 {
				t.Errorf("explore.json: %d scenarios judged, %d not, interrupted %q; want some judged and the interruption said", res.Scenarios, res.NotJudged, res.Interrupted)
			}
			if code, mout := conformRun(t, "conform", "merge", out); code != 130 || !strings.Contains(mout, "explore: INTERRUPTED: shard 1/1: ") {
				t.Errorf("conform merge of the interrupted folder: exit %d, want 130\n%s", code, mout)
			}
		})
	}
}

// A merged exploration with scenarios not judged, and no failure, is
// INCOMPLETE (3), not PASS; one that was interrupted is 130; an old
// report of an interrupted shard (no "interrupted" field) is INCOMPLETE.
func TestMergeOfUnjudgedScenarios(t *testing.T) {
	for _, tc := range []struct {
		name string
		res  explore.Result
		code int
	}{
		{"all judged", explore.Result{Seed: 1, N: 10, Shards: 1, Scenarios: 10}, 0},
		{"not run", explore.Result{Seed: 1, N: 10, Shards: 1, Scenarios: 6, NotJudged: 4}, 3},
		{"interrupted", explore.Result{Seed: 1, N: 10, Shards: 1, Scenarios: 6, NotJudged: 4, Interrupted: "the run was interrupted (context canceled)"}, 130},
		{"interrupted before a scenario", explore.Result{Seed: 1, N: 10, Shards: 1, Interrupted: "the run was interrupted (context canceled)"}, 130},
	} {
		dir := t.TempDir()
		if err := explore.WriteResult(filepath.Join(dir, explore.ResultFile), &tc.res); err != nil {
			t.Fatal(err)
		}
		if code, out := conformRun(t, "conform", "merge", dir); code != tc.code {
			t.Errorf("%s: exit %d, want %d\n%s", tc.name, code, tc.code, out)
		}
	}
}
