package slots

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// taken reports whether a take running in the background has returned.
func taken(done <-chan error) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

// background starts a take of s and returns the channel its result comes on.
func background(ctx context.Context, s *Pool, resume bool) <-chan error {
	done := make(chan error, 1)
	go func() { done <- s.Take(ctx, resume) }()
	return done
}

// waitTaken waits (bounded: a failure, not a timing) for a take to return.
// In a bubble the minute is the fake clock's: a take that is never served
// fails at once, when every goroutine is blocked.
func waitTaken(t *testing.T, what string, done <-chan error) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-time.After(time.Minute):
		t.Fatalf("%s never got a slot", what)
	}
}

// settleTakes returns once every other goroutine of the test's bubble is
// blocked: each background take has either returned or is queued, so a
// take that cannot be served must still be waiting after this.
func settleTakes() { synctest.Wait() }

// One slot: a case that waits between steps lends it to a case not yet
// started; taking it back it goes before the cases still to start; and no
// more than two cases are under way at once.
func TestSlotsLendTheWaitsAndResumeFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := New(1)
		if err := s.Take(ctx, false); err != nil { // case A starts
			t.Fatal(err)
		}
		a := NewCase(s)
		b := background(ctx, s, false) // case B waits to start
		settleTakes()
		if taken(b) {
			t.Fatal("B started while A held the only slot")
		}
		a.Wait(false) // A settles: B starts
		waitTaken(t, "B", b)
		bs := NewCase(s)
		c := background(ctx, s, false) // C waits to start
		settleTakes()
		ar := make(chan error, 1)
		go func() { ar <- a.Resume(ctx) }() // A wants its slot back
		settleTakes()
		bs.Wait(false) // B settles: A, under way, goes before C
		waitTaken(t, "A resuming", ar)
		if taken(c) {
			t.Fatal("C started before A, under way, had its slot back")
		}
		a.Finish() // A's last step is answered: its slot goes to C...
		waitTaken(t, "C", c)
		cs := NewCase(s)
		d := background(ctx, s, false)
		cs.Finish() // C's last answer: one case (B) under way, the slot free: D starts
		waitTaken(t, "D", d)
		bs.Finish()
		NewCase(s).Finish()
		if s.free != 1 || s.open != 0 || len(s.resumers)+len(s.starters) != 0 {
			t.Errorf("after every case: %d free, %d under way, %d waiting; want 1, 0, 0", s.free, s.open, len(s.resumers)+len(s.starters))
		}
	})
}

// twoWaiting starts two cases on s, each waiting after a settle.
func twoWaiting(t *testing.T, s *Pool) []*Case {
	t.Helper()
	var under []*Case
	for range 2 {
		if err := s.Take(context.Background(), false); err != nil {
			t.Fatal(err)
		}
		cs := NewCase(s)
		cs.Wait(false)
		under = append(under, cs)
	}
	return under
}

// thirdHeldBack starts two cases on s (one slot), each waiting after a
// settle, and a third that must not start yet.
func thirdHeldBack(t *testing.T, s *Pool) ([]*Case, <-chan error) {
	t.Helper()
	under := twoWaiting(t, s)
	third := background(context.Background(), s, false)
	settleTakes()
	if taken(third) {
		t.Fatal("a third case started with one slot and two cases under way (both waiting)")
	}
	return under, third
}

// At most twice as many cases are under way as there are slots, however
// many of them wait.
func TestSlotsBoundTheCasesUnderWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(1)
		under, third := thirdHeldBack(t, s)
		under[0].Finish()
		waitTaken(t, "the third case", third)
	})
}

// A case whose agent is shutting down for a restart counts as under way
// again only once it resumes: meanwhile another case starts, as it would
// after a last answer.
func TestSlotsARestartIsNotUnderWay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		s := New(1)
		under, third := thirdHeldBack(t, s)
		under[0].Wait(true) // its agent shuts down for a restart
		waitTaken(t, "the third case", third)
		thirdSlot := NewCase(s)
		resumed := make(chan error, 1)
		go func() { resumed <- under[0].Resume(ctx) }()
		fourth := background(ctx, s, false)
		settleTakes()
		thirdSlot.Finish() // the slot goes to the restarted case, under way first
		waitTaken(t, "the restarted case", resumed)
		if s.open != 2 {
			t.Errorf("after the restart %d cases under way, want 2", s.open)
		}
		under[0].Finish()
		waitTaken(t, "the fourth case", fourth)
		NewCase(s).Finish()
		under[1].Finish()
		if s.free != 1 || s.open != 0 || len(s.resumers)+len(s.starters) != 0 {
			t.Errorf("after every case: %d free, %d under way, %d waiting; want 1, 0, 0", s.free, s.open, len(s.resumers)+len(s.starters))
		}
	})
}

// A take whose context ends returns its error and keeps no slot.
func TestSlotsTakeEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := New(1)
		if err := s.Take(context.Background(), false); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := background(ctx, s, false)
		settleTakes()
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("take = %v, want context.Canceled", err)
			}
		case <-time.After(time.Minute):
			t.Fatal("take did not return when its context ended")
		}
		NewCase(s).Finish()
		if s.free != 1 || s.open != 0 || len(s.starters) != 0 {
			t.Errorf("%d free, %d under way, %d waiting; want 1, 0, 0", s.free, s.open, len(s.starters))
		}
	})
}
