package record

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	vcr "gopkg.in/dnaeon/go-vcr.v3/cassette"
	"gopkg.in/dnaeon/go-vcr.v3/recorder"

	"github.com/todoharness/todoharness/harness/llm/cassette"
	"github.com/todoharness/todoharness/harness/llm/cassette/scrub"
	"github.com/todoharness/todoharness/internal/yamlx"
)

// Options configures a recording.
type Options struct {
	// Path is the cassette file to write (must end in .yaml). It is replaced
	// only when Stop succeeds.
	Path string
	// Provenance is written into the cassette. BaseURL and Model are
	// required; APIHost, RecordedAt, ToolVersion, Source and Description are
	// filled in when empty (Source: mock-server for a loopback BaseURL,
	// real-model otherwise).
	Provenance cassette.Provenance
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
	// BeforeSave, when set, edits each interaction before it is saved,
	// after normalising and scrubbing (package fromlog sets the recorded
	// latency).
	BeforeSave func(*vcr.Interaction) error
}

// Recorder is an http.RoundTripper that records the exchanges it carries to
// one cassette. Use Client (or Recorder itself as a Transport) under the llm
// client, or serve it with package proxy, then Stop. It is safe for
// concurrent use.
type Recorder struct {
	path     string
	previous string
	vcr      *recorder.Recorder
	places   cassette.Placeholders

	mu       sync.Mutex
	prov     cassette.Provenance
	scrub    *scrub.Scrubber
	saved    []*vcr.Interaction // the interactions as saved
	requests int
	stopped  bool
}

// Start starts a recording. Nothing is written until Stop.
func Start(opts Options) (*Recorder, error) {
	name, err := cassette.VCRName(opts.Path)
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
	v, err := recorder.NewWithOptions(&recorder.Options{
		CassetteName:       name + ".recording",
		Mode:               recorder.ModeRecordOnly,
		RealTransport:      rt,
		SkipRequestLatency: true,
	})
	if err != nil {
		return nil, fmt.Errorf("record cassette %s: %w", opts.Path, err)
	}
	r := &Recorder{path: opts.Path, previous: opts.Previous, vcr: v, prov: p, scrub: scrub.New(opts.Secrets)}
	v.AddHook(r.places.Interaction, recorder.BeforeSaveHook)
	v.AddHook(r.clean, recorder.BeforeSaveHook)
	if opts.BeforeSave != nil {
		v.AddHook(opts.BeforeSave, recorder.BeforeSaveHook)
	}
	return r, nil
}

// clean normalises and scrubs an interaction before it is saved (on a copy
// of what was sent: what reaches the server is never changed).
func (r *Recorder) clean(i *vcr.Interaction) error {
	if i == nil {
		return nil
	}
	if err := normalize(i); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scrub.Interaction(i)
	return nil
}

// completeProvenance fills defaults and refuses a block that would present
// a local recording as real-model output.
func completeProvenance(p cassette.Provenance, now func() time.Time) (cassette.Provenance, error) {
	if p.BaseURL == "" {
		return p, errors.New("provenance: BaseURL is required")
	}
	p.BaseURL = cassette.WithoutUserinfo(p.BaseURL)
	p.Agent = scrub.PatternRedact(p.Agent)
	loop := cassette.IsLoopback(p.BaseURL)
	if p.Source == "" {
		p.Source = cassette.SourceRealModel
		if loop {
			p.Source = cassette.SourceMockServer
		}
	}
	if loop && p.Source == cassette.SourceRealModel {
		return p, fmt.Errorf("provenance: %s is a local server: a recording against it cannot be labelled %s", p.BaseURL, cassette.SourceRealModel)
	}
	switch p.Source {
	case cassette.SourceRealModel:
		p.RealModelOutput = true
	case cassette.SourceMockServer:
		p.RealModelOutput = false
	}
	if p.APIHost == "" {
		p.APIHost = cassette.HostOf(p.BaseURL)
	}
	p.APIHost = cassette.StripLoopbackPort(p.APIHost)
	if p.RecordedAt == "" {
		if now == nil {
			now = time.Now
		}
		p.RecordedAt = now().UTC().Format(time.DateOnly)
	}
	if p.ToolVersion == "" {
		p.ToolVersion = cassette.ToolVersion()
	}
	if p.Description == "" {
		switch p.Source {
		case cassette.SourceMockServer:
			p.Description = "recorded against the local mock model server at " + p.BaseURL +
				": scripted answers, NOT real-model output"
		case cassette.SourceSessionLog:
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
func modelOf(i *vcr.Interaction) string {
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

// AddSecrets adds known secret values (a key seen in a request's
// credential header, a password in the upstream URL) to scrub from the
// cassette and to look for after saving. Safe to call while recording.
func (r *Recorder) AddSecrets(secrets ...string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.scrub.Add(secrets)
}

// Secrets returns the known secret values so far.
func (r *Recorder) Secrets() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.scrub.Secrets()...)
}

// SetPlaceholders names run-specific values by placeholders ("{{cwd}}"):
// the cassette stores the placeholder wherever the value appears in a
// request or response (see cassette.Placeholders).
func (r *Recorder) SetPlaceholders(values map[string]string) { r.places.Set(values) }

// UpdateProvenance changes the provenance block before Stop saves it (the
// agent's version, known once it answered initialize).
func (r *Recorder) UpdateProvenance(f func(*cassette.Provenance)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f(&r.prov)
	r.prov.Agent = scrub.PatternRedact(r.prov.Agent)
}

// Recorded returns the interactions as saved (scrubbed), after Stop.
func (r *Recorder) Recorded() []*vcr.Interaction {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*vcr.Interaction(nil), r.saved...)
}

// Path returns the cassette file.
func (r *Recorder) Path() string { return r.path }

// Mode returns cassette.ModeRecord.
func (r *Recorder) Mode() cassette.Mode { return cassette.ModeRecord }

// Provenance returns the provenance block being recorded.
func (r *Recorder) Provenance() cassette.Provenance {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.prov
}

// Client returns an http.Client whose transport is r.
func (r *Recorder) Client() *http.Client { return &http.Client{Transport: r} }

// RoundTrip sends one request to the real transport and records the
// exchange. Event-stream bodies come back one event per Read.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	r.mu.Lock()
	r.requests++
	r.mu.Unlock()
	// go-vcr tees the body of the request it is given and keeps its
	// header map: give it a copy, so the caller's request is never touched
	// (the copy carries the same bytes to the server).
	resp, err := r.vcr.RoundTrip(req.Clone(ctx))
	if err != nil {
		return nil, fmt.Errorf("cassette %s: record %s %s: %w", r.path, req.Method, req.URL.Path, err)
	}
	if err := cassette.Rechunk(ctx, resp, nil); err != nil {
		return nil, fmt.Errorf("cassette %s: %w", r.path, err)
	}
	return resp, nil
}

