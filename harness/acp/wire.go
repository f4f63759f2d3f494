package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// lineWriter serialises whole JSON-RPC lines onto the peer's input: the
// SDK's messages and the ones the bridge writes itself (parse errors, raw
// fault updates) never interleave. It counts the lines written so a waiter
// can tell when the next one went out.
type lineWriter struct {
	mu    sync.Mutex
	w     io.Writer
	lines uint64
	wake  chan struct{} // closed and replaced on every write
}

func newLineWriter(w io.Writer) *lineWriter {
	return &lineWriter{w: w, wake: make(chan struct{})}
}

// Write writes p, which must be one or more whole lines, atomically.
func (lw *lineWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	n, err := lw.w.Write(p)
	lw.lines++
	close(lw.wake)
	lw.wake = make(chan struct{})
	return n, err
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
