package conformance

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

func TestCutReason(t *testing.T) {
	long := strings.Repeat("x", 200)
	for _, tc := range []struct {
		name, in string
		n        int
		want     string
	}{
		{"short", "a  b\nc", 20, "a b c"},
		{"no hint", long, 10, "xxxxxxxxxx…"},
		{"hint kept", long + "; do this", 120, strings.Repeat("x", 120-len("; do this")) + "…; do this"},
		{"the observation keeps 100 bytes", long + "; do this", 20, strings.Repeat("x", 100) + "…; do this"},
		{"a quoted semicolon is no hint", `"` + long + `; not a hint"`, 10, `"xxxxxxxxx…`},
		{"from the first \"; \" outside quotes", `"a; b" ` + long + "; first; second", 130, `"a; b" ` + strings.Repeat("x", 130-len(`"a; b" `)-len("; first; second")) + "…; first; second"},
		{"a hint too long is cut", "x; " + long + long, 120, "x; " + strings.Repeat("x", 117) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CutReason(tc.in, tc.n); got != tc.want {
				t.Errorf("CutReason(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
		})
	}
}

func TestContainsWord(t *testing.T) {
	for _, tc := range []struct {
		s, w string
		want bool
	}{
		{"after call_1 no plan", "call_1", true},
		{"call_1", "call_1", true},
		{"after call_10 no plan", "call_1", false},
		{"xcall_1", "call_1", false},
		{"call_10 and (call_1)", "call_1", true},
	} {
		if got := containsWord(tc.s, tc.w); got != tc.want {
			t.Errorf("containsWord(%q, %q) = %v", tc.s, tc.w, got)
		}
	}
}

// The summary never cuts a fix hint: a refusal the model could not see
// as one says, in the table and below it, how to word it.
func TestSummaryKeepsFixHintsWhole(t *testing.T) {
	t.Parallel()
	rep, err := Judge(savedRun(t, "fake-no-error-prefix"), JudgeConfig{Checks: capturedChecks(t), Validator: sharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := rep.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(b.String(), "\n") {
		if !strings.Contains(line, "was accepted: the model saw") && !strings.Contains(line, "carries no error") {
			continue
		}
		n++
		if !strings.Contains(line, `it counts as an error only when its text starts with "Error:" (start the refusal with it)`) {
			t.Errorf("a fix hint is cut: %s", line)
		}
	}
	if n < 12 {
		t.Fatalf("%d lines with the hint, want the table's and the failures' for each of the six refusals:\n%s", n, b.String())
	}
}

// Follow-on failures are grouped under their root cause: a refusal the
// model saw as an acceptance fails the refusal check, and every check
// that then finds the call's list shown or in the model's history, with
// no wire line in common; the scripted call ties them.
func TestRootCauseGroupsFollowOnsOfOneCall(t *testing.T) {
	t.Parallel()
	rep, err := Judge(savedRun(t, "fake-no-error-prefix"), JudgeConfig{Checks: capturedChecks(t), Validator: sharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	var group *RootCause
	rcs := rep.RootCauses()
	for i := range rcs {
		if slices.Contains(rcs[i].Checks, "TW-VALID-EMPTY") {
			group = &rcs[i]
		}
	}
	if group == nil {
		t.Fatalf("TW-VALID-EMPTY is in no root cause: %+v", rcs)
	}
	for _, id := range []string{"TW-PLAN-1", "TW-HISTORY-1", "TW-REPLACE-1", "TW-VALID-DUP"} {
		if !slices.Contains(group.Checks, id) {
			t.Errorf("%s is not grouped with TW-VALID-EMPTY: %v", id, group.Checks)
		}
	}
	if !slices.Contains(group.Where, RootAt{Case: "reject-empty", Seq: -1, Call: "call_2"}) {
		t.Errorf("the group does not name reject-empty's call_2: %v", group.Where)
	}
}

// The load checks mark the replayed plan they judged, so the transcript
// points at it and it joins the failures on the same line.
func TestLoadFailuresMarkTheReplayedPlan(t *testing.T) {
	t.Parallel()
	rep, err := Judge(savedRun(t, "bridge-plan-on-reject"), JudgeConfig{Checks: capturedChecks(t), Validator: sharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"TW-LOAD-1", "TW-LOAD-2"} {
		c, _ := rep.Check(id)
		marked := false
		for _, cv := range c.Cases {
			marked = marked || (cv.Outcome == Fail && len(cv.Lines) > 0)
		}
		if c.Outcome != Fail || !marked {
			t.Errorf("%s: %s with no wire line marked", id, c.Outcome)
		}
		if !strings.Contains(c.Reason, "(the list of call_4)") {
			t.Errorf("%s does not say whose list was replayed: %s", id, c.Reason)
		}
	}
}

// A passing row says where the check held, not only its title.
func TestPassingRowSaysWhereItHeld(t *testing.T) {
	t.Parallel()
	rep, err := Judge(savedRun(t, "reference"), JudgeConfig{Checks: capturedChecks(t), Validator: sharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := rep.WriteSummary(&b); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if f := strings.Fields(line); len(f) > 3 && f[2] == "PASS" && !regexp.MustCompile(`PASS +(\d+ cases|[a-z0-9-]+):`).MatchString(line) {
			t.Errorf("a passing row does not say where it held: %s", line)
		}
	}
	c, _ := rep.Check("TW-VALID-EMPTY")
	if got := PassSeen(c); !strings.HasPrefix(got, "reject-empty: ") {
		t.Errorf("TW-VALID-EMPTY: %s", got)
	}
}

// A failing case's transcript marks every failure it can place: on the
// wire line it points at, else at the model request that carried the
// result of the call it names.
func TestTranscriptMarksFailuresWithNoWireLine(t *testing.T) {
	t.Parallel()
	rep, err := Judge(savedRun(t, "fake-no-error-prefix"), JudgeConfig{Checks: capturedChecks(t), Validator: sharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := rep.WriteTranscripts(dir); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "reject-empty", "transcript.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"TW-VALID-EMPTY", "TW-PLAN-1"} {
		if !strings.Contains(string(b), "vvv FAILED "+id+": the result of call_2") {
			t.Errorf("the transcript does not mark %s at call_2's result:\n%s", id, b)
		}
	}
}

// In colour every outcome is painted and the table stays aligned; without,
// the summary carries no escape code.
func TestSummaryColour(t *testing.T) {
	t.Parallel()
	rep, err := Judge(savedRun(t, "bridge-plan-on-reject"), JudgeConfig{Checks: capturedChecks(t), Validator: sharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	var plain, colour bytes.Buffer
	if err := rep.WriteSummary(&plain); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteSummaryColor(&colour, true); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("escape codes without colour")
	}
	for _, want := range []string{"\x1b[32mPASS\x1b[0m", "\x1b[31mFAIL\x1b[0m", "\x1b[31mFAIL: MUST failed"} {
		if !strings.Contains(colour.String(), want) {
			t.Errorf("no %q in colour", want)
		}
	}
	if got := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(colour.String(), ""); got != plain.String() {
		t.Errorf("the coloured summary, codes removed, differs from the plain one:\n%s\n---\n%s", got, plain.String())
	}
}