// Requests returns the number of requests made through the recorder.
func (r *Recorder) Requests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests
}

// Stop ends the recording: it scrubs and saves the cassette,
// puts the provenance block first, checks the result for anything that still
// looks like a credential, and only then replaces Path. Stop is idempotent.
func (r *Recorder) Stop() error {
	tmp, first, err := r.finish()
	if !first {
		return nil
	}
	defer os.Remove(tmp)
	if err != nil {
		return fmt.Errorf("cassette %s: save: %w", r.path, err)
	}
	raw, err := os.ReadFile(tmp)
	if err != nil {
		return fmt.Errorf("cassette %s: save: %w", r.path, err)
	}
	var saved cassette.File
	if err := yamlx.Unmarshal(raw, &saved, false); err != nil {
		return fmt.Errorf("cassette %s: save: %w", r.path, err)
	}
	r.mu.Lock()
	r.saved = saved.Interactions
	r.mu.Unlock()
	if len(saved.Interactions) == 0 {
		return fmt.Errorf("cassette %s: not saved: no interactions: no model request was answered through the recorder (%d made)", r.path, r.Requests())
	}
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
	out, err := cassette.WithProvenance(raw, r.prov)
	if err != nil {
		return fmt.Errorf("cassette %s: %w", r.path, err)
	}
	if f := scrub.ScanSecrets(out, r.Secrets()); len(f) > 0 {
		return fmt.Errorf("cassette %s: not saved: scrubbing left something that looks like a credential (%s)", r.path, scrub.Describe(f))
	}
	out = r.keepUnchanged(out)
	if _, err := cassette.Parse(out, r.path); err != nil {
		return fmt.Errorf("cassette %s: not saved: %w", r.path, err)
	}
	return cassette.WriteFile(r.path, out)
}

// Discard ends the recording without saving anything (an interrupted
// run): Path is left as it was. Stop after Discard does nothing.
func (r *Recorder) Discard() error {
	tmp, first, err := r.finish()
	if !first {
		return nil
	}
	os.Remove(tmp)
	if err != nil {
		return fmt.Errorf("cassette %s: discard: %w", r.path, err)
	}
	return nil
}

// finish stops go-vcr, once: first is false when the recording was already
// stopped; otherwise tmp is the file go-vcr wrote (the caller removes it).
func (r *Recorder) finish() (tmp string, first bool, err error) {
	r.mu.Lock()
	if r.stopped {
		r.mu.Unlock()
		return "", false, nil
	}
	r.stopped = true
	r.mu.Unlock()
	return strings.TrimSuffix(r.path, ".yaml") + ".recording.yaml", true, r.vcr.Stop()
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
	f, err := cassette.Parse(old, r.previous)
	if err != nil {
		return out
	}
	p := r.prov
	p.RecordedAt, p.ToolVersion = f.Provenance.RecordedAt, f.Provenance.ToolVersion
	raw := bytes.TrimPrefix(out, []byte("---\n"+cassette.ProvenanceHeader))
	if i := bytes.Index(raw, []byte("\nversion: ")); i >= 0 {
		if again, err := cassette.WithProvenance(raw[i+1:], p); err == nil && bytes.Equal(again, old) {
			return old
		}
	}
	return out
}
