package safefile

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
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

// A report whose write fails part way (a full disk, a file size limit)
// leaves the file that was there as it was, and no temporary file.
func TestWriteReportKeepsTheOldFileWhenTheWriteFails(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "conform.json")
	if err := os.WriteFile(p, []byte("good"), 0o644); err != nil {
		t.Fatal(err)
	}
	full := errors.New("no space left on device")
	err := WriteReport(context.Background(), p, 0o644, func(w io.Writer) error {
		w.Write([]byte("{\"trunc")) //nolint:errcheck
		return full
	})
	if !errors.Is(err, full) || !strings.Contains(err.Error(), p) {
		t.Fatalf("WriteReport = %v, want the write's error naming the file", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "good" {
		t.Fatalf("the old report was replaced by %q", b)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Fatalf("left in the folder: %v", es)
	}
	if err := WriteReport(context.Background(), p, 0o644, func(w io.Writer) error { _, err := w.Write([]byte("new")); return err }); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(p); string(b) != "new" {
		t.Fatalf("after a good write: %q", b)
	}
}

// A report to a link the user made replaces the file it names; the link
// stays.
func TestWriteReportFollowsALink(t *testing.T) {
	dir := t.TempDir()
	target, link := filepath.Join(dir, "real.json"), filepath.Join(dir, "latest.json")
	if err := os.WriteFile(target, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if err := WriteReport(context.Background(), link, 0o644, func(w io.Writer) error { _, err := w.Write([]byte("new")); return err }); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("the link was replaced: %v %v", fi, err)
	}
	if b, _ := os.ReadFile(target); string(b) != "new" {
		t.Fatalf("the file the link names holds %q", b)
	}
}

// A report to a FIFO no one reads is refused at once (never a wait in
// open); to a FIFO with a reader it is streamed; CheckWritable never opens
// one (a reader would see its input end).
func TestWriteReportToAFIFO(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	done := make(chan error, 1)
	go func() {
		done <- WriteReport(context.Background(), fifo, 0o644, func(w io.Writer) error { _, err := w.Write([]byte("x")); return err })
	}()
	select {
	case err := <-done:
		if !errors.Is(err, ErrNoReader) || !strings.Contains(err.Error(), fifo) {
			t.Fatalf("no reader: %v, want ErrNoReader naming the FIFO", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("WriteReport waits for a reader of the FIFO")
	}
	if err := CheckWritable(fifo); err != nil {
		t.Fatalf("CheckWritable(FIFO) = %v", err)
	}
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := WriteReport(context.Background(), fifo, 0o644, func(w io.Writer) error { _, err := w.Write([]byte("report")); return err }); err != nil {
		t.Fatalf("with a reader: %v", err)
	}
	buf := make([]byte, 16)
	if n, _ := r.Read(buf); string(buf[:n]) != "report" {
		t.Fatalf("the reader got %q", buf[:n])
	}
	if fi, err := os.Lstat(fifo); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("the FIFO was replaced: %v %v", fi, err)
	}
}

// A write to a FIFO whose reader stops reading ends with the context.
func TestWriteReportToAStalledFIFOEndsWithTheContext(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- WriteReport(ctx, fifo, 0o644, func(w io.Writer) error {
			_, err := w.Write(make([]byte, 4<<20)) // more than a pipe holds
			return err
		})
	}()
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("WriteReport = %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("the write to the stalled FIFO did not end with its context")
	}
}

// CheckWritable refuses a folder and a folder it cannot write in, and
// leaves nothing behind.
func TestCheckWritable(t *testing.T) {
	dir := t.TempDir()
	if err := CheckWritable(dir); err == nil {
		t.Fatal("a folder was accepted")
	}
	if err := CheckWritable(filepath.Join(dir, "sub", "r.json")); err != nil {
		t.Fatal(err)
	}
	if es, _ := os.ReadDir(filepath.Join(dir, "sub")); len(es) != 0 {
		t.Fatalf("left behind: %v", es)
	}
}

func TestOpenRefusesAndNamesThePath(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	if _, err := Open(fifo, 10); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "a FIFO") {
		t.Fatalf("Open(FIFO) = %v", err)
	}
}
