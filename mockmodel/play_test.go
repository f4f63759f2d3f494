package mockmodel

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/synctest"

	"github.com/todoharness/todoharness/internal/testutil"
)

// A server made without a script listens at once (its URL can go into an
// agent's environment) and holds every model request until Play gives it
// the script; the request then gets the script's first turn. A second Play
// is refused, naming both scripts.
func TestPlayAnswersTheRequestsThatWaited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, client := pipeServer(t, nil)
		changed := srv.Journal().Changed()
		type answer struct {
			body string
			err  error
		}
		got := make(chan answer, 1)
		go func() {
			req := `{"model":"m","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"t","parameters":{"type":"object"}}}]}`
			resp, err := client.Post(srv.BaseURL()+"/chat/completions", "application/json", strings.NewReader(req))
			if err != nil {
				got <- answer{err: err}
				return
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			got <- answer{body: string(b), err: err}
		}()
		// The request arrives and waits: in flight, not journaled, unanswered.
		synctest.Wait()
		if n := srv.Activity().InFlight; n != 1 {
			t.Fatalf("%d request(s) in flight, want the one waiting for the script", n)
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
	})
}

// pipeServer starts a server playing s (nil: none yet) on an in-memory listener
// (testutil.PipeListener: the test runs in a synctest bubble, where
// synctest.Wait returns once the server and the client are both waiting)
// and returns it with a client of that listener; both are closed when the
// test ends.
func pipeServer(t *testing.T, s *Script) (*Server, *http.Client) {
	t.Helper()
	l := testutil.NewPipeListener()
	srv := NewUnstartedServer(s)
	srv.Listener = l
	srv.Start()
	client := l.Client()
	t.Cleanup(func() {
		srv.Close()
		client.CloseIdleConnections()
	})
	return srv, client
}

// A request whose client goes away while it waits for the script is
// dropped: nothing journaled, no turn taken.
func TestAWaitingRequestTheClientAbandonsTakesNoTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv, client := pipeServer(t, nil)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() {
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.BaseURL()+"/chat/completions",
				strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
			req.Header.Set("Content-Type", "application/json")
			resp, err := client.Do(req)
			if err == nil {
				resp.Body.Close()
			}
			done <- err
		}()
		synctest.Wait()
		if n := srv.Activity().InFlight; n != 1 {
			t.Fatalf("%d request(s) in flight, want the one waiting for the script", n)
		}
		cancel()
		if err := <-done; err == nil {
			t.Fatal("the abandoned request was answered")
		}
		synctest.Wait()
		if n := srv.Activity().InFlight; n != 0 {
			t.Fatalf("the abandoned request is still in flight (%d)", n)
		}
		s, _ := ParseScript([]byte("- text: first\n"), "late.yaml")
		if err := srv.Play(s); err != nil {
			t.Fatal(err)
		}
		if n, left := srv.Journal().Len(), srv.Remaining(); n != 0 || left != 1 {
			t.Errorf("after the abandoned request: %d journaled, %d turn(s) left; want 0 and 1", n, left)
		}
	})
}
