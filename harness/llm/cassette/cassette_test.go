package cassette

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/llm/openaichat"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/internal/testutil"
)

// sseServer is a local OpenAI-compatible endpoint that answers every POST
// with the next of bodies as an event stream, and notes what it received.
type sseServer struct {
	*httptest.Server
	mu     sync.Mutex
	bodies []string
	auth   []string
	got    []string
}

func newSSEServer(t *testing.T, bodies ...string) *sseServer {
	t.Helper()
	s := &sseServer{bodies: bodies}
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

// answer is an SSE body with one text answer split in words.
func answer(words ...string) string {
	var b strings.Builder
	for _, w := range words {
		fmt.Fprintf(&b, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q},\"finish_reason\":null}]}\n\n", w)
	}
	b.WriteString("data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2,\"total_tokens\":5}}\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.String()
}

func userReq(text string) llm.Request {
	return llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartText, Text: text}}}}}
}

func textOf(r llm.Response) string { return llm.Message{Content: r.Content}.Text() }

// recordTwo records two exchanges ("hi" -> "Hello there", "bye" -> "Good
// bye") against a local server with key, and returns the cassette path.
func recordTwo(t *testing.T, key string) (path string, srv *sseServer) {
	t.Helper()
	return recordTwoWith(t, key, "")
}

func replayClient(t *testing.T, path string) (*Recorder, *openaichat.Client) {
	t.Helper()
	rec, err := Replay(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rec.Stop() })
	p := rec.Provenance()
	c, err := openaichat.NewClient(openaichat.ClientConfig{BaseURL: p.BaseURL, Model: p.Model, HTTPClient: rec.Client()})
	if err != nil {
		t.Fatal(err)
	}
	return rec, c
}

func TestRecordScrubsTheKeyButSendsIt(t *testing.T) {
	const key = "sk-test-SECRET123"
	path, srv := recordTwo(t, key)
	for _, a := range srv.auth {
		if a != "Bearer "+key {
			t.Errorf("the live request carried Authorization %q, want the key untouched", a)
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"SECRET123", "Authorization", "Bearer", "Set-Cookie", "abcdef"} {
		if bytes.Contains(data, []byte(bad)) {
			t.Errorf("cassette contains %q:\n%s", bad, data)
		}
	}
	if f := ScanCredentials(data); len(f) > 0 {
		t.Errorf("scan finds %v", f)
	}
}

func TestProvenanceIsWrittenFirstAndReadBack(t *testing.T) {
	path, srv := recordTwo(t, "sk-unit-test-key-0001")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("---\n# todoharness cassette")) || bytes.Index(data, []byte("provenance:")) > bytes.Index(data, []byte("interactions:")) {
		t.Errorf("provenance block is not first:\n%s", data[:200])
	}
	p, err := LoadProvenance(path)
	if err != nil {
		t.Fatal(err)
	}
	// The ephemeral port of a loopback server is not kept (re-recording
	// must not churn), and the recording date is a date.
	_ = srv
	want := Provenance{
		Source: SourceMockServer, RealModelOutput: false, APIHost: "127.0.0.1", BaseURL: "http://127.0.0.1/v1", Model: "m",
		RecordedAt: "2026-01-02", ToolVersion: ToolVersion(),
		Description: "recorded against the local mock model server at http://127.0.0.1/v1: scripted answers, NOT real-model output",
	}
	if p != want {
		t.Errorf("provenance\n got %+v\nwant %+v", p, want)
	}
}

func TestReplayMatchesOnBodyNotOrder(t *testing.T) {
	path, _ := recordTwo(t, "sk-unit-test-key-0001")
	rec, c := replayClient(t, path)
	// Asked in the other order, each question still gets its own answer.
	for q, want := range map[string]string{"bye": "Good bye", "hi": "Hello there"} {
		r, err := c.Stream(context.Background(), userReq(q), nil)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		if textOf(r) != want {
			t.Errorf("%s: got %q, want %q", q, textOf(r), want)
		}
	}
	if len(rec.Misses()) != 0 || len(rec.Unplayed()) != 0 {
		t.Errorf("misses %v, unplayed %v", rec.Misses(), rec.Unplayed())
	}
}

