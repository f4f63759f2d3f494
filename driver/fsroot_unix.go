//go:build unix

package driver

import (
	"io/fs"
	"syscall"
)

// linkCount is the number of hard links of the file (1 when unknown).
func linkCount(fi fs.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Nlink)
	}
	return 1
}
