package testutil

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"testing"
	"testing/synctest"
)

// A server and a client of a PipeListener talk in a synctest bubble; once
// it is closed, Accept and Dial both fail with net.ErrClosed.
func TestPipeListenerServesHTTPInABubble(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := NewPipeListener()
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "hi") })}
		served := make(chan error, 1)
		go func() { served <- srv.Serve(l) }()
		c := l.Client()
		resp, err := c.Get("http://" + l.Addr().String() + "/")
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || string(b) != "hi" {
			t.Fatalf("body %q, %v; want hi", b, err)
		}
		c.CloseIdleConnections()
		if err := srv.Close(); err != nil {
			t.Fatal(err)
		}
		if err := <-served; !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("Serve returned %v, want http.ErrServerClosed", err)
		}
		if _, err := l.Accept(); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Accept after Close: %v, want net.ErrClosed", err)
		}
		if _, err := l.Dial(context.Background(), "tcp", ""); !errors.Is(err, net.ErrClosed) {
			t.Errorf("Dial after Close: %v, want net.ErrClosed", err)
		}
	})
}
