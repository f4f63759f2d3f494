package driver

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// A directory swapped for a symlink out of the case folder between the
// runner's check and its write (renameat2 RENAME_EXCHANGE: one atomic
// flip per call) must never steer a write outside.
func TestServeWriteSymlinkSwapRace(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	c := &conn{root: root}
	dir, link := filepath.Join(root, "d"), filepath.Join(root, "d.link")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	swapped := make(chan int)
	go func() {
		n := 0
		for {
			select {
			case <-stop:
				swapped <- n
				return
			default:
			}
			if unix.Renameat2(unix.AT_FDCWD, dir, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE) == nil {
				n++
			}
		}
	}()
	writes, ok := 0, 0
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); writes++ {
		_, _, rerr := serveJSON(t, c, "fs/write_text_file", map[string]any{"sessionId": "s",
			"path": filepath.Join(dir, "w.txt"), "content": "escaped"})
		if rerr == nil {
			ok++
		}
	}
	close(stop)
	n := <-swapped
	t.Logf("%d writes (%d succeeded) during %d swaps", writes, ok, n)
	if n == 0 {
		t.Skip("renameat2 RENAME_EXCHANGE is not supported here: no race to run")
	}
	if entries, _ := os.ReadDir(outside); len(entries) > 0 {
		t.Errorf("a write escaped the case folder: %v appeared outside", entries)
	}
}
