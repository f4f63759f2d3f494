package conformance

import "golang.org/x/sys/unix"

// stdinReady reports whether bytes wait unread on the fake agent's stdin.
func stdinReady() bool {
	n, err := unix.IoctlGetInt(0, unix.TIOCINQ)
	return err == nil && n > 0
}
