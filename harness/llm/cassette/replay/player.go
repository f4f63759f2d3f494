package replay

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"

	vcr "gopkg.in/dnaeon/go-vcr.v3/cassette"

	"github.com/todoharness/todoharness/harness/llm/cassette"
	"github.com/todoharness/todoharness/harness/llm/cassette/scrub"
)

// Player is an http.RoundTripper that answers from one cassette; nothing
// leaves the process. Use Client (or Player itself as a Transport) under the
// llm client, or serve it with package proxy, then Stop. It is safe for
// concurrent use.
//
// Which recorded interactions were replayed is go-vcr's state: the player
// asks the go-vcr cassette for a match (Cassette.GetInteraction, with the
// player's matcher) and reads Interaction.WasReplayed.
type Player struct {
	path     string
	prov     cassette.Provenance
	vcr      *vcr.Cassette
	recorded []canonical // canonical form of each interaction
	places   cassette.Placeholders

	mu       sync.Mutex
	secrets  *scrub.Scrubber // the known secrets (AddSecrets)
	requests int
	misses   []*MissError
}

// ctxKey carries the canonical form of a request from RoundTrip to the
// matcher.
type ctxKey struct{}

// Open opens a cassette for replay. A missing file wraps
// cassette.ErrNotFound; a file that does not parse or is incomplete is a
// *cassette.CorruptError.
func Open(path string) (*Player, error) {
	name, err := cassette.VCRName(path)
	if err != nil {
		return nil, err
	}
	f, err := cassette.Load(path)
	if err != nil {
		return nil, err
	}
	c, err := vcr.Load(name)
	if err != nil {
		return nil, &cassette.CorruptError{Path: path, Reason: "go-vcr cannot load it", Err: err}
	}
	p := &Player{path: path, prov: *f.Provenance, vcr: c, secrets: scrub.New(nil)}
	for _, i := range f.Interactions {
		p.recorded = append(p.recorded, canonicalizeRecorded(i.Request))
	}
	c.Matcher = p.match
	return p, nil
}

// AddSecrets adds known secret values (a password in the upstream URL, the
// keys of the run): they are scrubbed from each live request before it is
// matched (as the recording scrubbed them), so a miss's diff never shows
// one.
func (p *Player) AddSecrets(secrets ...string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.secrets.Add(secrets)
}

// SetPlaceholders names run-specific values by placeholders ("{{cwd}}"):
// requests match with the value read as the placeholder, and answers carry
// the placeholder read as the value of this run (see
// cassette.Placeholders).
func (p *Player) SetPlaceholders(values map[string]string) { p.places.Set(values) }

// Path returns the cassette file.
func (p *Player) Path() string { return p.path }

// Mode returns cassette.ModeReplay.
func (p *Player) Mode() cassette.Mode { return cassette.ModeReplay }

// Provenance returns the provenance block of the cassette.
func (p *Player) Provenance() cassette.Provenance { return p.prov }

// Client returns an http.Client whose transport is p.
func (p *Player) Client() *http.Client { return &http.Client{Transport: p} }

// match is the go-vcr matcher: method + path + canonical body. go-vcr calls
// it under its cassette lock, in interaction order, for interactions not yet
// replayed; a true answer replays that interaction, so identical requests
// consume identical recordings in order.
func (p *Player) match(req *http.Request, rec vcr.Request) bool {
	c, ok := req.Context().Value(ctxKey{}).(canonical)
	return ok && c.equal(canonicalizeRecorded(rec))
}

// RoundTrip answers one request from the cassette. Event-stream bodies come
// back one event per Read. A request without a recorded match gets an HTTP
// 404 whose body (OpenAI error shape) carries the MissError text, and the
// miss is kept for Misses and Err.
func (p *Player) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	p.mu.Lock()
	p.requests++
	n := p.requests
	known := p.secrets.Secrets()
	p.mu.Unlock()
	req = req.Clone(ctx)
	body, err := readBody(req)
	if err != nil {
		return nil, fmt.Errorf("cassette %s: %w", p.path, err)
	}
	c := canonicalize(req.Method, req.URL.String(), p.places.To(string(body)), known...)
	resp, err := p.answer(req.WithContext(context.WithValue(ctx, ctxKey{}, c)))
	if errors.Is(err, vcr.ErrInteractionNotFound) {
		return p.miss(req, n, c), nil
	}
	if err != nil {
		return nil, fmt.Errorf("cassette %s: replay %s %s: %w", p.path, req.Method, req.URL.Path, err)
	}
	if err := cassette.Rechunk(ctx, resp, p.places.From); err != nil {
		return nil, fmt.Errorf("cassette %s: %w", p.path, err)
	}
	return resp, nil
}

// answer is go-vcr's replay of one request (what its recorder does in
// replay-only mode, without the latency): the first matching interaction
// not yet replayed, as an http.Response.
func (p *Player) answer(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	i, err := p.vcr.GetInteraction(req)
	if err != nil {
		return nil, err
	}
	if err := req.Context().Err(); err != nil {
		return nil, err
	}
	return i.GetHTTPResponse()
}

// replayed returns, for each recorded interaction, whether it was replayed.
func (p *Player) replayed() []bool {
	p.vcr.Mu.RLock()
	defer p.vcr.Mu.RUnlock()
	out := make([]bool, len(p.vcr.Interactions))
	for i, x := range p.vcr.Interactions {
		out[i] = x.WasReplayed()
	}
	return out
}

// MissHeader marks the synthetic response to a request the cassette has no
// answer for.
const MissHeader = "X-Todoharness-Cassette-Miss"

func (p *Player) miss(req *http.Request, n int, c canonical) *http.Response {
	replayed := p.replayed()
	idx, diff := nearest(c, p.recorded, replayed)
	m := &MissError{Cassette: p.path, Request: n, Method: c.method, Path: c.path, Nearest: idx, Diff: diff}
	if idx >= 0 {
		m.NearestReplayed = replayed[idx]
	}
	p.mu.Lock()
	p.misses = append(p.misses, m)
	p.mu.Unlock()
	body, _ := json.Marshal(map[string]any{"error": map[string]any{
		"message": m.Error(), "type": "cassette_miss", "code": "cassette_miss",
	}})
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set(MissHeader, "1")
	// The OpenAI SDK retries some failures; a miss is deterministic.
	h.Set("X-Should-Retry", "false")
	return &http.Response{
		Status: "404 Not Found (cassette miss)", StatusCode: http.StatusNotFound,
		Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)),
		Request: req,
	}
}

// Requests returns the number of requests made through the player.
func (p *Player) Requests() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.requests
}

// Misses returns the requests that had no recorded match, in order.
func (p *Player) Misses() []*MissError {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*MissError(nil), p.misses...)
}

// Err returns the misses so far as one error (nil when there were none).
func (p *Player) Err() error {
	var errs []error
	for _, m := range p.Misses() {
		errs = append(errs, m)
	}
	return errors.Join(errs...)
}

// Unplayed returns the indexes of recorded interactions not replayed yet.
func (p *Player) Unplayed() []int {
	var out []int
	for i, done := range p.replayed() {
		if !done {
			out = append(out, i)
		}
	}
	return out
}

// Stop ends the replay. It writes nothing; it is there so that a player
// is used as a recorder is.
func (p *Player) Stop() error { return nil }
