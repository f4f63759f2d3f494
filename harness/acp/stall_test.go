package acp_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/todoharness/todoharness/harness/acp"
	"github.com/todoharness/todoharness/harness/acp/acpclient"
	"github.com/todoharness/todoharness/internal/testutil"
)

// A client that stops reading the agent's output cannot hold the agent:
// the write that cannot complete ends the connection, Serve returns
// ErrClientStalled, and the log says why. (Before: the answer's write
// blocked for ever, and Serve with it.)
func TestAClientThatStopsReadingEndsTheConnection(t *testing.T) {
	var logs testutil.SyncBuffer
	b := newBridge(t, func(c *acp.Config) {
		c.Logger, c.WriteTimeout = slog.New(slog.NewTextHandler(&logs, nil)), 50*time.Millisecond
	})
	inR, inW := io.Pipe()
	defer inW.Close()
	_, stuck := io.Pipe() // the client's end of the agent's output, never read
	defer stuck.Close()
	var err error
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
	b := newBridge(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	s := acpclient.Serve(ctx, b)
	cancel() // the agent stops serving
	var err error
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

// newBridge is a bridge over a fresh session folder, with the shipped tools
// and a fake model; mod (if any) edits its configuration first.
func newBridge(t *testing.T, mod func(*acp.Config)) *acp.Bridge {
	t.Helper()
	var opts []rigOpt
	if mod != nil {
		opts = append(opts, mod)
	}
	b, _ := bridgeIn(t, "", newFake(), opts...)
	return b
}
