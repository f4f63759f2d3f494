package driver

import (
	"fmt"
	"sync"
	"time"
)

// ExitWatch is what one run has learned of how its agent exits. An agent
// that does not exit once its stdin closes (codex-acp) costs the whole
// grace on every shutdown, a restart's and a case's last: once one process
// of the run was seen to wait the grace out (Learn), every later shutdown
// in the run, and every one waiting out its grace at that moment, closes
// stdin and signals at once (SIGTERM, then the usual grace, SIGKILL), and
// says so (ProcResult.GraceCut). Only a failure observed in full teaches
// it: an agent that exits on its own is never signalled early.
//
// One ExitWatch serves one run (conformance.Run: its cases, repeats, the
// cases run again alone and its pool), never runs that must show an exit
// failure on their own (a shrink's). The zero value is not usable; a nil
// *ExitWatch learns nothing and cuts nothing.
type ExitWatch struct {
	once    sync.Once
	learned chan struct{} // closed once why is set
	why     string
}

// NewExitWatch returns a watch that has learned nothing yet.
func NewExitWatch() *ExitWatch { return &ExitWatch{learned: make(chan struct{})} }

// learn records that the process who (a process whose shutdown is judged:
// "agent process 1 of case load-basic") did not exit within grace of its
// stdin closing; the first process to show it is the one named.
func (w *ExitWatch) learn(who string, grace time.Duration) {
	if w == nil || who == "" || grace <= 0 {
		return
	}
	w.once.Do(func() {
		w.why = fmt.Sprintf("%s did not exit within %s of its stdin closing", who, grace)
		close(w.learned)
	})
}

// Learned says what the run learned: which process did not exit within
// the grace of its stdin closing ("" while none did).
func (w *ExitWatch) Learned() string {
	if w == nil {
		return ""
	}
	select {
	case <-w.learned:
		return w.why
	default:
		return ""
	}
}

// done is closed once the watch has learned (nil for a nil watch: a
// receive on it blocks for ever).
func (w *ExitWatch) done() <-chan struct{} {
	if w == nil {
		return nil
	}
	return w.learned
}

// awaitExit waits up to grace for exited, or until w learns that the
// agent does not exit on its own. It reports whether the process exited;
// when it did not, why is what w had learned if the grace was not waited
// out ("" when it was), and early whether w knew it before the wait began
// (the process was given no grace at all).
func (w *ExitWatch) awaitExit(exited <-chan struct{}, grace time.Duration) (ok bool, why string, early bool) {
	if waitFor(exited, 0) {
		return true, "", false
	}
	if why := w.Learned(); why != "" {
		return false, why, true
	}
	if grace <= 0 {
		return false, "", false
	}
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-exited:
		return true, "", false
	case <-t.C:
		return false, "", false
	case <-w.done():
		// It may have exited meanwhile: then it did so on its own.
		if waitFor(exited, 0) {
			return true, "", false
		}
		return false, w.Learned(), false
	}
}
