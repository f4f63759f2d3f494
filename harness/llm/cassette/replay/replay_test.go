package replay

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/harness/llm/cassette"
	"github.com/todoharness/todoharness/harness/llm/cassette/internal/cassettetest"
	"github.com/todoharness/todoharness/harness/llm/cassette/record"
	"github.com/todoharness/todoharness/harness/llm/cassette/scrub"
	"github.com/todoharness/todoharness/harness/llm/openaichat"
	"github.com/todoharness/todoharness/internal/testutil"
)

func replayClient(t *testing.T, path string) (*Player, *openaichat.Client) {
	t.Helper()
	rec, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Stop() })
	return rec, cassettetest.Client(t, rec, rec.Provenance())
}

func TestReplayMatchesOnBodyNotOrder(t *testing.T) {
	path, _ := cassettetest.RecordTwo(t, "sk-unit-test-key-0001", "")
	rec, c := replayClient(t, path)
	// Asked in the other order, each question still gets its own answer.
	for q, want := range map[string]string{"bye": "Good bye", "hi": "Hello there"} {
		r, err := c.Stream(context.Background(), cassettetest.UserReq(q), nil)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if cassettetest.TextOf(r) != want {
			t.Errorf("%s: got %q, want %q", q, cassettetest.TextOf(r), want)
		}
	}
	if len(rec.Misses()) != 0 || len(rec.Unplayed()) != 0 {
		t.Errorf("misses %v, unplayed %v", rec.Misses(), rec.Unplayed())
	}
}

