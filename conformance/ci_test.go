package conformance

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	conformancefixtures "github.com/todoharness/todoharness/fixtures/conformance"
)

// judgeStrict judges a captured run, with or without Strict.
func judgeStrict(t *testing.T, run string, strict bool, es ...ExpectedFailure) *Report {
	t.Helper()
	rep, err := Judge(savedRun(t, run), JudgeConfig{Checks: capturedChecks(t), Validator: sharedValidator(t), Strict: strict, Expected: es})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func render(t *testing.T, write func(*bytes.Buffer) error) string {
	t.Helper()
	var b bytes.Buffer
	if err := write(&b); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// An agent whose initialize answer has no agentInfo: none in the report.
func TestAgentInfoMissing(t *testing.T) {
	t.Parallel()
	ev := savedCase(t, "fake-ok", "plan-basic")
	for i := range ev.Procs {
		ev.Procs[i].Init = json.RawMessage(`{"protocolVersion":1}`)
	}
	rep, err := Judge([]*Evidence{ev}, JudgeConfig{Validator: sharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.AgentInfo != nil {
		t.Errorf("agentInfo %+v, want none", rep.AgentInfo)
	}
	if js := render(t, func(b *bytes.Buffer) error { return rep.WriteJSON(b) }); strings.Contains(js, "agentInfo") {
		t.Errorf("the JSON report has an agentInfo")
	}
}

func TestCatalogueVersion(t *testing.T) {
	cases, err := LoadCases(conformancefixtures.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	type checkKey struct {
		ID, Level, Title, Spec string
		Dialects               []string
		Always                 bool
	}
	var keys []checkKey
	for _, c := range Catalogue() {
		keys = append(keys, checkKey{c.ID, string(c.Level), c.Title, c.Spec, c.Dialects, c.Always})
	}
	for _, c := range cases {
		c.Source = "" // where it was loaded from is no part of it
	}
	b, err := json.Marshal(struct {
		Checks []checkKey
		Cases  []*Case
	}{keys, cases})
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	got := hex.EncodeToString(sum[:])
	if got != catalogueFingerprint {
		t.Errorf("the catalogue or the built-in cases changed (fingerprint %s; version %d has %q): in conformance/check.go, bump CatalogueVersion to %d and set catalogueFingerprint to %q",
			got, CatalogueVersion, catalogueFingerprint, CatalogueVersion+1, got)
	}
}
