package cassette

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"
	"sync"
	"time"

	"gopkg.in/dnaeon/go-vcr.v3/cassette"
	"gopkg.in/dnaeon/go-vcr.v3/recorder"

	"github.com/todoharness/todoharness/internal/yamlx"
)

// Mode is what a Recorder does with requests.
type Mode int

// Modes.
const (
	// ModeReplay answers from the cassette only; nothing leaves the process.
	ModeReplay Mode = iota
	// ModeRecord sends every request to the real transport and saves the
	// exchanges on Stop.
	ModeRecord
)

func (m Mode) String() string {
	if m == ModeRecord {
		return "record"
	}
	return "replay"
}

// RecordOptions configures a recording.
type RecordOptions struct {
	// Path is the cassette file to write (must end in .yaml). It is replaced
	// only when Stop succeeds.
	Path string
	// Provenance is written into the cassette. BaseURL and Model are
	// required; APIHost, RecordedAt, ToolVersion, Source and Description are
	// filled in when empty (Source: mock-server for a loopback BaseURL,
	// real-model otherwise).
	Provenance Provenance
	// RealTransport carries the live requests (http.DefaultTransport when
	// nil).
	RealTransport http.RoundTripper
	// Secrets are literal strings (the API key) scrubbed from the cassette
	// wherever they appear, on top of the header/field/pattern scrubbing
	// (strings shorter than 8 bytes are not: they would rewrite ordinary
	// text).
	Secrets []string
	// Now is the clock for RecordedAt (time.Now when nil).
	Now func() time.Time
	// Previous is the cassette this recording replaces ("" for none; it
	// may not exist). When the new cassette differs from it only in
	// recordedAt and toolVersion, the previous file's bytes are kept: an
	// unchanged re-recording changes nothing on disk.
	Previous string
}

// Recorder is an http.RoundTripper that records to, or replays from, one
// cassette. Use Client (or Recorder itself as a Transport) under the llm
// client, then Stop. It is safe for concurrent use.
type Recorder struct {
	path     string
	previous string
	mode     Mode
	vcr      *recorder.Recorder
	prov     Provenance
	scrub    *scrubber
	// replaySecrets are the known secrets of a replay (AddSecrets).
	replaySecrets *scrubber

	mu       sync.Mutex
	saved    []*cassette.Interaction // record: the interactions as saved
	places   [][2]string             // {value, placeholder}, longest value first
	recorded []canonical             // replay: canonical form of each interaction
	replayed []bool                  // replay: mirror of go-vcr's replayed flags
	requests int
	misses   []*MissError
	stopped  bool
}

// ctxKey carries the canonical form of a request from RoundTrip to the
// matcher.
type ctxKey struct{}

// Record starts a recording. Nothing is written until Stop.
func Record(opts RecordOptions) (*Recorder, error) {
	name, err := vcrName(opts.Path)
	if err != nil {
		return nil, err
	}
	p, err := completeProvenance(opts.Provenance, opts.Now)
	if err != nil {
		return nil, fmt.Errorf("record cassette %s: %w", opts.Path, err)
	}
	rt := opts.RealTransport
	if rt == nil {
		rt = http.DefaultTransport
	}
	vcr, err := recorder.NewWithOptions(&recorder.Options{
		CassetteName:       name + ".recording",
		Mode:               recorder.ModeRecordOnly,
		RealTransport:      rt,
		SkipRequestLatency: true,
	})
	if err != nil {
		return nil, fmt.Errorf("record cassette %s: %w", opts.Path, err)
	}
	r := &Recorder{path: opts.Path, previous: opts.Previous, mode: ModeRecord, vcr: vcr, prov: p, scrub: newScrubber(opts.Secrets)}
	vcr.AddHook(r.placehold, recorder.BeforeSaveHook)
	vcr.AddHook(r.scrub.interaction, recorder.BeforeSaveHook)
	return r, nil
}

