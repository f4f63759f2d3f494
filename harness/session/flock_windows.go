//go:build windows

package session

import (
	"errors"
	"os"
	"syscall"

	"golang.org/x/sys/windows"
)

// flock takes f's exclusive lock without waiting (LockFileEx on its first
// byte): syscall.EWOULDBLOCK when another holds it, as on unix.
func flock(f *os.File) error {
	err := windows.LockFileEx(windows.Handle(f.Fd()), windows.LOCKFILE_EXCLUSIVE_LOCK|windows.LOCKFILE_FAIL_IMMEDIATELY, 0, 1, 0, new(windows.Overlapped))
	if errors.Is(err, windows.ERROR_LOCK_VIOLATION) {
		return syscall.EWOULDBLOCK
	}
	return err
}
