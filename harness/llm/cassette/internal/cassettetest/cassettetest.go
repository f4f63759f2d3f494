package cassettetest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/llm/cassette"
	"github.com/todoharness/todoharness/harness/llm/cassette/record"
	"github.com/todoharness/todoharness/harness/llm/openaichat"
)

// SSEServer is a local OpenAI-compatible endpoint that answers every POST
// with the next of its bodies as an event stream, and notes what it
// received.
type SSEServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
	auth   []string
	got    []string
}

// NewSSEServer starts a server answering with bodies in turn (closed when
// the test ends).
func NewSSEServer(t *testing.T, bodies ...string) *SSEServer {
	t.Helper()
	s := &SSEServer{bodies: bodies}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		s.mu.Lock()
		n := len(s.got)
		s.got = append(s.got, string(b))
		s.auth = append(s.auth, r.Header.Get("Authorization"))
		s.mu.Unlock()
		if n >= len(s.bodies) {
			http.Error(w, "no more answers", http.StatusGone)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		w.Header().Set("Set-Cookie", "session=abcdef")
		io.WriteString(w, s.bodies[n])
	}))
	t.Cleanup(s.Close)
	return s
}

// Got returns the request bodies received so far.
func (s *SSEServer) Got() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.got...)
}

// Auth returns the Authorization header of each request received so far.
func (s *SSEServer) Auth() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.auth...)
}

// Answer is an SSE body with one text answer split in words.
func Answer(words ...string) string {
	var b strings.Builder
	for _, w := range words {
		fmt.Fprintf(&b, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", w)
	}
	b.WriteString("data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

// UserReq is a request with one user message.
func UserReq(text string) llm.Request {
	return llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartText, Text: text}}}}}
}

// TextOf is the text of an answer.
func TextOf(r llm.Response) string { return llm.Message{Content: r.Content}.Text() }

// Client is an llm client addressed to the base URL and model of p whose
// transport is rt.
func Client(t *testing.T, rt http.RoundTripper, p cassette.Provenance) *openaichat.Client {
	t.Helper()
	c, err := openaichat.NewClient(openaichat.ClientConfig{BaseURL: p.BaseURL, Model: p.Model, HTTPClient: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// RecordTwo records two exchanges ("hi SUFFIX" -> "Hello there", "bye
// SUFFIX" -> "Good bye"; no SUFFIX when suffix is empty) against a local
// server with key, and returns the cassette path.
func RecordTwo(t *testing.T, key, suffix string) (string, *SSEServer) {
	t.Helper()
	srv := NewSSEServer(t, Answer("Hello", " there"), Answer("Good", " bye"))
	path := filepath.Join(t.TempDir(), "c.yaml")
	rec, err := record.Start(record.Options{
		Path: path, Secrets: []string{key},
		Provenance: cassette.Provenance{BaseURL: srv.URL + "/v1", Model: "m"},
		Now:        func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) },
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := openaichat.NewClient(openaichat.ClientConfig{BaseURL: srv.URL + "/v1", APIKey: key, Model: "m", HTTPClient: rec.Client()})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{"hi", "bye"} {
		if suffix != "" {
			q += " " + suffix
		}
		if _, err := c.Stream(context.Background(), UserReq(q), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Stop(); err != nil {
		t.Fatal(err)
	}
	return path, srv
}