func TestIdenticalRequestsReplayInRecordedOrder(t *testing.T) {
	srv := cassettetest.NewSSEServer(t, cassettetest.Answer("first"), cassettetest.Answer("second"))
	path := filepath.Join(t.TempDir(), "c.yaml")
	rec, err := record.Start(record.Options{Path: path, Provenance: cassette.Provenance{BaseURL: srv.URL, Model: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := openaichat.NewClient(openaichat.ClientConfig{BaseURL: srv.URL, Model: "m", HTTPClient: rec.Client()})
	for i := 0; i < 2; i++ {
		if _, err := c.Stream(context.Background(), cassettetest.UserReq("same"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Stop(); err != nil {
		t.Fatal(err)
	}
	rrec, rc := replayClient(t, path)
	var got []string
	for i := 0; i < 2; i++ {
		r, err := rc.Stream(context.Background(), cassettetest.UserReq("same"), nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, cassettetest.TextOf(r))
	}
	if strings.Join(got, ",") != "first,second" {
		t.Errorf("got %v, want [first second]", got)
	}
	// A third identical request has nothing left to replay.
	_, err = rc.Stream(context.Background(), cassettetest.UserReq("same"), nil)
	if err == nil || !strings.Contains(err.Error(), "already replayed") {
		t.Errorf("third request: got %v, want a miss naming an already replayed interaction", err)
	}
	if len(rrec.Misses()) != 1 {
		t.Errorf("misses: %v", rrec.Misses())
	}
}

func TestVolatileFieldsDoNotMatterButContentDoes(t *testing.T) {
	base := `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true}`
	same := `{"stream":true,"user":"u-42","stream_options":{"include_usage":true},"metadata":{"x":"y"},"messages":[{"content":"hi","role":"user"}],"model":"m"}`
	if a, b := canonicalize("POST", "/v1/chat/completions", base), canonicalize("post", "/v1/chat/completions", same); !a.equal(b) {
		t.Errorf("volatile fields or key order changed the match:\n%s\n%s", a.body, b.body)
	}
	for _, other := range []string{
		`{"model":"m2","messages":[{"role":"user","content":"hi"}],"stream":true}`,
		`{"model":"m","messages":[{"role":"user","content":"hi!"}],"stream":true}`,
		`{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":false}`,
	} {
		if canonicalize("POST", "/v1/chat/completions", base).equal(canonicalize("POST", "/v1/chat/completions", other)) {
			t.Errorf("%s matched %s", other, base)
		}
	}
	if canonicalize("POST", "/v1/chat/completions", base).equal(canonicalize("POST", "/chat/completions", base)) {
		t.Error("a different path matched")
	}
}

func TestMissIsAClearErrorWithADiff(t *testing.T) {
	path, _ := cassettetest.RecordTwo(t, "sk-unit-test-key-0001", "")
	rec, c := replayClient(t, path)
	_, err := c.Stream(context.Background(), cassettetest.UserReq("hi there"), nil)
	if err == nil {
		t.Fatal("a request that was never recorded was answered")
	}
	var api *openaichat.APIError
	if !errors.As(err, &api) || api.StatusCode != http.StatusNotFound {
		t.Fatalf("got %v, want a 404 API error", err)
	}
	misses := rec.Misses()
	if len(misses) != 1 {
		t.Fatalf("misses: %v", misses)
	}
	msg := misses[0].Error()
	for _, want := range []string{
		"cassette miss: " + path + ": no recorded interaction matches request 1 (POST /v1/chat/completions)",
		"nearest recorded request: interaction 0 (not yet replayed)",
		`-      "content": "hi",`,
		`+      "content": "hi there",`,
	} {
		if !strings.Contains(msg, want) {
			t.Errorf("miss message lacks %q:\n%s", want, msg)
		}
	}
	if !strings.Contains(api.Message, "no recorded interaction matches") {
		t.Errorf("the client's error does not carry the miss: %q", api.Message)
	}
	if rec.Err() == nil {
		t.Error("Err() is nil after a miss")
	}
}

func TestReplayNeverReachesTheNetwork(t *testing.T) {
	path, srv := cassettetest.RecordTwo(t, "sk-unit-test-key-0001", "")
	before := len(srv.Got())
	_, c := replayClient(t, path)
	if _, err := c.Stream(context.Background(), cassettetest.UserReq("hi"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stream(context.Background(), cassettetest.UserReq("never recorded"), nil); err == nil {
		t.Fatal("miss answered")
	}
	if len(srv.Got()) != before {
		t.Errorf("replay sent %d requests to the server", len(srv.Got())-before)
	}
}

// countingReader counts Read calls that returned data.
type countingReader struct {
	r     io.Reader
	reads []string
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	if n > 0 {
		c.reads = append(c.reads, string(p[:n]))
	}
	return n, err
}

func TestReplayedEventStreamsComeOneEventPerRead(t *testing.T) {
	path, _ := cassettetest.RecordTwo(t, "sk-unit-test-key-0001", "")
	rec, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	body := `{"messages":[{"content":"hi","role":"user"}],"model":"m","stream":true,"stream_options":{"include_usage":true}}`
	req, _ := http.NewRequest(http.MethodPost, rec.Provenance().BaseURL+"/chat/completions", strings.NewReader(body))
	resp, err := rec.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	cr := &countingReader{r: resp.Body}
	buf := make([]byte, 64<<10)
	for {
		_, err := cr.Read(buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	want := cassette.SplitEvents([]byte(cassettetest.Answer("Hello", " there")))
	if len(cr.reads) != len(want) {
		t.Fatalf("%d reads for %d events: %q", len(cr.reads), len(want), cr.reads)
	}
	for i := range want {
		if cr.reads[i] != string(want[i]) {
			t.Errorf("read %d = %q, want event %q", i, cr.reads[i], want[i])
		}
	}
}

func TestCorruptAndMissingCassettes(t *testing.T) {
	dir := t.TempDir()
	good, _ := cassettetest.RecordTwo(t, "sk-unit-test-key-0001", "")
	data, _ := os.ReadFile(good)
	cases := map[string]struct {
		content string
		want    string
	}{
		"garbage":       {"{{{ : nope", "is corrupt: not valid cassette YAML"},
		"empty":         {"", "is corrupt: the file is empty"},
		"no-provenance": {string(data[bytes.Index(data, []byte("version: 2")):]), "is corrupt: no provenance block"},
		"no-interact":   {string(data[:bytes.Index(data, []byte("interactions:"))]), "is corrupt: no interactions"},
		"bad-source":    {strings.Replace(string(data), "source: mock-server", "source: vibes", 1), `is corrupt: bad provenance block: provenance: source "vibes"`},
		"alias-bomb":    {"version: 2\nprovenance:\n" + testutil.AliasBomb("  "), "is corrupt: not valid cassette YAML: line "},
	}
	for name, tc := range cases {
		p := filepath.Join(dir, name+".yaml")
		if err := os.WriteFile(p, []byte(tc.content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Open(p)
		var ce *cassette.CorruptError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "cassette "+p+" "+tc.want) {
			t.Errorf("%s: got %v, want a cassette.CorruptError containing %q", name, err, tc.want)
		}
	}
	_, err := Open(filepath.Join(dir, "absent.yaml"))
	if !errors.Is(err, cassette.ErrNotFound) || !strings.Contains(err.Error(), "make record") {
		t.Errorf("missing cassette: %v", err)
	}
	if _, err := Open(filepath.Join(dir, "c.yml")); err == nil || !strings.Contains(err.Error(), "must end in .yaml") {
		t.Errorf("bad suffix: %v", err)
	}
}

// An agent that sends its key base64-encoded in the request body: the
// cassette keeps no part of the encoded token (not "[REDACTED]M="); a
// replay given the key matches the request; a miss's diff, with or without
// the key, never shows any form of it.
func TestAKeyBase64InTheBodyIsRedactedWholeAndNeverPrinted(t *testing.T) {
	const key = "sk-unit-BODYkey0123456789xyz"
	ref := base64.StdEncoding.EncodeToString([]byte(key))
	path, _ := cassettetest.RecordTwo(t, key, "ref="+ref)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), "ref="+scrub.Redacted+`"`) {
		t.Fatalf("the cassette does not hold the token redacted whole:\n%s", data)
	}
	for _, f := range scrub.KeyForms(key) {
		if strings.Contains(string(data), f.Needle) {
			t.Fatalf("the cassette holds the %s form %q", f.Name, f.Needle)
		}
	}

	rec, c := replayClient(t, path)
	rec.AddSecrets(key)
	if _, err := c.Stream(context.Background(), cassettetest.UserReq("hi ref="+ref), nil); err != nil {
		t.Fatalf("the replay given the key does not match the live request: %v", err)
	}
	// A request that differs: the miss's diff shows the redacted token,
	// also in a replay not given the key (the token decodes to an sk- key).
	_, _ = c.Stream(context.Background(), cassettetest.UserReq("other ref="+ref), nil)
	rec2, c2 := replayClient(t, path)
	_, _ = c2.Stream(context.Background(), cassettetest.UserReq("other ref="+ref), nil)
	for _, r := range []*Player{rec, rec2} {
		for _, m := range r.Misses() {
			for _, f := range scrub.KeyForms(key) {
				if strings.Contains(m.Error(), f.Needle) {
					t.Errorf("the miss's diff prints the %s form of the key:\n%s", f.Name, m.Error())
				}
			}
		}
	}
	if len(rec.Misses()) != 1 {
		t.Fatalf("misses %v, want the one differing request", rec.Misses())
	}
}
