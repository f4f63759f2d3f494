package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/todoharness/todoharness/internal/testutil"
)

// blockedOpeningAFIFO reports whether a thread of process pid waits in
// open(2) for a FIFO's writer (the kernel's wait_for_partner).
func blockedOpeningAFIFO(pid int) bool {
	tasks, _ := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "wchan"))
	for _, w := range tasks {
		if b, err := os.ReadFile(w); err == nil && (bytes.Contains(b, []byte("wait_for_partner")) || bytes.Contains(b, []byte("fifo_open"))) {
			return true
		}
	}
	return false
}

// A `conform --judge` whose evidence.json is a FIFO, a `conform merge`
// whose explore.json is one, a `conform --cases` whose case.yaml is one, a
// conform whose --json or --html is one that nothing reads, and a
// `snapshot run` whose expected file is one, end within 2 s of SIGTERM: once the process
// either waits on the FIFO or has ended by itself, it gets SIGTERM, and it
// must have exited 2 s later, with an error naming the FIFO.
func TestFIFOInputsEndOnSIGTERM(t *testing.T) {
	for name, setup := range map[string]func(t *testing.T, fifo func(string)) []string{
		"conform --judge, evidence.json a FIFO": func(t *testing.T, fifo func(string)) []string {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "a"), 0o755); err != nil {
				t.Fatal(err)
			}
			fifo(filepath.Join(dir, "a", "evidence.json"))
			return []string{"conform", "--judge", dir}
		},
		// Issue 42, 9.
		"conform merge, explore.json a FIFO": func(t *testing.T, fifo func(string)) []string {
			dir := t.TempDir()
			fifo(filepath.Join(dir, "explore.json"))
			return []string{"conform", "merge", dir}
		},
		// Issue 42, 10.
		"conform --cases, case.yaml a FIFO": func(t *testing.T, fifo func(string)) []string {
			dir := t.TempDir()
			if err := os.Mkdir(filepath.Join(dir, "x"), 0o755); err != nil {
				t.Fatal(err)
			}
			fifo(filepath.Join(dir, "x", "case.yaml"))
			return []string{"conform", "--in-process", "--no-builtin", "--cases", dir}
		},
		// Issue 42, 15: a report to a FIFO nothing reads.
		"conform --judge, --json a FIFO": func(t *testing.T, fifo func(string)) []string {
			dir := t.TempDir()
			writeShard(t, filepath.Join(dir, "saved"), savedRun(t))
			fifo(filepath.Join(dir, "fifo"))
			return []string{"conform", "-q", "--judge", filepath.Join(dir, "saved"), "--json", filepath.Join(dir, "fifo")}
		},
		"conform --judge, --html a FIFO": func(t *testing.T, fifo func(string)) []string {
			dir := t.TempDir()
			writeShard(t, filepath.Join(dir, "saved"), savedRun(t))
			fifo(filepath.Join(dir, "fifo"))
			return []string{"conform", "-q", "--judge", filepath.Join(dir, "saved"), "--html", filepath.Join(dir, "fifo")}
		},
		// The check before the run that --json can be written (FAIL: the
		// verdict is the exit status).
		"conform, --json a FIFO": func(t *testing.T, fifo func(string)) []string {
			dir := t.TempDir()
			fifo(filepath.Join(dir, "fifo"))
			return []string{"conform", "-q", "--in-process", "--settle", "20ms", "--env", "TODOHARNESS_FAULT=accept-duplicates",
				"--case", "reject-duplicate", "--json", filepath.Join(dir, "fifo")}
		},
		"snapshot run, the expected file a FIFO": func(t *testing.T, fifo func(string)) []string {
			dir := filepath.Join(t.TempDir(), "todo-plan")
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			for _, f := range []string{"input.json", "session.jsonl"} {
				data, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "fixtures", "interop", "deepseek-harness", "todo-plan", f))
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			fifo(filepath.Join(dir, "stdout.expected.jsonl"))
			// An agent that ends at once: the old code then went on to the
			// expected file.
			return []string{"snapshot", "run", dir, "--agent", "true", "--timeout", "20s"}
		},
	} {
		t.Run(name, func(t *testing.T) {
			args := setup(t, func(p string) {
				if err := syscall.Mkfifo(p, 0o600); err != nil {
					t.Skipf("no FIFOs here: %v", err)
				}
			})
			cmd := exec.Command(os.Args[0], "-test.run=^TestLogCheckSignalChild$")
			cmd.Env = append(os.Environ(), "TODOHARNESS_LOGCHECK_CHILD="+strings.Join(args, "\n"))
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stderr, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			t.Cleanup(func() { _ = cmd.Process.Kill() })
			var exited bool
			var err error
			// Polls a real process (its /proc entry): no fake clock reaches it.
			for deadline := time.Now().Add(30 * time.Second); !exited; time.Sleep(20 * time.Millisecond) {
				select {
				case err = <-done:
					exited = true
					continue
				default:
				}
				if blockedOpeningAFIFO(cmd.Process.Pid) {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("30 s on, the process neither waits on the FIFO nor has ended; output:\n%s", stderr.String())
				}
			}
			if !exited {
				if serr := cmd.Process.Signal(syscall.SIGTERM); serr != nil {
					t.Fatal(serr)
				}
				select {
				case err = <-done:
				case <-time.After(2 * time.Second):
					t.Fatalf("still running 2 s after SIGTERM (waiting on the FIFO); output:\n%s", stderr.String())
				}
			}
			if err == nil || !strings.Contains(stderr.String(), "FIFO") {
				t.Fatalf("exit %v, output:\n%s\nwant a failure naming the FIFO", err, stderr.String())
			}
		})
	}
}
