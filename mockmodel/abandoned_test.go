package mockmodel

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/todoharness/todoharness/internal/testutil"
)

// A client that hangs up before its request body is whole (an agent whose
// turn was cancelled aborts its model request) sent the model nothing: no
// request is journaled, so no refusal says the conversation left the
// script, and the next request still gets the first turn. (Before: "read
// body: unexpected EOF" was journaled as a refused request, and the
// conformance runner failed RUN-1 on it.)
func TestARequestTheClientAbandonsIsNotJournaled(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s, err := ParseScript([]byte("- text: hello\n"), "abandoned.yaml")
		if err != nil {
			t.Fatal(err)
		}
		l := testutil.NewPipeListener()
		srv := NewUnstartedServer(s)
		srv.Listener = l
		srv.Start()
		defer srv.Close()
		c, err := l.Dial(context.Background(), "tcp", "")
		if err != nil {
			t.Fatal(err)
		}
		// Content-Length promises 1000 bytes; 10 arrive, then the connection closes.
		fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"model\":", l.Addr())
		_ = c.Close()
		// The server reads the cut body in its own goroutine: in the bubble,
		// synctest.Wait returns once its handler has returned.
		synctest.Wait()
		if a := srv.Activity(); a.Requests != 1 || a.InFlight != 0 {
			t.Fatalf("%d request(s) received, %d in flight; want the cut one, served", a.Requests, a.InFlight)
		}
		if errs := srv.Journal().Errors(); len(errs) > 0 {
			t.Errorf("journaled a refusal for the abandoned request: %+v", errs[0].Error)
		}
		if n := srv.Journal().Len(); n != 0 {
			t.Errorf("journal has %d entries, want none", n)
		}
	})
}