// completeProvenance fills defaults and refuses a block that would present
// a local recording as real-model output.
func completeProvenance(p Provenance, now func() time.Time) (Provenance, error) {
	if p.BaseURL == "" {
		return p, errors.New("provenance: BaseURL is required")
	}
	p.BaseURL = WithoutUserinfo(p.BaseURL)
	p.Agent = patternRedact(p.Agent)
	loop := IsLoopback(p.BaseURL)
	if p.Source == "" {
		p.Source = SourceRealModel
		if loop {
			p.Source = SourceMockServer
		}
	}
	if loop && p.Source == SourceRealModel {
		return p, fmt.Errorf("provenance: %s is a local server: a recording against it cannot be labelled %s", p.BaseURL, SourceRealModel)
	}
	switch p.Source {
	case SourceRealModel:
		p.RealModelOutput = true
	case SourceMockServer:
		p.RealModelOutput = false
	}
	if p.APIHost == "" {
		p.APIHost = HostOf(p.BaseURL)
	}
	p.APIHost = stripLoopbackPort(p.APIHost)
	if p.RecordedAt == "" {
		if now == nil {
			now = time.Now
		}
		p.RecordedAt = now().UTC().Format(time.DateOnly)
	}
	if p.ToolVersion == "" {
		p.ToolVersion = ToolVersion()
	}
	if p.Description == "" {
		switch p.Source {
		case SourceMockServer:
			p.Description = "recorded against the local mock model server at " + p.BaseURL +
				": scripted answers, NOT real-model output"
		case SourceSessionLog:
			p.Description = "rebuilt from a session log"
		default:
			p.Description = "recorded against the real model API at " + p.BaseURL
		}
	}
	if p.Model == "" {
		// Filled in from the recorded requests on Stop.
		return p, nil
	}
	return p, p.Validate()
}

// modelOf returns the model a recorded request asked for: its body's
// "model" field, or the model of a Gemini path (…/models/M:generateContent).
func modelOf(i *cassette.Interaction) string {
	var b struct {
		Model string `json:"model"`
	}
	if json.Unmarshal([]byte(i.Request.Body), &b) == nil && b.Model != "" {
		return b.Model
	}
	if u, err := url.Parse(i.Request.URL); err == nil {
		if k := strings.LastIndex(u.Path, "/models/"); k >= 0 {
			m, _, _ := strings.Cut(u.Path[k+len("/models/"):], ":")
			return m
		}
	}
	return ""
}

// Replay opens a cassette for replay. A missing file wraps ErrNotFound; a
// file that does not parse or is incomplete is a *CorruptError.
func Replay(path string) (*Recorder, error) {
	name, err := vcrName(path)
	if err != nil {
		return nil, err
	}
	f, err := loadFile(path)
	if err != nil {
		return nil, err
	}
	vcr, err := recorder.NewWithOptions(&recorder.Options{
		CassetteName:       name,
		Mode:               recorder.ModeReplayOnly,
		SkipRequestLatency: true,
		RealTransport:      noNetwork{},
	})
	if err != nil {
		return nil, &CorruptError{Path: path, Reason: "go-vcr cannot load it", Err: err}
	}
	r := &Recorder{path: path, mode: ModeReplay, vcr: vcr, prov: *f.Provenance}
	for _, i := range f.Interactions {
		r.recorded = append(r.recorded, canonicalizeRecorded(i.Request))
	}
	r.replayed = make([]bool, len(r.recorded))
	vcr.SetMatcher(r.match)
	return r, nil
}

// noNetwork is the real transport of a replaying recorder: never used, and
// refusing if it ever were.
type noNetwork struct{}

func (noNetwork) RoundTrip(req *http.Request) (*http.Response, error) {
	return nil, fmt.Errorf("cassette replay: refusing to reach the network for %s %s", req.Method, req.URL)
}

// AddSecrets adds known secret values (a key seen in a request's
// credential header, a password in the upstream URL) to scrub from the
// cassette and to look for after saving. Safe to call while recording.
// When replaying, they are scrubbed from each live request before it is
// matched (as the recording scrubbed them), so a miss's diff never shows
// one.
func (r *Recorder) AddSecrets(secrets ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.scrub != nil {
		r.scrub.add(secrets)
		return
	}
	if r.mode == ModeReplay {
		r.replaySecrets = newScrubber(append(r.replaySecrets.secretsOrNil(), secrets...))
	}
}

func (s *scrubber) secretsOrNil() []string {
	if s == nil {
		return nil
	}
	return s.secrets
}

// Secrets returns the known secret values so far (recording only).
func (r *Recorder) Secrets() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.scrub == nil {
		return nil
	}
	return append([]string(nil), r.scrub.secrets...)
}

// SetPlaceholders names run-specific values (the agent's working
// directory, its throw-away home) by placeholders ("{{cwd}}"): a recording
// stores the placeholder wherever the value appears in a request or
// response; a replay matches requests with the value read as the
// placeholder, and answers with the placeholder read as the value of this
// run. So an agent that puts its cwd in its prompts replays from any
// folder.
func (r *Recorder) SetPlaceholders(values map[string]string) {
	var places [][2]string
	for ph, v := range values {
		if v != "" {
			places = append(places, [2]string{v, ph})
		}
	}
	sort.Slice(places, func(i, j int) bool { return len(places[i][0]) > len(places[j][0]) })
	r.mu.Lock()
	r.places = places
	r.mu.Unlock()
}

