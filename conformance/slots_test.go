package conformance

import (
	"context"
	"errors"
	"sort"
	"testing"
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
func background(ctx context.Context, s *slots, resume bool) <-chan error {
	done := make(chan error, 1)
	go func() { done <- s.take(ctx, resume) }()
	return done
}

// waitTaken waits (bounded: a failure, not a timing) for a take to return.
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

// settleTakes lets the background takes queue up: a take that cannot be
// served must still be waiting after this.
func settleTakes() { time.Sleep(20 * time.Millisecond) }

// One slot: a case that waits between steps lends it to a case not yet
// started; taking it back it goes before the cases still to start; and no
// more than two cases are under way at once.
func TestSlotsLendTheWaitsAndResumeFirst(t *testing.T) {
	ctx := context.Background()
	s := newSlots(1)
	if err := s.take(ctx, false); err != nil { // case A starts
		t.Fatal(err)
	}
	a := newCaseSlot(s)
	b := background(ctx, s, false) // case B waits to start
	settleTakes()
	if taken(b) {
		t.Fatal("B started while A held the only slot")
	}
	a.wait(false) // A settles: B starts
	waitTaken(t, "B", b)
	bs := newCaseSlot(s)
	c := background(ctx, s, false) // C waits to start
	settleTakes()
	ar := make(chan error, 1)
	go func() { ar <- a.resume(ctx) }() // A wants its slot back
	settleTakes()
	bs.wait(false) // B settles: A, under way, goes before C
	waitTaken(t, "A resuming", ar)
	if taken(c) {
		t.Fatal("C started before A, under way, had its slot back")
	}
	a.finish() // A's last step is answered: its slot goes to C...
	waitTaken(t, "C", c)
	cs := newCaseSlot(s)
	d := background(ctx, s, false)
	cs.finish() // C's last answer: one case (B) under way, the slot free: D starts
	waitTaken(t, "D", d)
	bs.finish()
	newCaseSlot(s).finish()
	if s.free != 1 || s.open != 0 || len(s.resumers)+len(s.starters) != 0 {
		t.Errorf("after every case: %d free, %d under way, %d waiting; want 1, 0, 0", s.free, s.open, len(s.resumers)+len(s.starters))
	}
}

// twoWaiting starts two cases on s, each waiting after a settle.
func twoWaiting(t *testing.T, s *slots) []*caseSlot {
	t.Helper()
	var under []*caseSlot
	for range 2 {
		if err := s.take(context.Background(), false); err != nil {
			t.Fatal(err)
		}
		cs := newCaseSlot(s)
		cs.wait(false)
		under = append(under, cs)
	}
	return under
}

// thirdHeldBack starts two cases on s (one slot), each waiting after a
// settle, and a third that must not start yet.
func thirdHeldBack(t *testing.T, s *slots) ([]*caseSlot, <-chan error) {
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
	s := newSlots(1)
	under, third := thirdHeldBack(t, s)
	under[0].finish()
	waitTaken(t, "the third case", third)
}

// A case whose agent is shutting down for a restart counts as under way
// again only once it resumes: meanwhile another case starts, as it would
// after a last answer.
func TestSlotsARestartIsNotUnderWay(t *testing.T) {
	ctx := context.Background()
	s := newSlots(1)
	under, third := thirdHeldBack(t, s)
	under[0].wait(true) // its agent shuts down for a restart
	waitTaken(t, "the third case", third)
	thirdSlot := newCaseSlot(s)
	resumed := make(chan error, 1)
	go func() { resumed <- under[0].resume(ctx) }()
	fourth := background(ctx, s, false)
	settleTakes()
	thirdSlot.finish() // the slot goes to the restarted case, under way first
	waitTaken(t, "the restarted case", resumed)
	if s.open != 2 {
		t.Errorf("after the restart %d cases under way, want 2", s.open)
	}
	under[0].finish()
	waitTaken(t, "the fourth case", fourth)
	newCaseSlot(s).finish()
	under[1].finish()
	if s.free != 1 || s.open != 0 || len(s.resumers)+len(s.starters) != 0 {
		t.Errorf("after every case: %d free, %d under way, %d waiting; want 1, 0, 0", s.free, s.open, len(s.resumers)+len(s.starters))
	}
}

// A take whose context ends returns its error and keeps no slot.
func TestSlotsTakeEndsWithItsContext(t *testing.T) {
	s := newSlots(1)
	if err := s.take(context.Background(), false); err != nil {
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
	newCaseSlot(s).finish()
	if s.free != 1 || s.open != 0 || len(s.starters) != 0 {
		t.Errorf("%d free, %d under way, %d waiting; want 1, 0, 0", s.free, s.open, len(s.starters))
	}
}

// With one slot, a case with several prompts lends its slot to the next
// case while it settles between them: the next case starts before the
// first one's last answer (before, it waited for it).
func TestSlotLentDuringTheSettleBetweenPrompts(t *testing.T) {
	var cases []*Case
	for _, c := range builtinCases(t) {
		if c.ID == "load-after-several" || c.ID == "load-between-prompts" {
			cases = append(cases, c)
		}
	}
	rep := runFake(t, "ok", func(c *Config) {
		c.Cases, c.Parallel, c.Settle, c.Dialect = cases, 1, 300*time.Millisecond, "todo_write"
	})
	evs := make([]*Evidence, 0, len(rep.Cases))
	for _, cr := range rep.Cases {
		if cr.Error != "" {
			t.Fatalf("%s: %s", cr.ID, cr.Error)
		}
		evs = append(evs, cr.Evidence())
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].Started.Before(evs[j].Started) })
	first, next := evs[0], evs[1]
	if !next.Started.Before(first.Started.Add(first.Answered)) {
		t.Errorf("%s started %s after %s, whose last step was answered at %s: the slot was held through the settles",
			next.Case.ID, next.Started.Sub(first.Started), first.Case.ID, first.Answered)
	}
}
