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
	rep, err := Judge(savedRun(t, run), JudgeConfig{Validator: sharedValidator(t), Strict: strict, Expected: es})
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
// ACP-EXIT-1) passes the run and is a JUnit <skipped>; under Strict it
// fails the run, says so in the verdict, is a JUnit <failure> and goes
// into the baseline --write-baseline writes.
func TestStrictFailsTheRunOnShouldFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		strict                 bool
		verdict, line, junit   string
		inBaseline, notInJUnit bool
		failures               string
	}{
		{strict: false, verdict: VerdictPass, line: "PASS: every MUST check passes", junit: `<skipped message="SHOULD check fails (does not fail the run): `, failures: `failures="0"`},
		{strict: true, verdict: VerdictFail, line: "FAIL: SHOULD failed (--strict): ACP-EXIT-1", junit: "<failure message=", failures: `failures="1"`, inBaseline: true},
	} {
		rep := judgeStrict(t, "fake-slow-exit", tc.strict)
		if rep.Verdict != tc.verdict || rep.OK != (tc.verdict == VerdictPass) || rep.Strict != tc.strict {
			t.Errorf("strict %v: verdict %s (ok %v, strict %v), want %s", tc.strict, rep.Verdict, rep.OK, rep.Strict, tc.verdict)
		}
		sum := summary(t, rep)
		if !strings.Contains(sum, tc.line+"\n") {
			t.Errorf("strict %v: summary does not end with %q:\n%s", tc.strict, tc.line, sum)
		}
		junit := render(t, func(b *bytes.Buffer) error { return rep.WriteJUnit(b) })
		i := strings.Index(junit, `name="ACP-EXIT-1: `)
		if i < 0 {
			t.Fatalf("no ACP-EXIT-1 test case in the JUnit report:\n%s", junit)
		}
		if got := junit[i:]; !strings.Contains(got[:strings.Index(got, "</testcase>")], tc.junit) {
			t.Errorf("strict %v: ACP-EXIT-1 in JUnit is not %q:\n%s", tc.strict, tc.junit, got[:strings.Index(got, "</testcase>")])
		}
		if !strings.Contains(junit, tc.failures) {
			t.Errorf("strict %v: JUnit suite does not say %s", tc.strict, tc.failures)
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

func TestEscapeGitHub(t *testing.T) {
	for _, tc := range []struct{ in, data, property string }{
		{"plain text", "plain text", "plain text"},
		{"100% done", "100%25 done", "100%25 done"},
		{"line one\nline two\r\n", "line one%0Aline two%0D%0A", "line one%0Aline two%0D%0A"},
		{"TW-PLAN-1: a, b", "TW-PLAN-1: a, b", "TW-PLAN-1%3A a%2C b"},
		// Already escaped-looking input is escaped again, not left as is.
		{"%0A", "%250A", "%250A"},
	} {
		if got := EscapeGitHubData(tc.in); got != tc.data {
			t.Errorf("EscapeGitHubData(%q) = %q, want %q", tc.in, got, tc.data)
		}
		if got := EscapeGitHubProperty(tc.in); got != tc.property {
			t.Errorf("EscapeGitHubProperty(%q) = %q, want %q", tc.in, got, tc.property)
		}
	}
}

// --format github: one annotation per check that failed, ::error when it
// fails the run, ::warning for a SHOULD that does not, ::notice for INFO;
// a stale entry is an error; the verdict of an INCOMPLETE run is one.
func TestWriteGitHub(t *testing.T) {
	t.Parallel()
	annotations := func(rep *Report) []string {
		out := render(t, func(b *bytes.Buffer) error { return rep.WriteGitHub(b) })
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if out == "" {
			lines = nil
		}
		for _, l := range lines {
			if strings.Count(l, "::") < 2 || strings.ContainsAny(l, "\r") {
				t.Errorf("not one workflow command: %q", l)
			}
		}
		return lines
	}
	heads := func(lines []string) []string {
		var out []string
		for _, l := range lines {
			out = append(out, l[:strings.Index(l[2:], "::")+2])
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		rep    *Report
		want   []string
		detail string // a part of the first annotation
	}{
		{"a MUST failure and the INFO check it drags", judgeStrict(t, "fake-wrong-counts", false),
			[]string{"::error title=TW-COUNTS-1", "::notice title=TW-COUNTS-2"},
			"::MUST TW-COUNTS-1 fails: a successful result reports the pending, in-progress and completed counts of the new list%0Acase "},
		{"a SHOULD failure", judgeStrict(t, "fake-slow-exit", false), []string{"::warning title=ACP-EXIT-1"},
			"(a SHOULD check: it does not fail the run without --strict)%0Acase "},
		{"a SHOULD failure under --strict", judgeStrict(t, "fake-slow-exit", true), []string{"::error title=ACP-EXIT-1"}, "%0Aspec: \""},
		{"a stale baseline entry", judgeStrict(t, "fake-ok", false, ExpectedFailure{ID: "TW-PLAN-1", Reason: "plans, later"}),
			[]string{"::error title=TW-PLAN-1"}, "a baseline entry (plans, later) matches no failure"},
		{"a pass", judgeStrict(t, "fake-ok", false), nil, ""},
		{"an incomplete run", judgeSaved(t, "fake-ok", nil, "plan-basic"), []string{"::error title=conform INCOMPLETE"}, "::INCOMPLETE: MUST checks not judged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := annotations(tc.rep)
			if strings.Join(heads(got), "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("annotations:\n%s\nwant the heads %q", strings.Join(got, "\n"), tc.want)
			}
			if len(got) > 0 && !strings.Contains(got[0], tc.detail) {
				t.Errorf("%q\ndoes not contain %q", got[0], tc.detail)
			}
		})
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range append(Formats(), "") {
		if _, err := ParseFormat(f); err != nil {
			t.Errorf("ParseFormat(%q): %v", f, err)
		}
	}
	_, err := ParseFormat("githb")
	if err == nil || !strings.Contains(err.Error(), `unknown format "githb": did you mean github? (formats: text, github)`) {
		t.Errorf("ParseFormat(githb) = %v", err)
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

// catalogueFingerprints pins CatalogueVersion to what it versions: the
// checks (ID, level, dialects, every case or not, title, quote) and the
// built-in cases (ID, steps, script, the checks fed). When the catalogue
// or a case changes, TestCatalogueVersion fails: bump CatalogueVersion and
// add the new version's fingerprint here (docs/conformance.md, "Catalogue
// version").
var catalogueFingerprints = map[int]string{
	// 1: the first released catalogue (with ACP-TURN-1, MUST).
	1: "67a23473206892b745f6b3c5e4d51ebbec25efa2e88e53792f62155a7c1ee12f",
	// 2: ACP-SESSION-1 and TW-FINAL-1 (MUST, every case); plans tied to
	// writes by what they show; every failure of a check kept; the cases
	// several-writes-one-turn, valid-invalid-valid, write-beside-other-tool,
	// large-list, unicode-content, reject-status-casing,
	// load-between-prompts, cancel-after-write (Step.Cancel).
	2: "6e761c3de9933b6aa20de5bf0d556c27809fe110fada84040d04a265f7cc13f5",
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
	if want := catalogueFingerprints[CatalogueVersion]; got != want {
		t.Errorf("the catalogue or the built-in cases changed (fingerprint %s; version %d has %q): bump conformance.CatalogueVersion to %d and add %d: %q to catalogueFingerprints",
			got, CatalogueVersion, want, CatalogueVersion+1, CatalogueVersion+1, got)
	}
}
