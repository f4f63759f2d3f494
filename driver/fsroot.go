package driver

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// maxReadFile bounds the file fs/read_text_file reads into memory.
const maxReadFile = 16 << 20

// The fs methods resolve and open a path inside the case's working
// directory with os.Root: every component is opened from the directory
// above it without following a symlink out (the kernel resolves nothing
// the runner has not checked), so a directory swapped for a symlink
// between a check and the write has no window to steer it out. Symlinks
// that stay inside with a relative target are followed; an absolute
// symlink target is refused even when it points inside. The opened file
// must be a regular file with a single link: a hard link may be a file
// outside.

// leavesRoot is the answer to a path that resolves outside the case cwd.
func leavesRoot(p string) *RPCError {
	return &RPCError{Code: -32602, Message: fmt.Sprintf("path %q leaves the session's working directory (through .., or a symlink out or with an absolute target)", p)}
}

// relInside checks that p is absolute and lexically inside the case cwd
// and returns it relative to the cwd.
func (c *conn) relInside(p string) (string, *RPCError) {
	if !filepath.IsAbs(p) {
		return "", &RPCError{Code: -32602, Message: fmt.Sprintf("path %q is not absolute", p)}
	}
	rel, err := filepath.Rel(c.root, filepath.Clean(p))
	if err != nil || !filepath.IsLocal(rel) {
		return "", &RPCError{Code: -32602, Message: fmt.Sprintf("path %q is outside the session's working directory", p)}
	}
	return rel, nil
}

// fsError turns an error of an os.Root operation into a JSON-RPC error.
func fsError(p string, err error) *RPCError {
	var pe *fs.PathError
	if errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "escapes") {
		// os.Root's error for a path that resolves outside it (unexported).
		return leavesRoot(p)
	}
	return &RPCError{Code: -32603, Message: err.Error()}
}

// openInside opens the file at p inside the case cwd: for writing
// (creating it and its folders, not truncating) or reading. The file is
// a regular file with one link, or it is closed and refused.
func (c *conn) openInside(p string, write bool) (*os.File, *RPCError) {
	rel, rerr := c.relInside(p)
	if rerr != nil {
		return nil, rerr
	}
	root, err := os.OpenRoot(c.root)
	if err != nil {
		return nil, &RPCError{Code: -32603, Message: fmt.Sprintf("open the working directory: %v", err)}
	}
	defer root.Close()
	// O_NONBLOCK: opening a FIFO must not wait for a writer.
	flag := os.O_RDONLY | syscall.O_NONBLOCK
	if write {
		if dir := filepath.Dir(rel); dir != "." {
			if err := root.MkdirAll(dir, 0o755); err != nil {
				return nil, fsError(p, err)
			}
		}
		flag = os.O_WRONLY | os.O_CREATE | syscall.O_NONBLOCK
	}
	f, err := root.OpenFile(rel, flag, 0o644)
	if err != nil {
		return nil, fsError(p, err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, &RPCError{Code: -32603, Message: err.Error()}
	}
	if !fi.Mode().IsRegular() {
		_ = f.Close()
		return nil, &RPCError{Code: -32602, Message: fmt.Sprintf("path %q is not a regular file (%s)", p, fi.Mode().Type())}
	}
	if n := linkCount(fi); n > 1 {
		_ = f.Close()
		return nil, &RPCError{Code: -32602, Message: fmt.Sprintf("path %q has %d hard links: one may be outside the working directory, the runner does not touch it", p, n)}
	}
	return f, nil
}

// readInside reads the file at p inside the case cwd (at most maxReadFile
// bytes).
func (c *conn) readInside(p string) ([]byte, *RPCError) {
	f, rerr := c.openInside(p, false)
	if rerr != nil {
		return nil, rerr
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxReadFile+1))
	if err != nil {
		return nil, &RPCError{Code: -32603, Message: err.Error()}
	}
	if len(data) > maxReadFile {
		return nil, &RPCError{Code: -32603, Message: fmt.Sprintf("file %q is larger than the runner's read cap of %d bytes", p, maxReadFile)}
	}
	return data, nil
}

// writeInside replaces the content of the file at p inside the case cwd.
func (c *conn) writeInside(p string, content []byte) *RPCError {
	f, rerr := c.openInside(p, true)
	if rerr != nil {
		return rerr
	}
	err := f.Truncate(0)
	if err == nil {
		_, err = f.Write(content)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &RPCError{Code: -32603, Message: err.Error()}
	}
	return nil
}