func TestIdenticalRequestsReplayInRecordedOrder(t *testing.T) {
	srv := newSSEServer(t, answer("first"), answer("second"))
	path := filepath.Join(t.TempDir(), "c.yaml")
	rec, err := Record(RecordOptions{Path: path, Provenance: Provenance{BaseURL: srv.URL, Model: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := openaichat.NewClient(openaichat.ClientConfig{BaseURL: srv.URL, Model: "m", HTTPClient: rec.Client()})
	for i := 0; i < 2; i++ {
		if _, err := c.Stream(context.Background(), userReq("same"), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := rec.Stop(); err != nil {
		t.Fatal(err)
	}
	rrec, rc := replayClient(t, path)
	var got []string
	for i := 0; i < 2; i++ {
		r, err := rc.Stream(context.Background(), userReq("same"), nil)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, textOf(r))
	}
	if strings.Join(got, ",") != "first,second" {
		t.Errorf("got %v, want [first second]", got)
	}
	// A third identical request has nothing left to replay.
	_, err = rc.Stream(context.Background(), userReq("same"), nil)
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
	path, _ := recordTwo(t, "sk-unit-test-key-0001")
	rec, c := replayClient(t, path)
	_, err := c.Stream(context.Background(), userReq("hi there"), nil)
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
	path, srv := recordTwo(t, "sk-unit-test-key-0001")
	before := len(srv.got)
	_, c := replayClient(t, path)
	if _, err := c.Stream(context.Background(), userReq("hi"), nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stream(context.Background(), userReq("never recorded"), nil); err == nil {
		t.Fatal("miss answered")
	}
	if len(srv.got) != before {
		t.Errorf("replay sent %d requests to the server", len(srv.got)-before)
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
	path, _ := recordTwo(t, "sk-unit-test-key-0001")
	rec, err := Replay(path)
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
	want := SplitEvents([]byte(answer("Hello", " there")))
	if len(cr.reads) != len(want) {
		t.Fatalf("%d reads for %d events: %q", len(cr.reads), len(want), cr.reads)
	}
	for i := range want {
		if cr.reads[i] != string(want[i]) {
			t.Errorf("read %d = %q, want event %q", i, cr.reads[i], want[i])
		}
	}
}

func TestEventReaderHonoursSmallBuffersAndContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := &eventReader{ctx: ctx, data: []byte("data: 1\n\ndata: 22\r\n\r\ndata: 3")}
	var got []string
	buf := make([]byte, 4)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			got = append(got, string(buf[:n]))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"data", ": 1\n", "\n", "data", ": 22", "\r\n\r\n", "data", ": 3"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("reads %q, want %q (never across an event boundary)", got, want)
	}
	r2 := &eventReader{ctx: ctx, data: []byte("data: 1\n\n")}
	cancel()
	if _, err := r2.Read(buf); !errors.Is(err, context.Canceled) {
		t.Errorf("read after cancel: %v", err)
	}
}

func TestCorruptAndMissingCassettes(t *testing.T) {
	dir := t.TempDir()
	good, _ := recordTwo(t, "sk-unit-test-key-0001")
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
		_, err := Replay(p)
		var ce *CorruptError
		if !errors.As(err, &ce) || !strings.Contains(err.Error(), "cassette "+p+" "+tc.want) {
			t.Errorf("%s: got %v, want a CorruptError containing %q", name, err, tc.want)
		}
	}
	_, err := Replay(filepath.Join(dir, "absent.yaml"))
	if !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "make record") {
		t.Errorf("missing cassette: %v", err)
	}
	if _, err := Replay(filepath.Join(dir, "c.yml")); err == nil || !strings.Contains(err.Error(), "must end in .yaml") {
		t.Errorf("bad suffix: %v", err)
	}
}

func TestRecordRefusesToMislabel(t *testing.T) {
	for _, base := range []string{"http://127.0.0.1:1/v1", "http://localhost:8080", "http://[::1]:9"} {
		_, err := Record(RecordOptions{Path: filepath.Join(t.TempDir(), "c.yaml"),
			Provenance: Provenance{Source: SourceRealModel, BaseURL: base, Model: "m"}})
		if err == nil || !strings.Contains(err.Error(), "cannot be labelled real-model") {
			t.Errorf("%s: got %v", base, err)
		}
	}
	r, err := Record(RecordOptions{Path: filepath.Join(t.TempDir(), "c.yaml"),
		Provenance: Provenance{BaseURL: "https://api.deepseek.com", Model: "deepseek-chat"}})
	if err != nil {
		t.Fatal(err)
	}
	if p := r.Provenance(); p.Source != SourceRealModel || !p.RealModelOutput || p.APIHost != "api.deepseek.com" {
		t.Errorf("remote recording labelled %+v", p)
	}
}

func TestStopWithoutExchangesSavesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := Record(RecordOptions{Path: path, Provenance: Provenance{BaseURL: "https://api.deepseek.com", Model: "m"}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Stop(); err == nil || !strings.Contains(err.Error(), "no interactions") {
		t.Errorf("Stop: %v", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "old" {
		t.Errorf("the old cassette was replaced by %q", b)
	}
}

func TestScrubber(t *testing.T) {
	s := newScrubber([]string{"hunter2-long-secret"})
	h := http.Header{
		"Authorization": {"Bearer x"}, "X-Api-Key": {"k"}, "Api-Key": {"k"}, "Cookie": {"c"},
		"X-Goog-Api-Key": {"k"}, "Openai-Project": {"p"}, "Content-Type": {"application/json"},
		"X-Note": {"uses sk-abcdefghijklmnop and hunter2-long-secret"},
	}
	orig := h.Clone()
	got := s.headers(h)
	if fmt.Sprint(h) != fmt.Sprint(orig) {
		t.Error("scrubbing changed the live header map")
	}
	for _, k := range []string{"Authorization", "X-Api-Key", "Api-Key", "Cookie", "X-Goog-Api-Key"} {
		if _, ok := got[k]; ok {
			t.Errorf("header %s kept", k)
		}
	}
	if got.Get("Content-Type") != "application/json" || got.Get("Openai-Project") != "p" {
		t.Errorf("harmless headers lost: %v", got)
	}
	if v := got.Get("X-Note"); strings.Contains(v, "sk-abc") || strings.Contains(v, "hunter2") {
		t.Errorf("credential text kept in %q", v)
	}
	u := s.rawURL("https://user:pw@api.example.com/v1/x?api_key=abc&key=def&access-token=ghi&model=m")
	for _, bad := range []string{"abc", "def", "ghi", "pw"} {
		if strings.Contains(u, "="+bad) || strings.Contains(u, ":"+bad+"@") {
			t.Errorf("URL keeps %q: %s", bad, u)
		}
	}
	if !strings.Contains(u, "model=m") {
		t.Errorf("URL lost model=m: %s", u)
	}
	body := s.body(`{"model":"m","apiKey":"abc","auth":{"token":"def","kind":"x"},"messages":[{"content":"keep me"}],"secret":null}`)
	for _, bad := range []string{"abc", "def"} {
		if strings.Contains(body, bad) {
			t.Errorf("body keeps %q: %s", bad, body)
		}
	}
	if !strings.Contains(body, "keep me") || !strings.Contains(body, `"kind":"x"`) {
		t.Errorf("body lost content: %s", body)
	}
	untouched := `{"b": 1,  "a": "no secrets here"}`
	if s.body(untouched) != untouched {
		t.Errorf("a body without credentials was rewritten: %s", s.body(untouched))
	}
}

func TestSplitEvents(t *testing.T) {
	body := []byte("data: a\n\ndata: b\r\n\r\n: comment\n\ndata: [DONE]\n\ntrailing")
	parts := SplitEvents(body)
	if len(parts) != 5 || string(bytes.Join(parts, nil)) != string(body) {
		t.Errorf("split into %q", parts)
	}
}

func TestFromLogRebuildsTheExchangesOfASessionLog(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "two-steps.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ld, err := session.Read(f, "two-steps.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	tools := []llm.ToolSpec{{Name: "todo_write", Description: "d", Parameters: []byte(`{"type":"object"}`)}}
	out := filepath.Join(t.TempDir(), "c.yaml")
	res, err := FromLog(context.Background(), FromLogOptions{
		Log: ld, LogName: "x/two-steps.jsonl", Out: out, Tools: tools, RecordedBy: "a test", Scenario: "s",
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 2 || len(res.Warnings) != 0 {
		t.Errorf("steps %d, warnings %v", res.Steps, res.Warnings)
	}
	p := res.Provenance
	if p.Source != SourceSessionLog || p.RealModelOutput || p.Description != "rebuilt from session log x/two-steps.jsonl recorded by a test (not claimed as real-model output)" ||
		p.RecordedAt != "2026-06-29T02:53:19Z" || p.APIHost != "api.deepseek.com" || p.Model != openaichat.DefaultModel {
		t.Errorf("provenance %+v", p)
	}

	// Replaying the rebuilt cassette through the client gives back the
	// logged chunks, step by step.
	_, c := replayClient(t, out)
	steps, _, _ := logSteps(ld.Events)
	for _, s := range steps {
		var got []llm.Chunk
		req := llm.Request{Model: openaichat.DefaultModel, Messages: session.DeriveMessages(ld.Events[:s.index]), Tools: tools}
		if _, err := c.Stream(context.Background(), req, func(ch llm.Chunk) error { got = append(got, ch); return nil }); err != nil {
			t.Fatalf("turn %d step %d: %v", s.turn, s.step, err)
		}
		if g, w := strings.Join(normChunks(got), "\n"), strings.Join(normChunks(s.chunks), "\n"); g != w {
			t.Errorf("turn %d step %d chunks:\n got %s\nwant %s", s.turn, s.step, g, w)
		}
	}
}

func TestFromLogRefusesALogWhoseChunksDisagreeWithItsMessage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "two-steps.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(data), `"content":[{"type":"text","text":"DONE"}]`, `"content":[{"type":"text","text":"NOPE"}]`, 1)
	ld, err := session.Read(strings.NewReader(bad), "bad.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	_, err = FromLog(context.Background(), FromLogOptions{Log: ld, LogName: "bad.jsonl", Out: filepath.Join(t.TempDir(), "c.yaml")})
	if err == nil || !strings.Contains(err.Error(), "turn 1 step 2: the rebuilt answer assembles to") {
		t.Errorf("got %v", err)
	}
}
