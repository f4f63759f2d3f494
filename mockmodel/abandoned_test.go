package mockmodel

import (
	"fmt"
	"net"
	"net/url"
	"testing"
	"time"
)

// A client that hangs up before its request body is whole (an agent whose
// turn was cancelled aborts its model request) sent the model nothing: no
// request is journaled, so no refusal says the conversation left the
// script, and the next request still gets the first turn. (Before: "read
// body: unexpected EOF" was journaled as a refused request, and the
// conformance runner failed RUN-1 on it.)
func TestARequestTheClientAbandonsIsNotJournaled(t *testing.T) {
	s, err := ParseScript([]byte("- text: hello\n"), "abandoned.yaml")
	if err != nil {
		t.Fatal(err)
	}
	srv := NewServer(s)
	defer srv.Close()
	u, err := url.Parse(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	// Content-Length promises 1000 bytes; 10 arrive, then the connection closes.
	fmt.Fprintf(c, "POST /v1/chat/completions HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{\"model\":", u.Host)
	_ = c.Close()
	// The server reads the cut body in its own goroutine: wait until it
	// has (the connection is gone from its active set), bounded.
	for deadline := time.Now().Add(time.Minute); srv.Activity().InFlight > 0 && time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
	}
	time.Sleep(50 * time.Millisecond) // the handler's return, after InFlight drops
	if errs := srv.Journal().Errors(); len(errs) > 0 {
		t.Errorf("journaled a refusal for the abandoned request: %+v", errs[0].Error)
	}
	if n := srv.Journal().Len(); n != 0 {
		t.Errorf("journal has %d entries, want none", n)
	}
}
