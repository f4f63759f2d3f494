package mockmodel

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A server made without a script listens at once (its URL can go into an
// agent's environment) and holds every model request until Play gives it
// the script; the request then gets the script's first turn. A second Play
// is refused, naming both scripts.
func TestPlayAnswersTheRequestsThatWaited(t *testing.T) {
	srv := NewServer(nil)
	defer srv.Close()
	changed := srv.Journal().Changed()
	type answer struct {
		body string
		err  error
	}
	got := make(chan answer, 1)
	go func() {
		req := `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"t","parameters":{"type":"object"}}}]}`
		resp, err := srv.Client().Post(srv.BaseURL()+"/chat/completions", "application/json", strings.NewReader(req))
		if err != nil {
			got <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		got <- answer{body: string(b), err: err}
	}()
	// The request arrives and waits: in flight, not journaled, unanswered.
	for deadline := time.Now().Add(time.Minute); srv.Activity().InFlight == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request never reached the server")
		}
	}
	select {
	case a := <-got:
		t.Fatalf("answered before Play: %q %v", a.body, a.err)
	case <-changed:
		t.Fatal("journaled before Play")
	default:
	}
	s, err := ParseScript([]byte("- text: hello from the late script\n"), "late.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Play(s); err != nil {
		t.Fatal(err)
	}
	a := <-got
	if a.err != nil || !strings.Contains(a.body, "hello from the late script") {
		t.Fatalf("answer after Play: %q %v", a.body, a.err)
	}
	select {
	case <-changed:
	default:
		t.Error("Changed was not closed by the request's entry")
	}
	if e := srv.Journal().Entries(); len(e) != 1 || e[0].TurnIndex != 0 {
		t.Errorf("journal after Play: %+v", e)
	}
	err = srv.Play(s)
	if err == nil || !strings.Contains(err.Error(), "late.yaml") || !strings.Contains(err.Error(), "already") {
		t.Errorf("second Play: %v, want it refused naming the script", err)
	}
}

// A request whose client goes away while it waits for the script is
// dropped: nothing journaled, no turn taken.
func TestAWaitingRequestTheClientAbandonsTakesNoTurn(t *testing.T) {
	srv := NewServer(nil)
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.BaseURL()+"/chat/completions",
			strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
		req.Header.Set("Content-Type", "application/json")
		resp, err := srv.Client().Do(req)
		if err == nil {
			resp.Body.Close()
		}
		done <- err
	}()
	for deadline := time.Now().Add(time.Minute); srv.Activity().InFlight == 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the request never reached the server")
		}
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("the abandoned request was answered")
	}
	for deadline := time.Now().Add(time.Minute); srv.Activity().InFlight > 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the abandoned request is still in flight")
		}
	}
	s, _ := ParseScript([]byte("- text: first\n"), "late.yaml")
	if err := srv.Play(s); err != nil {
		t.Fatal(err)
	}
	if n, left := srv.Journal().Len(), srv.Remaining(); n != 0 || left != 1 {
		t.Errorf("after the abandoned request: %d journaled, %d turn(s) left; want 0 and 1", n, left)
	}
}
