package driver

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A child the agent leaves running that cleared its environment (env -i:
// no marker), left the agent's process group and session (setsid) and,
// for some, the case's directory, is killed when the agent ends, and
// listed, however the agent ended: real processes, a shell agent that
// exits once its stdin closes, as agents do.
func TestShutdownEndsHiddenDescendants(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		script string // PIDFILE and GOFILE are replaced
		// release: the parent of the child exits once GOFILE exists,
		// after the test had the runner look at the tree.
		release bool
	}{
		// The agent lives until its stdin closes: its tree is walked
		// before the shutdown, while the child's parent link holds.
		{name: "child of the agent, out of the case directory",
			script: "env -i setsid sh -c 'cd /; echo $$ > PIDFILE; exec sleep 300' </dev/null >/dev/null 2>&1 & cat >/dev/null"},
		// Its parent exits at once: re-parented to the runner, without
		// the marker, found by its working directory.
		{name: "orphan in the case directory",
			script: "(env -i setsid sh -c 'echo $$ > PIDFILE; exec sleep 300' </dev/null >/dev/null 2>&1 &); cat >/dev/null"},
		// Its parent exits while the agent runs, after the runner saw it:
		// nothing links it to the case any more but that it was seen.
		{name: "orphan seen while its parent lived", release: true,
			script: "(env -i setsid sh -c 'cd /; echo $$ > PIDFILE; exec sleep 300' </dev/null >/dev/null 2>&1 & while [ ! -e GOFILE ]; do sleep 0.01; done); cat >/dev/null"},
		// The same, started by a thread of its parent other than the
		// first (threadChildEnv): in that thread's children list only.
		{name: "orphan a thread other than the first started", release: true,
			script: threadChildEnv + "=PIDFILE EXE </dev/null >/dev/null 2>&1 & cat >/dev/null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			pidFile, goFile := filepath.Join(dir, "child.pid"), filepath.Join(dir, "go")
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			script := strings.NewReplacer("PIDFILE", pidFile, "GOFILE", goFile, "EXE", exe).Replace(tc.script)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			p, err := startProc(ctx, resolved{argv: []string{"/bin/sh", "-c", script}, env: os.Environ()}, dir)
			if err != nil {
				t.Fatal(err)
			}
			pid := waitPid(t, pidFile)
			defer syscall.Kill(pid, syscall.SIGKILL) // should the test fail
			if tc.release {
				p.track()
				if err := os.WriteFile(goFile, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				waitUntil(t, "the child re-parented to the runner", func() bool {
					e, err := readProcStat(pid)
					return err == nil && e.ppid == os.Getpid()
				})
			}
			how := p.shutdown(5 * time.Second)
			if !strings.HasPrefix(how, "exited after stdin closed") {
				t.Errorf("the agent %s, want an exit once its stdin closed", how)
			}
			if killed := p.killedDescendants(); !strings.Contains(strings.Join(killed, "\n"), "pid "+strconv.Itoa(pid)+" ") {
				t.Errorf("killed %q, want pid %d listed", killed, pid)
			}
			if e, err := readProcStat(pid); err == nil && e.state != 'X' {
				t.Errorf("pid %d (the sleep the agent left) is still there after the agent ended (state %c, parent %d)", pid, e.state, e.ppid)
			}
		})
	}
}

// waitPid reads the pid the agent's child writes to f.
func waitPid(t *testing.T, f string) int {
	t.Helper()
	var pid int
	waitUntil(t, "the agent's child to write its pid", func() bool {
		b, err := os.ReadFile(f)
		if err != nil || !strings.HasSuffix(string(b), "\n") {
			return false
		}
		pid, err = strconv.Atoi(strings.TrimSpace(string(b)))
		return err == nil
	})
	return pid
}

// waitUntil waits for cond, failing the test after a minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited a minute for %s", what)
		}
		time.Sleep(5 * time.Millisecond) // polling real processes (/proc, a pid file): no fake clock reaches them
	}
}
