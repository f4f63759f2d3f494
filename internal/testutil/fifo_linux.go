package testutil

import (
	"os"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// WaitFIFODrained waits until the FIFO at path holds no unread byte: its
// reader has opened it and taken what was written, so it is in (or past)
// its first read. A FIFO's buffer is the kernel's, which no synctest
// bubble reaches (a read waiting on it is not durably blocked), so this
// polls it (TIOCINQ, Linux's FIONREAD, on a descriptor of its own); after a minute the test
// fails.
func WaitFIFODrained(t testing.TB, path string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR|unix.O_NONBLOCK, 0) // O_RDWR: waits for no reader or writer
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) { // polling the kernel's FIFO buffer: no fake clock reaches it
		n, err := unix.IoctlGetInt(int(f.Fd()), unix.TIOCINQ)
		if err != nil {
			t.Fatalf("FIONREAD on %s: %v", path, err)
		}
		if n == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute on, %d byte(s) of %s are still unread", n, path)
		}
	}
}
