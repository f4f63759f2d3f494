// Package safefile reads and writes the files a user hands the harness by
// path, as an attacker or a careless user may lay them out: a read opens
// only a regular file (never waiting on a FIFO, never reading a device) and
// reads at most a stated number of bytes; a write never goes through a
// symbolic link inside an output folder (it replaces the file, or the link
// itself, atomically), a report is replaced atomically and never opens a
// FIFO in a way that waits, and a folder made inside an output folder is
// never a link to somewhere else.
package safefile

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"
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

// Open opens path for reading: a regular file (a link to one is
// followed) of at most max bytes. It never blocks opening a FIFO and never
// opens a device for reading: such a path is refused with ErrNotRegular, a
// longer file with ErrTooLarge. Errors name path. It is the one open of
// every file a user hands the harness to read; ReadRegular reads one whole.
func Open(path string, max int64) (*os.File, error) {
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
	got, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !got.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("%s: %w (%s)", path, ErrNotRegular, kind(got.Mode()))
	}
	if got.Size() > max {
		f.Close()
		return nil, fmt.Errorf("%s: %w: %d bytes, the limit is %d", path, ErrTooLarge, got.Size(), max)
	}
	return f, nil
}

// ReadRegular reads path, which must be a regular file (a link to one is
// followed) of at most max bytes, opened with Open. A file that grows past
// max while it is read is refused with ErrTooLarge too.
func ReadRegular(path string, max int64) ([]byte, error) {
	f, err := Open(path, max)
	if err != nil {
		return nil, err
	}
	defer f.Close()
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
// then renamed over path. Whatever is at path is replaced, never opened: a
// symbolic link is replaced by the file, never written through, and so is
// a FIFO; a folder at path is refused. It is the writer of the files inside
// an output folder (--out).
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return replace(path, perm, false, func(w io.Writer) error {
		_, err := w.Write(data)
		return err
	})
}

// ErrNoReader is the error of a report written to a FIFO that no process
// has open for reading.
var ErrNoReader = errors.New("is a FIFO with no reader")

// WriteReport writes a report to path, a file a user named (--json FILE):
// write writes the whole report. A regular file there, or none, is
// replaced atomically: the report goes to a temporary file in the same
// folder, is synced to the disk, and is renamed over path, so a write that
// fails (a full disk, a file size limit) leaves the file that was there as
// it was and no temporary file behind. A symbolic link at path is followed
// (the user named it), and the file it names replaced so (a dangling link
// is replaced itself). The folder is made when missing. A FIFO or a
// character device there (/dev/stdout, a shell's process substitution) is
// written to as a stream, opened without waiting: a FIFO no process reads
// is refused with ErrNoReader at once, and a write that stalls ends with
// ctx. Errors name path.
func WriteReport(ctx context.Context, path string, perm fs.FileMode, write func(io.Writer) error) error {
	target := linkTarget(path)
	if fi, err := os.Stat(target); err == nil && fi.Mode()&(fs.ModeNamedPipe|fs.ModeCharDevice) != 0 {
		return writeStream(ctx, path, target, write)
	}
	if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return replace(target, perm, true, write)
}

// linkTarget is the file a link at path names (path itself when it is no
// link, or a dangling one: that link is then replaced).
func linkTarget(path string) string {
	if t, err := filepath.EvalSymlinks(path); err == nil {
		return t
	}
	return path
}

// writeStream writes to the FIFO or character device target (path names
// it), opened without blocking.
func writeStream(ctx context.Context, path, target string, write func(io.Writer) error) error {
	f, err := os.OpenFile(target, os.O_WRONLY|syscall.O_NONBLOCK, 0)
	if errors.Is(err, syscall.ENXIO) {
		return fmt.Errorf("write %s: %w (nothing reads it; open it for reading first, or give a regular file)", path, ErrNoReader)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	// A reader that stops reading stalls the write in the poller: ctx
	// ends it (a deadline on a file that has none is a no-op).
	stop := context.AfterFunc(ctx, func() { _ = f.SetWriteDeadline(time.Unix(1, 0)) })
	defer stop()
	werr := write(f)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		if ctx.Err() != nil {
			werr = fmt.Errorf("%w (%w)", ctx.Err(), werr)
		}
		return fmt.Errorf("write %s: %w", path, werr)
	}
	return nil
}

// replace writes path through a new file beside it renamed over it
// (synced first when sync is set).
func replace(path string, perm fs.FileMode, sync bool, write func(io.Writer) error) error {
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
	bw := bufio.NewWriterSize(tmp, 64<<10)
	werr := write(bw)
	if werr == nil {
		werr = bw.Flush()
	}
	if werr == nil {
		werr = tmp.Chmod(perm)
	}
	if werr == nil && sync {
		werr = tmp.Sync()
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

// CheckWritable makes sure WriteReport can write path, before a run that
// ends by writing it: path's folder is made when missing, and a file is
// created in it and removed again (the rename needs the folder writable,
// not the file). A FIFO or a character device at path is only checked for
// write permission, never opened: opening a FIFO would wait for a reader,
// and closing it would end that reader's input. A folder at path is
// refused.
func CheckWritable(path string) error {
	target := linkTarget(path)
	fi, err := os.Stat(target)
	switch {
	case err == nil && fi.IsDir():
		return errors.New("is a folder")
	case err == nil && fi.Mode()&(fs.ModeNamedPipe|fs.ModeCharDevice) != 0:
		return writableNode(target)
	case err != nil && !errors.Is(err, fs.ErrNotExist):
		return err
	}
	dir := filepath.Dir(target)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(target)+".check-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
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
