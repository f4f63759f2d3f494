package scratch

import (
	"errors"
	"fmt"

	"golang.org/x/sys/unix"
)

// isRoomyTmpfs reports whether dir is a tmpfs with at least free bytes
// available; a missing dir is not an error.
func isRoomyTmpfs(dir string, free uint64) (bool, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return false, nil
		}
		return false, fmt.Errorf("statfs %s: %w", dir, err)
	}
	return st.Type == unix.TMPFS_MAGIC && st.Bavail*uint64(st.Bsize) >= free, nil
}
