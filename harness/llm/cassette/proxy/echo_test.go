package proxy_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/todoharness/todoharness/harness/llm/cassette"
	"github.com/todoharness/todoharness/harness/llm/cassette/internal/echoforms"
	"github.com/todoharness/todoharness/harness/llm/cassette/proxy"
	"github.com/todoharness/todoharness/harness/llm/cassette/record"
	"github.com/todoharness/todoharness/harness/llm/cassette/scrub"
)

// echoingUpstream answers every request with the bearer key it was sent,
// echoed in every form of echoforms: in response headers, as a response
// header's name, in an SSE body's data (JSON-escaped) and split across two
// SSE comment lines, and split across two JSON fields of a data event.
func echoingUpstream(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		key := strings.TrimPrefix(r.Header.Get("Authorization"), "Bearer ")
		h := w.Header()
		h.Set("Content-Type", "text/event-stream")
		h.Set("X-"+key, "1")
		var body strings.Builder
		half := len(key) / 2
		fmt.Fprintf(&body, ": %s\n: %s\n\n", key[:half], key[half:])
		fmt.Fprintf(&body, "data: {\"a\":%q,\"b\":%q}\n\n", key[:half], key[half:])
		for i, f := range echoforms.Forms() {
			h.Set(fmt.Sprintf("X-Echo-%d", i), f.Text(key))
			fmt.Fprintf(&body, "data: {\"choices\":[{\"delta\":{\"content\":%q}}]}\n\n", f.Text(key))
		}
		body.WriteString("data: [DONE]\n\n")
		_, _ = io.WriteString(w, body.String())
	}))
	t.Cleanup(srv.Close)
	return srv
}

// A key the recorder knows only from the Authorization header the agent
// sent, echoed back by the upstream in every form of echoforms, is not in
// the saved cassette: the scrubber removes what it can locate, and the
// post-save scan finds nothing; `cassette scan --secret-env` (ScanSecrets)
// finds nothing either.
func TestAKeyKnownOnlyFromAuthorizationIsKeptOutInEveryEchoedForm(t *testing.T) {
	key := echoforms.KeyShaped(7)
	up := echoingUpstream(t)
	path := filepath.Join(t.TempDir(), "cassette.yaml")
	rec, err := record.Start(record.Options{Path: path, Provenance: cassette.Provenance{BaseURL: up.URL + "/v1", Model: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	px, err := proxy.New(rec, up.URL+"/v1")
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest("POST", px.URL+"/v1/chat/completions", strings.NewReader(`{"model":"m","stream":true}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	echoed, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(echoed), key[len(key)/2:]) || resp.Header.Get("X-"+key) != "1" {
		t.Fatalf("the agent did not get the echo (the spec proves nothing):\n%s", echoed)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := px.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rec.Stop(); err != nil {
		if strings.Contains(err.Error(), key[len(echoforms.PublicPrefix):len(echoforms.PublicPrefix)+8]) {
			t.Fatalf("the refusal prints the key: %v", err)
		}
		t.Fatalf("refused: %v", err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range echoforms.Forms() {
		if p := echoforms.Left(string(data), f, key); p != "" {
			t.Errorf("%s: the cassette keeps %q", f.Name, p)
		}
	}
	rest := key[len(echoforms.PublicPrefix):]
	for _, piece := range []string{rest[:12], key[len(key)/2:], strings.ToUpper(rest[:12]), strings.ToLower(rest[:12])} {
		if strings.Contains(string(data), piece) {
			t.Errorf("the cassette keeps %q", piece)
		}
	}
	if found := scrub.ScanSecrets(data, []string{key}); len(found) > 0 {
		t.Errorf("cassette scan --secret-env finds %v in\n%s", found, data)
	}
	if found := scrub.ScanCredentials(data); len(found) > 0 {
		t.Errorf("cassette scan finds %v", found)
	}
}
