package conformance

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/internal/testutil"
)

// judgeSaved judges a captured run (only the cases named, when any) with
// the baseline es.
func judgeSaved(t *testing.T, run string, es []ExpectedFailure, only ...string) *Report {
	t.Helper()
	var evs []*Evidence
	for _, ev := range savedRun(t, run) {
		if len(only) == 0 || slices.Contains(only, ev.Case.ID) {
			evs = append(evs, ev)
		}
	}
	rep, err := Judge(evs, JudgeConfig{Checks: capturedChecks(t), Expected: es, Validator: sharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

// A baseline entry covers only the failures it matches: by check, case
// and message; any other failure of the same check fails the run, and an
// entry that matches nothing is stale.
func TestBaselinePerFailure(t *testing.T) {
	t.Parallel()
	// plan-on-reject fails TW-PLAN-1 in the four reject cases and in
	// load-after-several.
	plan := func(cases []string, match string) []ExpectedFailure {
		return []ExpectedFailure{{ID: "TW-PLAN-1", Reason: "known", Cases: cases, Match: match}}
	}
	rep := judgeSaved(t, "fake-plan-on-reject", nil)
	c, _ := rep.Check("TW-PLAN-1")
	var failing []string
	for _, cv := range c.Cases {
		if cv.Outcome == Fail {
			failing = append(failing, cv.Case)
		}
	}
	if len(failing) < 2 {
		t.Fatalf("the premise: TW-PLAN-1 fails in %v", failing)
	}
	for _, tc := range []struct {
		name     string
		es       []ExpectedFailure
		outcome  Outcome
		stale    int
		verdict  string
		xfailIn  []string
		failedIn []string
	}{
		{"every case", plan(nil, ""), XFail, 0, "", failing, nil},
		{"one case: the others still fail", plan(failing[:1], ""), Fail, 0, VerdictFail, failing[:1], failing[1:]},
		{"a glob over the cases", plan([]string{"reject-*"}, ""), Fail, 0, VerdictFail, nil, nil},
		{"a substring of the message", plan(nil, "shows the list of the refused call call_2"), Fail, 0, VerdictFail, nil, nil},
		{"a /regexp/ of the message", plan(nil, `/the refused call call_\d+/`), XFail, 0, "", failing, nil},
		{"another message: stale, and the failures stand", plan(nil, "no plan update shows"), Fail, 1, VerdictFail, nil, failing},
		{"another case: stale", plan([]string{"plan-basic"}, ""), Fail, 1, VerdictFail, nil, failing},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep := judgeSaved(t, "fake-plan-on-reject", tc.es)
			c, _ := rep.Check("TW-PLAN-1")
			if c.Outcome != tc.outcome || len(rep.Stale) != tc.stale {
				t.Errorf("TW-PLAN-1 %s, stale %v; want %s, %d stale", c.Outcome, rep.Stale, tc.outcome, tc.stale)
			}
			if tc.verdict != "" && rep.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s", rep.Verdict, tc.verdict)
			}
			got := map[Outcome][]string{}
			for _, cv := range c.Cases {
				got[cv.Outcome] = append(got[cv.Outcome], cv.Case)
			}
			if tc.xfailIn != nil && !reflect.DeepEqual(got[XFail], tc.xfailIn) {
				t.Errorf("xfail in %v, want %v", got[XFail], tc.xfailIn)
			}
			if tc.failedIn != nil && !reflect.DeepEqual(got[Fail], tc.failedIn) {
				t.Errorf("failed in %v, want %v", got[Fail], tc.failedIn)
			}
		})
	}
	// An entry about checks the run did not judge (narrowed) is not stale.
	load := []ExpectedFailure{{ID: "TW-LOAD-1", Reason: "no replay yet"}}
	if rep := judgeSaved(t, "reference", load, "tool-offered", "plan-basic"); rep.Verdict != VerdictIncomplete || len(rep.Stale) > 0 {
		t.Errorf("a narrowed run with an entry about an unjudged check: %s, stale %v", rep.Verdict, rep.Stale)
	}
	// A new failure of a baselined check (another message) fails the run:
	// no-priority fails ACP-SCHEMA-1 for a missing priority; a baseline
	// for that must not hide a "done" status.
	es := []ExpectedFailure{{ID: "ACP-SCHEMA-1", Reason: "no priority yet", Match: "missing property 'priority'"}}
	if rep := judgeSaved(t, "fake-no-priority", append(es, ExpectedFailure{ID: "TW-PLAN-PRIORITY-1", Reason: "no priority yet"})); rep.Verdict != VerdictPass {
		t.Errorf("no-priority with its baseline: %s %v %v", rep.Verdict, rep.Failing, rep.Stale)
	}
	if rep := judgeSaved(t, "fake-plan-on-reject", es); rep.Verdict != VerdictFail || !slices.Contains(rep.Failing, "ACP-SCHEMA-1") {
		t.Errorf("a bad status under a missing-priority baseline: %s, failing %v", rep.Verdict, rep.Failing)
	}
}

