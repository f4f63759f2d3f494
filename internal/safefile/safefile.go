// Package safefile reads and writes the files a user hands the harness by
// path, as an attacker or a careless user may lay them out: a read opens
// only a regular file (never waiting on a FIFO, never reading a device) and
// reads at most a stated number of bytes; a write never goes through a
// symbolic link (it replaces the file, or the link itself, atomically), and
// a folder made inside an output folder is never a link to somewhere else.
package safefile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// ErrNotRegular is the error of a read of something that is not a regular
// file (a FIFO, a device, a socket, a folder).
var ErrNotRegular = errors.New("not a regular file")

// ErrTooLarge is the error of a read of a file longer than its limit.
var ErrTooLarge = errors.New("file too large")

// ErrLink is the error of a write through a symbolic link inside an output
// folder.
var ErrLink = errors.New("is a symbolic link (never written through)")

// kind names a file mode for errors.
func kind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a folder"
	}
	return "not a regular file"
}

// ReadRegular reads path, which must be a regular file (a link to one is
// followed) of at most max bytes. It never blocks opening a FIFO and never
// reads a device: such a path is refused with ErrNotRegular, a longer file
// with ErrTooLarge. Errors name path.
func ReadRegular(path string, max int64) ([]byte, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(fi.Mode()))
	}
	// O_NONBLOCK: should path become a FIFO between the Stat and the open,
	// the open does not wait for a writer; the Fstat below refuses it.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	got, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !got.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(got.Mode()))
	}
	if got.Size() > max {
		return nil, fmt.Errorf("%s: %w: %d bytes, the limit is %d", path, ErrTooLarge, got.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: %w: more than %d bytes", path, ErrTooLarge, max)
	}
	return data, nil
}

// WriteFile writes data to path atomically: into a new file beside it,
// then renamed over path. A symbolic link at path is replaced by the file,
// never written through; a folder at path is refused.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	if fi, err := os.Lstat(path); err == nil && fi.IsDir() {
		return fmt.Errorf("write %s: is a folder", path)
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	name := tmp.Name()
	_, werr := tmp.Write(data)
	if werr == nil {
		werr = tmp.Chmod(perm)
	}
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(name, path)
	}
	if werr != nil {
		_ = os.Remove(name)
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
}

// MkdirInside makes the folder root/name (one level, name a plain file
// name) when it is missing, and root too (root is the caller's: a link
// there is followed). An existing root/name must be a real folder: a
// symbolic link there is refused with ErrLink, so nothing written into the
// folder lands outside root.
func MkdirInside(root, name string) (string, error) {
	if name == "" || name == "." || name == ".." || filepath.Base(name) != name {
		return "", fmt.Errorf("%s: folder name %q is not a plain name", root, name)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return "", err
	}
	p := filepath.Join(root, name)
	if err := os.Mkdir(p, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return "", err
	}
	fi, err := os.Lstat(p)
	switch {
	case err != nil:
		return "", err
	case fi.Mode()&fs.ModeSymlink != 0:
		return "", fmt.Errorf("%s: %w", p, ErrLink)
	case !fi.IsDir():
		return "", fmt.Errorf("%s: not a folder", p)
	}
	return p, nil
}
