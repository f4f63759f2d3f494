package safefile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestReadRegularRefusesWhatIsNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	zero := filepath.Join(dir, "zero")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	for name, p := range map[string]string{"FIFO": fifo, "link to /dev/zero": zero, "folder": dir} {
		t.Run(name, func(t *testing.T) {
			_, err := ReadRegular(p, 1<<20)
			if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), p) {
				t.Fatalf("ReadRegular(%s) = %v, want ErrNotRegular naming the path", name, err)
			}
		})
	}
}

func TestReadRegularCapsTheSize(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadRegular(p, 10); err != nil || string(got) != "0123456789" {
		t.Fatalf("at the limit: %q, %v", got, err)
	}
	if _, err := ReadRegular(p, 9); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("over the limit: %v, want ErrTooLarge", err)
	}
	link := filepath.Join(filepath.Dir(p), "link")
	if err := os.Symlink(p, link); err != nil {
		t.Fatal(err)
	}
	if got, err := ReadRegular(link, 10); err != nil || string(got) != "0123456789" {
		t.Fatalf("a link to a regular file is read: %q, %v", got, err)
	}
}

func TestWriteFileReplacesALinkNeverWritesThroughIt(t *testing.T) {
	inside, outside := t.TempDir(), t.TempDir()
	target := filepath.Join(outside, "victim")
	if err := os.WriteFile(target, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, to := range map[string]string{"to a file outside": target, "dangling": filepath.Join(outside, "created")} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(inside, strings.ReplaceAll(name, " ", "-"))
			if err := os.Symlink(to, p); err != nil {
				t.Fatal(err)
			}
			if err := WriteFile(p, []byte("new"), 0o644); err != nil {
				t.Fatal(err)
			}
			fi, err := os.Lstat(p)
			if err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("%s is not a regular file after the write: %v %v", p, fi, err)
			}
			if b, _ := os.ReadFile(p); string(b) != "new" {
				t.Fatalf("%s holds %q", p, b)
			}
		})
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("the file outside was written through the link: %q", b)
	}
	if _, err := os.Lstat(filepath.Join(outside, "created")); err == nil {
		t.Fatal("the dangling link's target was created")
	}
	left, _ := os.ReadDir(inside)
	for _, e := range left {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Fatalf("temporary file left: %s", e.Name())
		}
	}
}

func TestMkdirInsideRefusesALink(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := os.Symlink(outside, filepath.Join(root, "case")); err != nil {
		t.Fatal(err)
	}
	if _, err := MkdirInside(root, "case"); !errors.Is(err, ErrLink) {
		t.Fatalf("MkdirInside through a link: %v, want ErrLink", err)
	}
	p, err := MkdirInside(root, "fresh")
	if err != nil {
		t.Fatal(err)
	}
	if p2, err := MkdirInside(root, "fresh"); err != nil || p2 != p {
		t.Fatalf("again: %s %v", p2, err)
	}
	if _, err := MkdirInside(root, "../x"); err == nil {
		t.Fatal("a name with a separator was accepted")
	}
}

func TestMkdirInsideMakesTheRootToo(t *testing.T) {
	root := filepath.Join(t.TempDir(), "a", "b")
	if _, err := MkdirInside(root, "c"); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(filepath.Join(root, "c")); err != nil || !fi.IsDir() {
		t.Fatalf("%v %v", fi, err)
	}
}
