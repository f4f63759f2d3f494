package driver

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// TestTeeFromLosesNoLine: a case that attaches to a process while it
// writes its stderr (a pooled restart's fresh process: its ready line)
// gets every line, either in what was kept so far or through the tee.
// Reading the kept text and adding the tee apart lost a line written
// between the two (a restart case's report once had no ready line).
//
// The line is written while head runs: with the kept text read and the tee
// added under one lock, the write waits for teeFrom and reaches the tee,
// however the goroutines are scheduled; the pause only gives a wrong
// teeFrom the chance to show itself.
func TestTeeFromLosesNoLine(t *testing.T) {
	tb := newTailBuffer(1 << 20)
	_, _ = tb.Write([]byte("started\n"))
	var got strings.Builder
	var mu sync.Mutex
	w := writerFunc(func(p []byte) (int, error) { mu.Lock(); defer mu.Unlock(); return got.Write(p) })
	written := make(chan struct{})
	tb.teeFrom(w, func(sofar string) string {
		go func() {
			_, _ = tb.Write([]byte("ready\n"))
			close(written)
		}()
		select {
		case <-written:
		case <-time.After(50 * time.Millisecond):
		}
		return sofar
	})
	<-written
	mu.Lock()
	defer mu.Unlock()
	if want := "started\nready\n"; got.String() != want {
		t.Errorf("the case got %q, want %q (what was kept, then the line written as it attached)", got.String(), want)
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
