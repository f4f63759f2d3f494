package mockmodel

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// A request is in flight from its arrival until its handler returns (a
// streamed answer: until its last byte is written, or its client goes
// away); Requests and Taken count it from its arrival. In a synctest
// bubble, synctest.Wait says when the handler has returned.
func TestActivityCountsARequestInFlightUntilItsHandlerReturns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := ParseScript([]byte("- text: first\n- text: a b\n  fault: hang\n"), "activity.yaml")
		if err != nil {
			t.Fatal(err)
		}
		srv, client := pipeServer(t, s)
		if a := srv.Activity(); a != (Activity{}) {
			t.Fatalf("activity before any request: %+v", a)
		}
		start := time.Now()
		stream := func(ctx context.Context) error {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.BaseURL()+"/chat/completions",
				strings.NewReader(`{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`))
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			defer resp.Body.Close()
			_, err = io.ReadAll(resp.Body)
			return err
		}
		if err := stream(context.Background()); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if a := srv.Activity(); a.InFlight != 0 || a.Requests != 1 || a.Taken != 1 || a.Last.Before(start) {
			t.Errorf("after the first answer: %+v, want none in flight, 1 request, 1 turn taken, the last activity since the start", a)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- stream(ctx) }()
		synctest.Wait()
		select {
		case err := <-done:
			t.Fatalf("the hanging turn was answered: %v", err)
		default:
		}
		if a := srv.Activity(); a.InFlight != 1 || a.Requests != 2 || a.Taken != 2 {
			t.Errorf("during the hanging answer: %+v, want 1 in flight, 2 requests, 2 turns taken", a)
		}
		cancel()
		if err := <-done; err == nil {
			t.Error("the hanging answer ended without an error after its client went away")
		}
		synctest.Wait()
		if a := srv.Activity(); a.InFlight != 0 || a.Requests != 2 {
			t.Errorf("after the client went away: %+v, want none in flight, 2 requests", a)
		}
	})
}
