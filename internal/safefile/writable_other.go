//go:build !unix

package safefile

import (
	"errors"
	"os"
)

// writableNode reports whether the FIFO or device at path may be written
// to, without opening it: where there is no access(2) (Windows), by its
// write permission bits.
func writableNode(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Mode().Perm()&0o222 == 0 {
		return errors.New("permission denied")
	}
	return nil
}
