//go:build unix

package driver

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// A prepared home is copied as it is: folders, files with their
// permission bits, symbolic links as links (one pointing outside is not
// followed); a FIFO or socket is left out; past the limit the copy stops
// with an error naming the file.
func TestCopyHome(t *testing.T) {
	src, outside := t.TempDir(), t.TempDir()
	for name, body := range map[string]string{"a/db": "data", "a/b/c.json": "{}", "run.sh": "#!/bin/sh\n"} {
		p := filepath.Join(src, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(filepath.Join(src, "run.sh"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(outside, "secret"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "secret"), filepath.Join(src, "a", "link")); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(filepath.Join(src, "a", "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	if err := copyHome(src, dst, MaxHomeCopy); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"a/db": "data", "a/b/c.json": "{}", "run.sh": "#!/bin/sh\n"} {
		if b, err := os.ReadFile(filepath.Join(dst, filepath.FromSlash(name))); err != nil || string(b) != want {
			t.Errorf("%s: %q, %v; want %q", name, b, err, want)
		}
	}
	if st, err := os.Stat(filepath.Join(dst, "run.sh")); err != nil || st.Mode().Perm()&0o100 == 0 {
		t.Errorf("run.sh lost its execute bit: %v %v", st, err)
	}
	if l, err := os.Readlink(filepath.Join(dst, "a", "link")); err != nil || l != filepath.Join(outside, "secret") {
		t.Errorf("the link: %q, %v", l, err)
	}
	if _, err := os.Lstat(filepath.Join(dst, "a", "fifo")); !os.IsNotExist(err) {
		t.Errorf("the FIFO was copied: %v", err)
	}
	err := copyHome(src, t.TempDir(), 5)
	if err == nil || !strings.Contains(err.Error(), "limit") || !strings.Contains(err.Error(), src) {
		t.Errorf("past the limit: %v, want an error naming the file and the limit", err)
	}
}
