//go:build unix

package driver

import "syscall"

const (
	sigTerm = syscall.SIGTERM
	sigKill = syscall.SIGKILL
)

// sysProcAttr puts the agent in its own process group, so that a hung agent
// is killed with everything it started.
func sysProcAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// signalGroup signals the process group led by pid (errors ignored: the
// group may be gone already).
func signalGroup(pid int, sig syscall.Signal) { _ = syscall.Kill(-pid, sig) }

// extraFilesWork says whether a child can be given file descriptors
// beyond stdio (exec.Cmd.ExtraFiles): Target.IdleReport needs one.
const extraFilesWork = true
