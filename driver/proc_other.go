//go:build !unix

package driver

import (
	"os"
	"syscall"
)

const (
	sigTerm = syscall.Signal(15)
	sigKill = syscall.Signal(9)
)

func sysProcAttr() *syscall.SysProcAttr { return nil }

// signalGroup kills the process only: process groups are a unix notion.
func signalGroup(pid int, _ syscall.Signal) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}

// extraFilesWork: exec.Cmd.ExtraFiles is not supported here, so
// Target.IdleReport is ignored (the settle waits for quiet).
const extraFilesWork = false
