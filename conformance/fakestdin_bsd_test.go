//go:build darwin || freebsd || netbsd || openbsd

package conformance

import "golang.org/x/sys/unix"

// fionread is FIONREAD on the BSDs and macOS (_IOR('f', 127, int)), which
// golang.org/x/sys/unix does not name there.
const fionread = 0x4004667f

// stdinReady reports whether bytes wait unread on the fake agent's stdin.
func stdinReady() bool {
	n, err := unix.IoctlGetInt(0, fionread)
	return err == nil && n > 0
}
