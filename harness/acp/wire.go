package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// lineWriter serialises whole JSON-RPC lines onto the peer's input: the
// SDK's messages and the ones the bridge writes itself (parse errors, raw
// fault updates) never interleave. It counts the lines written so a waiter
// can tell when the next one went out.
//
// A write to a peer that stopped reading would block for ever, and with it
// the handler that wrote and the shutdown that waits for the handlers: with
// stallAfter set, a write that has not completed by then fails with
// ErrClientStalled, onStall is told (the bridge ends the connection), and
// every later write fails at once. The stalled write itself is left to
// complete or fail in its goroutine (a blocked write to a pipe cannot be
// taken back).
type lineWriter struct {
	mu    sync.Mutex
	w     io.Writer
	lines uint64
	bytes int64
	wake  chan struct{} // closed and replaced on every write
	// written, when set, is called after each write, outside the lock.
	written func()

	stallAfter time.Duration
	onStall    func(error)
	stalled    error
}

// ErrClientStalled says a write to the client did not complete within the
// bridge's WriteTimeout: the client stopped reading its input.
var ErrClientStalled = errors.New("the client stopped reading: a write to it stalled")

func newLineWriter(w io.Writer, stallAfter time.Duration, onStall func(error)) *lineWriter {
	return &lineWriter{w: w, wake: make(chan struct{}), stallAfter: stallAfter, onStall: onStall}
}

// Write writes p, which must be one or more whole lines, atomically.
func (lw *lineWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	if lw.stalled != nil {
		lw.mu.Unlock()
		return 0, lw.stalled
	}
	n, err := lw.write(p)
	lw.lines++
	lw.bytes += int64(n)
	close(lw.wake)
	lw.wake = make(chan struct{})
	lw.mu.Unlock()
	if lw.written != nil {
		lw.written()
	}
	return n, err
}

// total returns the bytes written so far.
func (lw *lineWriter) total() int64 {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.bytes
}

// write writes p within stallAfter (when set).
func (lw *lineWriter) write(p []byte) (int, error) {
	if lw.stallAfter <= 0 {
		return lw.w.Write(p)
	}
	type result struct {
		n   int
		err error
	}
	done := make(chan result, 1)
	go func() {
		n, err := lw.w.Write(p)
		done <- result{n, err}
	}()
	t := time.NewTimer(lw.stallAfter)
	defer t.Stop()
	select {
	case r := <-done:
		return r.n, r.err
	case <-t.C:
		lw.stalled = fmt.Errorf("%w: a write of %d bytes did not complete within %s", ErrClientStalled, len(p), lw.stallAfter)
		if lw.onStall != nil {
			lw.onStall(lw.stalled)
		}
		return 0, lw.stalled
	}
}

// count returns the number of writes so far and a channel closed by the
// next one.
func (lw *lineWriter) count() (uint64, <-chan struct{}) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.lines, lw.wake
}

// waitPast blocks until more than n writes happened, or ctx is done.
func (lw *lineWriter) waitPast(ctx context.Context, n uint64) error {
	for {
		c, wake := lw.count()
		if c > n {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// writeJSON writes v as one line.
func (lw *lineWriter) writeJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	if _, err := lw.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write message: %w", err)
	}
	return nil
}
