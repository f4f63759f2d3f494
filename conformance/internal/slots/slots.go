package slots

import (
	"context"
	"sync"
)

// Pool is a run's parallel slots (conformance.Config.Parallel): a case
// holds one while it has a step to run, and none while it only waits (the settle
// between its steps, the settle and the exit after its last answer). A
// case taking a slot back after a settle goes before a case not yet
// started, and at most twice as many cases are under way (started, their
// last step not answered) as there are slots: the waits of some cases fill
// with the steps of others, and no more agents are open at once than the
// slots keep busy.
type Pool struct {
	mu            sync.Mutex
	free          int
	open, maxOpen int
	resumers      []chan struct{} // cases under way, waiting after a settle
	starters      []chan struct{} // cases not yet started
}

func New(n int) *Pool { return &Pool{free: n, maxOpen: 2 * n} }

// Take waits for a slot; resume says the case is under way (else it
// starts, and counts as under way until finish). It returns ctx's error
// when ctx ends first, and then holds no slot.
func (s *Pool) Take(ctx context.Context, resume bool) error {
	ch := make(chan struct{})
	s.mu.Lock()
	if resume {
		s.resumers = append(s.resumers, ch)
	} else {
		s.starters = append(s.starters, ch)
	}
	s.dispatchLocked()
	s.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	select {
	case <-ch: // handed over as ctx ended: give it back
		s.free++
		if !resume {
			s.open--
		}
		s.dispatchLocked()
	default:
		s.resumers, s.starters = without(s.resumers, ch), without(s.starters, ch)
	}
	return ctx.Err()
}

// adjust gives back free slots (or takes them, when negative) and says
// open more cases are under way (fewer, when negative): a case's last step
// is answered, or its restarted agent counts again.
func (s *Pool) adjust(free, open int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.free += free
	s.open += open
	s.dispatchLocked()
}

// dispatchLocked hands the free slots out: to the cases under way first,
// then to the cases waiting to start while fewer than maxOpen are under
// way.
func (s *Pool) dispatchLocked() {
	for s.free > 0 {
		switch {
		case len(s.resumers) > 0:
			close(s.resumers[0])
			s.resumers = s.resumers[1:]
		case len(s.starters) > 0 && s.open < s.maxOpen:
			close(s.starters[0])
			s.starters = s.starters[1:]
			s.open++
		default:
			return
		}
		s.free--
	}
}

func without(chs []chan struct{}, ch chan struct{}) []chan struct{} {
	for i, c := range chs {
		if c == ch {
			return append(chs[:i:i], chs[i+1:]...)
		}
	}
	return chs
}

// Case is one started case's hold on s: Wait gives its slot back
// while it waits between steps, Resume takes one again, and Finish gives
// it back for good (once, however often it is called).
type Case struct {
	s                       *Pool
	mu                      sync.Mutex
	held, finished, exiting bool
}

// NewCase is a case that took a slot of s to start (Take).
func NewCase(s *Pool) *Case { return &Case{s: s, held: true} }

// Wait gives the slot back while the case waits; exiting says its agent
// is shutting down (a restart's grace): the case then counts as under way
// only once it resumes, as a case whose agent exits after its last step
// no longer counts, so the restarts of a few long cases do not keep new
// cases from starting.
func (c *Case) Wait(exiting bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held {
		c.held = false
		c.s.adjust(1, 0)
	}
	if exiting && !c.exiting && !c.finished {
		c.exiting = true
		c.s.adjust(0, -1)
	}
}

// Resume takes a slot again after Wait, before the case's next step.
func (c *Case) Resume(ctx context.Context) error {
	if err := c.s.Take(ctx, true); err != nil {
		return err
	}
	c.mu.Lock()
	c.held = true
	if c.exiting {
		c.exiting = false
		c.s.adjust(0, 1)
	}
	c.mu.Unlock()
	return nil
}

// Finish gives the slot back for good: the case's last step is answered
// (or it ended).
func (c *Case) Finish() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.finished {
		return
	}
	c.finished = true
	if c.held {
		c.held = false
		c.s.adjust(1, 0)
	}
	if !c.exiting {
		c.s.adjust(0, -1)
	}
}