func (r *Recorder) placeholders() [][2]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.places
}

// toPlaceholders replaces this run's values by their placeholders in s.
func (r *Recorder) toPlaceholders(s string) string {
	for _, p := range r.placeholders() {
		s = strings.ReplaceAll(s, p[0], p[1])
	}
	return s
}

// fromPlaceholders replaces placeholders by this run's values in s.
func (r *Recorder) fromPlaceholders(s string) string {
	for _, p := range r.placeholders() {
		s = strings.ReplaceAll(s, p[1], p[0])
	}
	return s
}

// placehold is the recording hook of SetPlaceholders.
func (r *Recorder) placehold(i *cassette.Interaction) error {
	i.Request.Body = r.toPlaceholders(i.Request.Body)
	i.Request.URL = r.toPlaceholders(i.Request.URL)
	i.Response.Body = r.toPlaceholders(i.Response.Body)
	return nil
}

// UpdateProvenance changes the provenance block before Stop saves it (the
// agent's version, known once it answered initialize).
func (r *Recorder) UpdateProvenance(f func(*Provenance)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.prov)
	r.prov.Agent = patternRedact(r.prov.Agent)
}

// Recorded returns the interactions as saved (scrubbed), after Stop in
// record mode.
func (r *Recorder) Recorded() []*cassette.Interaction {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*cassette.Interaction(nil), r.saved...)
}

// Path returns the cassette file.
func (r *Recorder) Path() string { return r.path }

// Mode returns the recorder's mode.
func (r *Recorder) Mode() Mode { return r.mode }

// Provenance returns the provenance block (of the loaded cassette when
// replaying, of the one being recorded otherwise).
func (r *Recorder) Provenance() Provenance { return r.prov }

// Client returns an http.Client whose transport is r.
func (r *Recorder) Client() *http.Client { return &http.Client{Transport: r} }

// match is the go-vcr matcher: method + path + canonical body. go-vcr calls
// it under its cassette lock, in interaction order, for interactions not yet
// replayed; a true answer replays that interaction. The replayed mirror is
// updated the same way, so identical requests consume identical recordings in
// order.
func (r *Recorder) match(req *http.Request, rec cassette.Request) bool {
	c, ok := req.Context().Value(ctxKey{}).(canonical)
	if !ok {
		return false
	}
	if !c.equal(canonicalizeRecorded(rec)) {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, x := range r.recorded {
		if !r.replayed[i] && x.equal(c) {
			r.replayed[i] = true
			break
		}
	}
	return true
}

// RoundTrip records or replays one exchange. Event-stream bodies come back
// one event per Read. In replay mode a request without a recorded match gets
// an HTTP 404 whose body (OpenAI error shape) carries the MissError text, and
// the miss is kept for Misses and Err.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	r.mu.Lock()
	r.requests++
	n := r.requests
	r.mu.Unlock()
	if r.mode == ModeRecord {
		// go-vcr tees the body of the request it is given and keeps its
		// header map: give it a copy, so the caller's request is never touched
		// (the copy carries the same bytes to the server).
		resp, err := r.vcr.RoundTrip(req.Clone(ctx))
		if err != nil {
			return nil, fmt.Errorf("cassette %s: record %s %s: %w", r.path, req.Method, req.URL.Path, err)
		}
		if err := rechunk(ctx, resp, nil); err != nil {
			return nil, fmt.Errorf("cassette %s: %w", r.path, err)
		}
		return resp, nil
	}

	req = req.Clone(ctx)
	body, err := readBody(req)
	if err != nil {
		return nil, fmt.Errorf("cassette %s: %w", r.path, err)
	}
	r.mu.Lock()
	known := r.replaySecrets.secretsOrNil()
	r.mu.Unlock()
	c := canonicalize(req.Method, req.URL.String(), r.toPlaceholders(string(body)), known...)
	resp, err := r.vcr.RoundTrip(req.WithContext(context.WithValue(ctx, ctxKey{}, c)))
	if errors.Is(err, cassette.ErrInteractionNotFound) {
		return r.miss(req, n, c), nil
	}
	if err != nil {
		return nil, fmt.Errorf("cassette %s: replay %s %s: %w", r.path, req.Method, req.URL.Path, err)
	}
	if err := rechunk(ctx, resp, r.fromPlaceholders); err != nil {
		return nil, fmt.Errorf("cassette %s: %w", r.path, err)
	}
	return resp, nil
}

