package report

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/driver"
)

// A case whose run never reached the step it exists for says so at the
// case in every format: the reference's plan-basic, edited into a case
// whose prompt has cancel, and whose session/cancel was never sent.
func TestNotReachedInEveryFormat(t *testing.T) {
	t.Parallel()
	var evs []*conformance.Evidence
	for _, ev := range savedRun(t, "reference") {
		if ev.Case.ID != "plan-basic" {
			continue
		}
		e, c := *ev, *ev.Case
		c.Steps = slices.Clone(c.Steps)
		for i := range c.Steps {
			c.Steps[i].Cancel = c.Steps[i].Op == driver.OpPrompt
		}
		e.Case = &c
		e.Steps = slices.Clone(ev.Steps)
		for i := range e.Steps {
			if e.Steps[i].Op == driver.OpPrompt {
				e.Steps[i].CancelSeq, e.Steps[i].CancelAfter = -1, ""
			}
		}
		evs = append(evs, &e)
	}
	if len(evs) != 1 {
		t.Fatalf("the reference run has %d plan-basic cases", len(evs))
	}
	rep, err := conformance.Judge(evs, conformance.JudgeConfig{Checks: capturedChecks(t), Validator: sharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	const want = "step 3 (prompt, cancel) never sent its session/cancel"
	if got := rep.Cases[0].NotReached; !strings.Contains(got, want) {
		t.Fatalf("NotReached %q, want %q", got, want)
	}
	formats := map[string]func(*bytes.Buffer) error{
		"JSON":        func(b *bytes.Buffer) error { return json.NewEncoder(b).Encode(rep) },
		"text":        func(b *bytes.Buffer) error { return WriteSummary(b, rep, false) },
		"JUnit":       func(b *bytes.Buffer) error { return WriteJUnit(b, rep) },
		"annotations": func(b *bytes.Buffer) error { return WriteGitHub(b, rep) },
		"HTML":        func(b *bytes.Buffer) error { return WriteHTML(b, rep) },
	}
	for name, write := range formats {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(b.String(), want) || !strings.Contains(b.String(), "plan-basic") {
			t.Errorf("the %s report does not say at the case that its cancel was never sent:\n%s", name, driver.Truncate(b.String(), 3000))
		}
	}
	// Not judged, the checks that passed there leave the run INCOMPLETE.
	if rep.Verdict != conformance.VerdictIncomplete {
		t.Errorf("verdict %s, want %s", rep.Verdict, conformance.VerdictIncomplete)
	}
}
