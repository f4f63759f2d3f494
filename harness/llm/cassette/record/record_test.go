package record_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	vcr "gopkg.in/dnaeon/go-vcr.v3/cassette"

	"github.com/todoharness/todoharness/harness/llm/cassette"
	"github.com/todoharness/todoharness/harness/llm/cassette/internal/cassettetest"
	"github.com/todoharness/todoharness/harness/llm/cassette/internal/echoforms"
	"github.com/todoharness/todoharness/harness/llm/cassette/record"
	"github.com/todoharness/todoharness/harness/llm/cassette/scrub"
)

func TestRecordScrubsTheKeyButSendsIt(t *testing.T) {
	const key = "sk-test-SECRET123"
	path, srv := cassettetest.RecordTwo(t, key, "")
	for _, a := range srv.Auth() {
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
	if f := scrub.ScanCredentials(data); len(f) > 0 {
		t.Errorf("scan finds %v", f)
	}
}

func TestProvenanceIsWrittenFirstAndReadBack(t *testing.T) {
	path, srv := cassettetest.RecordTwo(t, "sk-unit-test-key-0001", "")
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(data, []byte("---\n# todoharness cassette")) || bytes.Index(data, []byte("provenance:")) > bytes.Index(data, []byte("interactions:")) {
		t.Errorf("provenance block is not first:\n%s", data[:200])
	}
	p, err := cassette.LoadProvenance(path)
	if err != nil {
		t.Fatal(err)
	}
	// The ephemeral port of a loopback server is not kept (re-recording
	// must not churn), and the recording date is a date.
	_ = srv
	want := cassette.Provenance{
		Source: cassette.SourceMockServer, RealModelOutput: false, APIHost: "127.0.0.1", BaseURL: "http://127.0.0.1/v1", Model: "m",
		RecordedAt: "2026-01-02", ToolVersion: cassette.ToolVersion(),
		Description: "recorded against the local mock model server at http://127.0.0.1/v1: scripted answers, NOT real-model output",
	}
	if p != want {
		t.Errorf("provenance\n got %+v\nwant %+v", p, want)
	}
}

func TestRecordRefusesToMislabel(t *testing.T) {
	for _, base := range []string{"http://127.0.0.1:1/v1", "http://localhost:8080", "http://[::1]:9"} {
		_, err := record.Start(record.Options{Path: filepath.Join(t.TempDir(), "c.yaml"),
			Provenance: cassette.Provenance{Source: cassette.SourceRealModel, BaseURL: base, Model: "m"}})
		if err == nil || !strings.Contains(err.Error(), "cannot be labelled real-model") {
			t.Errorf("%s: got %v", base, err)
		}
	}
	r, err := record.Start(record.Options{Path: filepath.Join(t.TempDir(), "c.yaml"),
		Provenance: cassette.Provenance{BaseURL: "https://api.deepseek.com", Model: "deepseek-chat"}})
	if err != nil {
		t.Fatal(err)
	}
	if p := r.Provenance(); p.Source != cassette.SourceRealModel || !p.RealModelOutput || p.APIHost != "api.deepseek.com" {
		t.Errorf("remote recording labelled %+v", p)
	}
}

func TestStopWithoutExchangesSavesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := record.Start(record.Options{Path: path, Provenance: cassette.Provenance{BaseURL: "https://api.deepseek.com", Model: "m"}})
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

// What scrubbing left of a key, in a form only its fragments show (here
// planted after scrubbing, as a form the scrubber could not locate would
// be left), makes Stop refuse the recording: the error names the
// interaction, the field and the form, never the key, and nothing is
// written.
func TestStopRefusesAFragmentLeftByScrubbing(t *testing.T) {
	key := echoforms.KeyShaped(8)
	for _, f := range echoforms.Forms() {
		t.Run(f.Name, func(t *testing.T) {
			srv := cassettetest.NewSSEServer(t, cassettetest.Answer("Hello"))
			path := filepath.Join(t.TempDir(), "c.yaml")
			rec, err := record.Start(record.Options{
				Path: path, Secrets: []string{key}, Provenance: cassette.Provenance{BaseURL: srv.URL + "/v1", Model: "m"},
				BeforeSave: func(i *vcr.Interaction) error {
					i.Response.Headers["X-Late"] = []string{f.Text(key)}
					return nil
				},
			})
			if err != nil {
				t.Fatal(err)
			}
			c := cassettetest.Client(t, rec, cassette.Provenance{BaseURL: srv.URL + "/v1", Model: "m"})
			if _, err := c.Stream(context.Background(), cassettetest.UserReq("hi"), nil); err != nil {
				t.Fatal(err)
			}
			err = rec.Stop()
			if err == nil {
				t.Fatal("saved")
			}
			msg := err.Error()
			if !strings.Contains(msg, "interaction 0 response header X-Late") || !strings.Contains(msg, "fragment of a known secret") {
				t.Errorf("the refusal does not name the interaction, field and form: %v", err)
			}
			if p := echoforms.Left(msg, f, key); p != "" || strings.Contains(msg, key[8:16]) {
				t.Errorf("the refusal prints the key: %v", err)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("a cassette was written: %v", err)
			}
		})
	}
}
