package conformance

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/driver"
)

// swallowMode makes the fake agent of fakeagent_test.go take the model's
// tool calls and do nothing with them: no tool_call, no plan, no result to
// the model; the turn goes on to the model's next answer. Nothing shows
// that the write was taken.
const swallowMode = "swallow-calls"

// swallowTool is the fake's todo_write in swallowMode (nil in another).
func swallowTool(mode string) *fakeTool {
	if mode != swallowMode {
		return nil
	}
	return &fakeTool{name: "todo_write", schema: fakeSchema, run: func(*fakeState, string, string, string) {}}
}

// cancelStep runs cancel-after-write against the fake agent in mode and
// returns the report and the step with cancel as run.
func cancelStep(t *testing.T, mode string) (*Report, driver.StepResult) {
	t.Helper()
	rep := runFake(t, mode, func(c *Config) { c.Cases = oneCase(t, "cancel-after-write") })
	for _, cr := range rep.Cases {
		if cr.ID != "cancel-after-write" {
			continue
		}
		for _, s := range cr.ev.Steps {
			if s.Op == driver.OpPrompt {
				return rep, s
			}
		}
	}
	t.Fatalf("no prompt step of cancel-after-write ran")
	return nil, driver.StepResult{}
}

// An agent that shows no plan is still cancelled once it shows that it
// took the write: its final tool_call_update, or (reporting none) the
// model receiving the call's result. The noplan fake (fakenoplan_test.go)
// speaks OpenAI chat and reports its calls with tool_call_update statuses.
func TestCancelWithoutPlan(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ mode, after string }{
		// Its tool_call_update comes before its next model request: the
		// runner may read either first.
		{noPlanMode, ""},
		{noPlanMode + ",mute", "the model receiving call_1's result"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			rep, st := cancelStep(t, tc.mode)
			if st.CancelSeq <= 0 || !strings.Contains(st.CancelAfter, tc.after) {
				t.Fatalf("cancel at #%d after %q, want a session/cancel after %q", st.CancelSeq, st.CancelAfter, tc.after)
			}
			cr := rep.Cases[slices.IndexFunc(rep.Cases, func(c *CaseResult) bool { return c.ID == "cancel-after-write" })]
			if m := cr.ev.Wire[st.CancelSeq]; m.Method != "session/cancel" || m.Dir != driver.Sent {
				t.Errorf("wire #%d is %s %s, want the session/cancel sent", st.CancelSeq, m.Dir, m.Method)
			}
			if cr.NotReached != "" {
				t.Errorf("NotReached %q, want none: the cancel was sent", cr.NotReached)
			}
		})
	}
}

// An agent that never shows it took the write is never cancelled: the
// case says so, in every report format, and the checks that passed on it
// are not judged there (they never saw what the case exists for).
func TestCancelNeverSentIsNotJudged(t *testing.T) {
	t.Parallel()
	rep, st := cancelStep(t, swallowMode)
	if st.CancelSeq > 0 {
		t.Fatalf("a session/cancel was sent (#%d, after %q): the agent showed nothing", st.CancelSeq, st.CancelAfter)
	}
	cr := rep.Cases[slices.IndexFunc(rep.Cases, func(c *CaseResult) bool { return c.ID == "cancel-after-write" })]
	const want = "step 3 (prompt, cancel) never sent its session/cancel"
	if !strings.Contains(cr.NotReached, want) {
		t.Fatalf("NotReached %q, want %q", cr.NotReached, want)
	}
	for _, c := range rep.Checks {
		for _, cv := range c.Cases {
			if cv.Case != "cancel-after-write" || c.Always {
				continue
			}
			if cv.Outcome == Pass {
				t.Errorf("%s passes on cancel-after-write, whose cancel was never sent", c.ID)
			}
			if cv.Outcome == NotRun && c.Level == MUST && c.Outcome == Pass {
				t.Errorf("%s: not judged on the case but PASS overall: %q", c.ID, c.Reason)
			}
		}
	}
	if rep.Verdict == VerdictPass {
		t.Errorf("verdict %s, want no pass: the case never reached its step", rep.Verdict)
	}
	// The JSON report says so at the case (the other formats:
	// conformance/report's TestNotReachedInEveryFormat).
	js, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(js, []byte(`"notReached":"`+want)) {
		t.Errorf("the JSON report has no notReached %q at the case", want)
	}
}
