package driver

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// MaxHomeCopy bounds the files of a prepared home (Target.HomeFrom) copied
// into a case's home: a home an agent filled past it is refused, naming
// the file that passed it.
const MaxHomeCopy = 256 << 20

// copyHome copies the prepared home src into dst (an empty folder):
// folders, regular files (with their permission bits) and symbolic links
// (as links, never followed); anything else (a socket, a FIFO) is left
// out. More than limit bytes of files is an error; an error names the
// file, and dst may then hold part of the copy.
func copyHome(src, dst string, limit int64) error {
	var total int64
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch t := d.Type(); {
		case rel == ".":
			return nil
		case t.IsDir():
			return os.Mkdir(to, 0o700)
		case t&fs.ModeSymlink != 0:
			target, err := os.Readlink(path)
			if err != nil {
				return err
			}
			return os.Symlink(target, to)
		case t.IsRegular():
			n, err := copyFile(path, to, limit-total)
			total += n
			return err
		}
		return nil
	})
}

// copyFile copies the regular file from into a new file to, at most limit
// bytes (more is an error naming the file, the limit and what was left
// of it), and returns the bytes copied.
func copyFile(from, to string, limit int64) (int64, error) {
	in, err := os.Open(from)
	if err != nil {
		return 0, err
	}
	defer in.Close()
	st, err := in.Stat()
	if err != nil {
		return 0, err
	}
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_EXCL, st.Mode().Perm()|0o600)
	if err != nil {
		return 0, err
	}
	n, err := io.Copy(out, io.LimitReader(in, limit+1))
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err == nil && n > limit {
		err = fmt.Errorf("%s: the prepared home's files pass their limit here (%d bytes were left of it): not copied", from, limit)
	}
	return n, err
}