// --write-baseline writes the run's MUST failures as a baseline that makes
// the same evidence pass.
func TestWriteBaselineRoundTrip(t *testing.T) {
	t.Parallel()
	rep := judgeSaved(t, "fake-plan-on-reject", nil)
	var b bytes.Buffer
	if err := rep.WriteBaseline(&b); err != nil {
		t.Fatal(err)
	}
	es, err := ParseExpectedFailures(b.Bytes(), "written")
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if len(es) != len(rep.Failing) || !strings.Contains(b.String(), `reason: "TODO"`) {
		t.Errorf("%d entries for %d failing checks:\n%s", len(es), len(rep.Failing), b.String())
	}
	again := judgeSaved(t, "fake-plan-on-reject", es)
	if again.Verdict != VerdictPass {
		t.Errorf("judged with its own baseline: %s %v %v\n%s", again.Verdict, again.Failing, again.Stale, b.String())
	}
	// A reason whose comment is cut inside a character: the baseline is
	// still valid UTF-8 and reads back (the YAML reader refused "invalid
	// trailing UTF-8 octet").
	for i, c := range rep.Checks {
		for k, cv := range c.Cases {
			if cv.Outcome == Fail {
				rep.Checks[i].Cases[k].Reason = "x" + strings.Repeat("é", 200)
			}
		}
	}
	b.Reset()
	if err := rep.WriteBaseline(&b); err != nil {
		t.Fatal(err)
	}
	if es, err := ParseExpectedFailures(b.Bytes(), "written"); err != nil || len(es) != len(rep.Failing) {
		t.Errorf("a baseline with a comment of 2-byte characters: %d entries, %v\n%s", len(es), err, b.String())
	}
	// An agent with no failure writes an empty baseline.
	b.Reset()
	_ = judgeSaved(t, "fake-ok", nil).WriteBaseline(&b)
	if es, err := ParseExpectedFailures(b.Bytes(), "empty"); err != nil || len(es) != 0 {
		t.Errorf("empty baseline: %v %v\n%s", es, err, b.String())
	}
}

// The example baseline of docs/validating-other-agents.md passes against
// the fault it describes.
func TestDocsExampleBaselinePasses(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), "docs", "validating-other-agents.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile("(?s)```yaml\n(# conform-baseline.yaml\n.*?)```").FindSubmatch(doc)
	if m == nil {
		t.Fatal("docs/validating-other-agents.md has no ```yaml block starting with # conform-baseline.yaml")
	}
	es, err := ParseExpectedFailures(m[1], "the docs' example")
	if err != nil {
		t.Fatal(err)
	}
	// Its reasons are read whole: "(tracked in #123)", unquoted, would end
	// at " #".
	for _, e := range es {
		if !strings.HasSuffix(e.Reason, "(tracked in #123)") || len(e.Cut) > 0 {
			t.Errorf("the docs' example: %s: reason %q, cut %q", e.ID, e.Reason, e.Cut)
		}
	}
	rep := judgeSaved(t, "bridge-no-load-replay", es)
	if rep.Verdict != VerdictPass {
		t.Errorf("the docs' example baseline against the no-load-replay fault: %s, failing %v, stale %v", rep.Verdict, rep.Failing, rep.Stale)
	}
	if rep := judgeSaved(t, "reference", es); rep.Verdict != VerdictFail || len(rep.Stale) != len(es) {
		t.Errorf("against an agent that loads: %s, stale %v", rep.Verdict, rep.Stale)
	}
}

