package driver

import (
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// readProcStat parses a process whose name holds a space and a closing
// parenthesis: its name whole, its parent, its group and its start time.
func TestReadProcStatOfAnOddName(t *testing.T) {
	sleep, err := exec.LookPath("sleep")
	if err != nil {
		t.Skip("no sleep on PATH: ", err)
	}
	data, err := os.ReadFile(sleep)
	if err != nil {
		t.Fatal(err)
	}
	odd := filepath.Join(t.TempDir(), "a) b (c")
	if err := os.WriteFile(odd, data, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(odd, "30")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	e, err := readProcStat(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if e.pid != cmd.Process.Pid || e.comm != "a) b (c" || e.ppid != os.Getpid() || e.pgid != cmd.Process.Pid || e.start == 0 {
		t.Errorf("stat %+v, want pid %d, comm %q, ppid %d, pgid %d, a start time", e, cmd.Process.Pid, "a) b (c", os.Getpid(), cmd.Process.Pid)
	}
	self, err := readProcStat(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if self.ppid != os.Getppid() || self.pgid != syscall.Getpgrp() || self.start == 0 || self.start > e.start {
		t.Errorf("own stat %+v, want ppid %d, pgid %d, started before the child (%d)", self, os.Getppid(), syscall.Getpgrp(), e.start)
	}
}
