//go:build unix

package session

import (
	"errors"
	"os"
	"syscall"
)

// flock takes f's exclusive lock without waiting: syscall.EWOULDBLOCK
// when another holds it.
func flock(f *os.File) error {
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
