package conformance

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	conformancefixtures "github.com/todoharness/todoharness/fixtures/conformance"
	"github.com/todoharness/todoharness/internal/buildinfo"
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

// A failed SHOULD check (the fake that is slow to exit fails only
// ACP-EXIT-1) passes the run; under Strict it fails the run, says so in
// the verdict and goes into the baseline --write-baseline writes (the
// JUnit report: conformance/report's TestJUnitStrict).
func TestStrictFailsTheRunOnShouldFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		strict        bool
		verdict, line string
		inBaseline    bool
	}{
		{strict: false, verdict: VerdictPass, line: "PASS: every MUST check passes"},
		{strict: true, verdict: VerdictFail, line: "FAIL: SHOULD failed (--strict): ACP-EXIT-1", inBaseline: true},
	} {
		rep := judgeStrict(t, "fake-slow-exit", tc.strict)
		if rep.Verdict != tc.verdict || rep.OK != (tc.verdict == VerdictPass) || rep.Strict != tc.strict {
			t.Errorf("strict %v: verdict %s (ok %v, strict %v), want %s", tc.strict, rep.Verdict, rep.OK, rep.Strict, tc.verdict)
		}
		sum := summary(t, rep)
		if !strings.Contains(sum, tc.line+"\n") {
			t.Errorf("strict %v: summary does not end with %q:\n%s", tc.strict, tc.line, sum)
		}
		baseline := render(t, func(b *bytes.Buffer) error { return rep.WriteBaseline(b) })
		if got := strings.Contains(baseline, "- id: ACP-EXIT-1\n"); got != tc.inBaseline {
			t.Errorf("strict %v: baseline lists ACP-EXIT-1: %v, want %v:\n%s", tc.strict, got, tc.inBaseline, baseline)
		}
	}
	// Under Strict a baselined SHOULD failure passes, as a MUST one does.
	rep := judgeStrict(t, "fake-slow-exit", true, ExpectedFailure{ID: "ACP-EXIT-1", Reason: "exits late"})
	if rep.Verdict != VerdictPass {
		t.Errorf("strict with the SHOULD failure baselined: %s, want PASS", rep.Verdict)
	}
}

// The JSON report names the tool, the catalogue, the agent (its
// initialize answer's agentInfo) and the run's start, durations in ms.
func TestJSONReportSaysWhatJudgedWhat(t *testing.T) {
	t.Parallel()
	rep := judgeStrict(t, "reference", false)
	var got struct {
		ToolVersion      *string
		CatalogueVersion *int
		AgentInfo        *AgentInfo
		Started          *time.Time
		DurationMs       *float64
		Strict           *bool
		Cases            []struct{ DurationMs, StartupMs *float64 }
	}
	if err := json.Unmarshal([]byte(render(t, func(b *bytes.Buffer) error { return rep.WriteJSON(b) })), &got); err != nil {
		t.Fatal(err)
	}
	switch {
	case got.ToolVersion == nil || *got.ToolVersion != buildinfo.Version():
		t.Errorf("toolVersion %v, want %q", got.ToolVersion, buildinfo.Version())
	case got.CatalogueVersion == nil || *got.CatalogueVersion != CatalogueVersion:
		t.Errorf("catalogueVersion %v, want %d", got.CatalogueVersion, CatalogueVersion)
	case got.AgentInfo == nil || *got.AgentInfo != (AgentInfo{Name: "todoharness", Version: "0.1.0"}):
		t.Errorf("agentInfo %+v, want the reference agent's initialize answer", got.AgentInfo)
	case got.Started == nil || !got.Started.Equal(savedRun(t, "reference")[0].Run.Started):
		t.Errorf("started %v, want the run's start", got.Started)
	case got.DurationMs == nil || *got.DurationMs <= 0 || got.Strict == nil:
		t.Errorf("durationMs %v, strict %v", got.DurationMs, got.Strict)
	case len(got.Cases) == 0 || got.Cases[0].DurationMs == nil || got.Cases[0].StartupMs == nil:
		t.Errorf("cases without durationMs / startupMs")
	}
	if !strings.Contains(summary(t, rep), "\nagent info: todoharness 0.1.0 (its initialize answer)\n") {
		t.Errorf("the summary does not name the agent's own version:\n%s", summary(t, rep))
	}
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