// Bad baselines are refused before anything runs: unknown check (with a
// suggestion), bad regexp, the same entry twice.
func TestBaselineValidation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		yaml, want string
	}{
		{"- id: TW-PLAN-2\n  reason: x\n", `unknown check "TW-PLAN-2": did you mean TW-PLAN-1?`},
		{"- id: TW-PLAN-1\n  reason: x\n  match: /(/\n", "match /(/"},
		{"- id: TW-PLAN-1\n  reason: x\n- id: TW-PLAN-1\n  reason: y\n", "TW-PLAN-1 listed twice"},
		{"- id: TW-PLAN-1\n", "say why"},
	} {
		es, err := ParseExpectedFailures([]byte(tc.yaml), "b.yaml")
		if err == nil {
			_, err = Judge(savedRun(t, "fake-ok"), JudgeConfig{Checks: capturedChecks(t), Expected: es, Validator: sharedValidator(t)})
		}
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want an error with %q", tc.yaml, err, tc.want)
		}
	}
}

// JSON durations are milliseconds.
func TestJSONDurationsInMilliseconds(t *testing.T) {
	t.Parallel()
	rep := judgeSaved(t, "fake-ok", nil)
	var b bytes.Buffer
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	var back struct {
		DurationMs float64 `json:"durationMs"`
		TimeoutMs  float64 `json:"timeoutMs"`
		Cases      []struct {
			DurationMs float64 `json:"durationMs"`
			StartupMs  float64 `json:"startupMs"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.TimeoutMs != float64(rep.Timeout.Milliseconds()) || back.DurationMs <= 0 || back.Cases[1].DurationMs != float64(rep.Cases[1].Duration.Microseconds())/1000 {
		t.Errorf("durations: %+v; report %s, timeout %s, case %s", back, rep.Duration, rep.Timeout, rep.Cases[1].Duration)
	}
	if strings.Contains(b.String(), `"duration":`) || strings.Contains(b.String(), `"timeout":`) {
		t.Error("the JSON report still has bare nanosecond durations")
	}
}

// On a wire with no error flag, a refusal worded otherwise is an
// acceptance, and the failure quotes the rule.
func TestFlaglessWireFailureQuotesTheRule(t *testing.T) {
	t.Parallel()
	rep := judgeSaved(t, "fake-no-error-prefix", nil)
	c, _ := rep.Check("TW-VALID-DUP")
	want := `on OpenAI chat completions a tool result carries no error flag: it counts as an error only when its text starts with "Error:"`
	if c.Outcome != Fail || !strings.Contains(c.Reason, want) {
		t.Errorf("TW-VALID-DUP: %s %q, want it to quote %q", c.Outcome, c.Reason, want)
	}
	// A wire with a flag says nothing of the kind.
	c, _ = judgeSaved(t, "bridge-accept-duplicates", nil).Check("TW-VALID-DUP")
	if !strings.Contains(c.Reason, want) {
		t.Errorf("the reference agent speaks OpenAI chat too: %q", c.Reason)
	}
}

// ACP-SCHEMA-2 never passes while the stable schema rejects a message: it
// lists only what the draft accepts, and is not run when the messages are
// invalid against both.
func TestStableSchemaCheckNeverPassesOverInvalidMessages(t *testing.T) {
	t.Parallel()
	c, _ := judgeSaved(t, "fake-no-priority", nil).Check("ACP-SCHEMA-2")
	if c.Outcome != NotRun || !strings.Contains(c.Reason, "invalid against the stable and the unstable schema alike") {
		t.Errorf("ACP-SCHEMA-2 over plans without priority: %s %q", c.Outcome, c.Reason)
	}
}
