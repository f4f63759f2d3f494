//go:build unix

package conformance

import (
	"syscall"
	"time"
)

// ProcessCPU is the CPU time (user and system) this process has used so
// far, with that of every process it started that has ended and been
// waited for (an agent's process, and the processes it waited for in
// turn); ok is false where it cannot be read. A process still running is
// not in it.
func ProcessCPU() (d time.Duration, ok bool) {
	var self, children syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &self) != nil || syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children) != nil {
		return 0, false
	}
	return time.Duration(self.Utime.Nano() + self.Stime.Nano() + children.Utime.Nano() + children.Stime.Nano()), true
}