// MissHeader marks the synthetic response to a request the cassette has no
// answer for.
const MissHeader = "X-Todoharness-Cassette-Miss"

func (r *Recorder) miss(req *http.Request, n int, c canonical) *http.Response {
	r.mu.Lock()
	replayed := append([]bool(nil), r.replayed...)
	r.mu.Unlock()
	idx, diff := nearest(c, r.recorded, replayed)
	m := &MissError{Cassette: r.path, Request: n, Method: c.method, Path: c.path, Nearest: idx, Diff: diff}
	if idx >= 0 {
		m.NearestReplayed = replayed[idx]
	}
	r.mu.Lock()
	r.misses = append(r.misses, m)
	r.mu.Unlock()
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

// Requests returns the number of requests made through the recorder.
func (r *Recorder) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Misses returns the requests that had no recorded match, in order.
func (r *Recorder) Misses() []*MissError {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*MissError(nil), r.misses...)
}

// Err returns the misses so far as one error (nil when there were none).
func (r *Recorder) Err() error {
	var errs []error
	for _, m := range r.Misses() {
		errs = append(errs, m)
	}
	return errors.Join(errs...)
}

// Unplayed returns the indexes of recorded interactions not replayed yet
// (replay mode; nil when recording).
func (r *Recorder) Unplayed() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []int
	for i, done := range r.replayed {
		if !done {
			out = append(out, i)
		}
	}
	return out
}

// Stop ends the recorder. When recording, it scrubs and saves the cassette,
// puts the provenance block first, checks the result for anything that still
// looks like a credential, and only then replaces Path. Stop is idempotent.
func (r *Recorder) Stop() error {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return nil
	}
	r.stopped = true
	r.mu.Unlock()
	if r.mode == ModeReplay {
		return r.vcr.Stop()
	}
	tmp := strings.TrimSuffix(r.path, ".yaml") + ".recording.yaml"
	defer os.Remove(tmp)
	if err := r.vcr.Stop(); err != nil {
		return fmt.Errorf("cassette %s: save: %w", r.path, err)
	}
	raw, err := os.ReadFile(tmp)
	if err != nil {
		return fmt.Errorf("cassette %s: save: %w", r.path, err)
	}
	var saved file
	if err := yamlx.Unmarshal(raw, &saved, false); err != nil {
		return fmt.Errorf("cassette %s: save: %w", r.path, err)
	}
	r.mu.Lock()
	r.saved = saved.Interactions
	r.mu.Unlock()
	if r.prov.Model == "" {
		for _, i := range saved.Interactions {
			if r.prov.Model = modelOf(i); r.prov.Model != "" {
				break
			}
		}
		if r.prov.Model == "" {
			r.prov.Model = "(unknown)"
		}
	}
	if err := r.prov.Validate(); err != nil {
		return fmt.Errorf("cassette %s: not saved: %w", r.path, err)
	}
	out, err := withProvenance(raw, r.prov)
	if err != nil {
		return fmt.Errorf("cassette %s: %w", r.path, err)
	}
	if f := ScanSecrets(out, r.Secrets()); len(f) > 0 {
		return fmt.Errorf("cassette %s: not saved: scrubbing left something that looks like a credential (%s)", r.path, f[0])
	}
	out = r.keepUnchanged(out)
	if _, err := parseFile(out, r.path); err != nil {
		return fmt.Errorf("cassette %s: not saved: %w", r.path, err)
	}
	return writeFileAtomic(r.path, out)
}

// keepUnchanged returns the previous cassette's bytes when out differs from
// them only in the provenance's recordedAt and toolVersion.
func (r *Recorder) keepUnchanged(out []byte) []byte {
	if r.previous == "" {
		return out
	}
	old, err := os.ReadFile(r.previous)
	if err != nil {
		return out
	}
	f, err := parseFile(old, r.previous)
	if err != nil {
		return out
	}
	p := r.prov
	p.RecordedAt, p.ToolVersion = f.Provenance.RecordedAt, f.Provenance.ToolVersion
	raw := bytes.TrimPrefix(out, []byte("---\n"+provenanceHeader))
	if i := bytes.Index(raw, []byte("\nversion: ")); i >= 0 {
		if again, err := withProvenance(raw[i+1:], p); err == nil && bytes.Equal(again, old) {
			return old
		}
	}
	return out
}
