package conformance

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/todoharness/todoharness/driver"
)

// An agent that leaves a child running in a session of its own (setsid:
// out of the agent's process group) gets that child killed when the case
// ends, and the transcript names it: a child of the agent's tree (found
// by its parent links), and an orphan whose parent exited (re-parented to
// the runner, found by the case's marker in its environment).
func TestRunKillsEscapedDescendants(t *testing.T) {
	t.Parallel()
	// The agent starts `sleep 300` in a new session, records its pid, then
	// answers nothing (killed at the case timeout).
	t.Run("child", func(t *testing.T) {
		t.Parallel()
		pidFile := filepath.Join(t.TempDir(), "orphan.pid")
		testKillsEscaped(t, pidFile, "setsid sh -c 'echo $$ > "+pidFile+"; exec sleep 300' </dev/null >/dev/null 2>&1 & sleep 600")
	})
	// The subshell that starts it exits at once: its parent link is gone.
	t.Run("orphan", func(t *testing.T) {
		t.Parallel()
		pidFile := filepath.Join(t.TempDir(), "orphan.pid")
		testKillsEscaped(t, pidFile, "(setsid sh -c 'echo $$ > "+pidFile+"; exec sleep 300' </dev/null >/dev/null 2>&1 &); sleep 600")
	})
	// An orphan re-parented to the runner that dies before the case ends
	// (here on its own, for codex-acp's native binary of the SIGTERM to its
	// group, after its node wrapper exited) must be reaped, not left a
	// zombie for as long as the runner runs: one per case, thousands in a
	// long exploration.
	t.Run("orphan dead before the end", func(t *testing.T) {
		t.Parallel()
		pidFile := filepath.Join(t.TempDir(), "orphan.pid")
		testGone(t, pidFile, "(sh -c 'echo $$ > "+pidFile+"; exec sleep 0.2' </dev/null >/dev/null 2>&1 &); sleep 600")
	})
	// A child whose first thread exits while its other threads run shows
	// as a zombie in /proc but is not dead (a multi-threaded node child in
	// the middle of exiting under load; here for good): the runner must
	// kill it and reap it, not take it for dead and forget it.
	t.Run("child whose first thread exited", func(t *testing.T) {
		t.Parallel()
		exe, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		pidFile := filepath.Join(t.TempDir(), "orphan.pid")
		testKillsEscaped(t, pidFile, leaderExitsEnv+"="+pidFile+" setsid "+exe+" </dev/null >/dev/null 2>&1 & sleep 600")
	})
}

// leaderExitsEnv makes the test binary the helper of "orphan whose first
// thread exited": it writes its pid to the file the variable names, then
// its first thread exits while another goes on sleeping.
const leaderExitsEnv = "CONFORMANCE_LEADER_EXITS"

func init() {
	if f := os.Getenv(leaderExitsEnv); f != "" {
		runtime.LockOSThread() // the first thread, the one whose exit leaves a zombie leader
		// In the helper child process: the thread that outlives the first.
		go time.Sleep(time.Hour)
		if err := os.WriteFile(f, []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
			os.Exit(2)
		}
		_, _, _ = syscall.RawSyscall(syscall.SYS_EXIT, 0, 0, 0)
	}
}

func testKillsEscaped(t *testing.T, pidFile, script string) {
	rep, pid := testGone(t, pidFile, script)
	var killed []string
	for _, p := range rep.Cases[0].ev.Procs {
		killed = append(killed, p.Killed...)
	}
	if !strings.Contains(strings.Join(killed, "\n"), "pid "+strconv.Itoa(pid)+" ") {
		t.Errorf("the killed descendants %q do not name pid %d", killed, pid)
	}
}

// testGone runs plan-basic against the shell agent script, which writes
// the pid of a process it leaves behind to pidFile, and fails when that
// process still exists after the run, running or a zombie.
func testGone(t *testing.T, pidFile, script string) (*Report, int) {
	rep, err := Run(context.Background(), Config{Agent: shellTarget(script), Cases: oneCase(t, "plan-basic"),
		Dialect: driver.DialectTodoWrite, Timeout: 2 * time.Second, Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(pidFile)
	if err != nil {
		t.Fatalf("the agent did not start its child: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	alive := func() bool {
		st, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err != nil {
			return false
		}
		// A zombie is dead but not reaped: the runner must reap what it adopted.
		f := strings.Fields(string(st[strings.LastIndexByte(string(st), ')')+1:]))
		return len(f) > 0 && f[0] != "X"
	}
	if alive() {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		t.Fatalf("pid %d (the sleep the agent left) still exists after the run (zombie or running)", pid)
	}
	return rep, pid
}
