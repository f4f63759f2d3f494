package testutil

import (
	"context"
	"net"
	"net/http"
	"sync"
)

// PipeListener is a net.Listener whose connections are in-memory pipes
// (net.Pipe) made by its Dial: an HTTP server and client of a synctest
// bubble talk over it, where a goroutine waiting on a socket would not
// count as durably blocked and the bubble's clock and synctest.Wait would
// wait for it. Make it, and everything that uses it, inside the bubble.
type PipeListener struct {
	conns     chan net.Conn
	closed    chan struct{}
	closeOnce sync.Once
}

// NewPipeListener returns a listener with no connection yet.
func NewPipeListener() *PipeListener {
	return &PipeListener{conns: make(chan net.Conn), closed: make(chan struct{})}
}

// Accept waits for a Dial, or returns net.ErrClosed once l is closed.
func (l *PipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

// Close stops Accept and Dial; the connections made stay open.
func (l *PipeListener) Close() error {
	l.closeOnce.Do(func() { close(l.closed) })
	return nil
}

// Addr is pipeAddr: "pipe:80", the host of an http:// URL.
func (l *PipeListener) Addr() net.Addr { return pipeAddr{} }

// Dial is a net.Dialer's DialContext: it ignores the address and hands one
// end of a new pipe to Accept.
func (l *PipeListener) Dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// Client is an HTTP client whose every connection is a Dial of l. Close
// its idle connections (CloseIdleConnections) before the bubble ends.
func (l *PipeListener) Client() *http.Client {
	return &http.Client{Transport: &http.Transport{DialContext: l.Dial}}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "pipe:80" }
