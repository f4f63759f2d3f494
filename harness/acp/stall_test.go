package acp_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoharness/todoharness/harness/acp"
	"github.com/todoharness/todoharness/harness/acp/acpclient"
	"github.com/todoharness/todoharness/harness/builtin"
	"github.com/todoharness/todoharness/harness/session"
)

// syncBuffer is a bytes.Buffer safe for the logger's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A client that stops reading the agent's output cannot hold the agent:
// the write that cannot complete ends the connection, Serve returns
// ErrClientStalled, and the log says why. (Before: the answer's write
// blocked for ever, and Serve with it.)
func TestAClientThatStopsReadingEndsTheConnection(t *testing.T) {
	reg, err := builtin.Compose("")
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	b, err := acp.New(acp.Config{Sessions: session.Dir{Path: t.TempDir()}, Model: newFake(), Tools: reg,
		Logger: slog.New(slog.NewTextHandler(&logs, nil)), WriteTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	defer inW.Close()
	_, stuck := io.Pipe() // the client's end of the agent's output, never read
	defer stuck.Close()
	served := make(chan error, 1)
	go func() { served <- b.Serve(context.Background(), inR, stuck) }()
	go func() {
		_, _ = io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n")
	}()
	select {
	case err = <-served:
	case <-time.After(time.Minute): // a failure bound, not a measurement
		t.Fatal("Serve still blocked on a client that stopped reading")
	}
	if !errors.Is(err, acp.ErrClientStalled) || !strings.Contains(err.Error(), "did not complete within 50ms") {
		t.Errorf("Serve = %v, want ErrClientStalled naming the bound", err)
	}
	if !strings.Contains(logs.String(), "ending the connection") || !strings.Contains(logs.String(), "the client stopped reading") {
		t.Errorf("the log does not say why the connection ended:\n%s", logs.String())
	}
}

// Once the agent stopped serving, a client's write fails instead of
// blocking on the pipe nobody reads. (Before: a call whose context ended
// after the bridge returned blocked for ever in the SDK's cancel.)
func TestWritesToAStoppedAgentFail(t *testing.T) {
	reg, err := builtin.Compose("")
	if err != nil {
		t.Fatal(err)
	}
	b, err := acp.New(acp.Config{Sessions: session.Dir{Path: t.TempDir()}, Model: newFake(), Tools: reg})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := acpclient.Serve(ctx, b)
	cancel() // the agent stops serving
	done := make(chan error, 1)
	go func() {
		for {
			if err := s.WriteRaw(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`); err != nil {
				done <- err
				return
			}
		}
	}()
	select {
	case err = <-done:
	case <-time.After(time.Minute): // a failure bound, not a measurement
		t.Fatal("a write to a stopped agent is still blocked")
	}
	if !errors.Is(err, acpclient.ErrAgentStopped) {
		t.Errorf("a write to a stopped agent: %v, want ErrAgentStopped", err)
	}
}
