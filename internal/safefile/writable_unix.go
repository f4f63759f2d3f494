//go:build unix

package safefile

import "golang.org/x/sys/unix"

// writableNode reports whether this process may write to the FIFO or
// device at path, without opening it (access(2)).
func writableNode(path string) error {
	return unix.Access(path, unix.W_OK)
}
