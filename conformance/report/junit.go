package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/internal/junit"
)

// WriteJUnit writes one JUnit test case per check. A failed MUST check is
// a failure (a failed SHOULD too under Strict); a failed SHOULD or INFO
// check that does not fail the run, an expected failure (xfail), not-run
// and n/a are skipped (with the reason); a stale baseline entry is a
// failure. A run that is INTERRUPTED or INCOMPLETE adds one more test case,
// "conform run", that is an <error> saying why (errors="1"): a CI system
// must not show green for a run that did not judge what it had to.
func WriteJUnit(w io.Writer, r *conformance.Report) error {
	s := junit.Suite{Name: "todoharness conformance: " + r.Agent, Time: strconv.FormatFloat(r.Duration.Seconds(), 'g', -1, 64)}
	skipped := 0
	for _, c := range r.Checks {
		jc := junit.Case{Name: c.ID + ": " + c.Title, Classname: "conformance." + string(c.Level),
			SystemOut: fmt.Sprintf("spec (%s): %s", c.Source, c.Spec)}
		var details []string
		for _, v := range c.Cases {
			details = append(details, fmt.Sprintf("%s: %s %s", v.Case, v.Outcome, v.Reason))
		}
		body := strings.Join(details, "\n")
		switch {
		case c.Stale:
			jc.Failure = &junit.Message{Message: "stale expected failure: a baseline entry matches no failure (" + c.Expected + ")", Body: body}
		case c.Outcome == conformance.Flaky && r.FailsRun(c):
			jc.Failure = &junit.Message{Message: "flaky: " + c.Reason, Body: flakyBody(c)}
		case r.FailsRun(c):
			jc.Failure = &junit.Message{Message: c.Reason, Body: body}
		case c.Outcome == conformance.Flaky:
			jc.Skipped = &junit.Message{Message: fmt.Sprintf("%s check is flaky (does not fail the run): %s", c.Level, c.Reason), Body: flakyBody(c)}
		case c.Outcome == conformance.Fail:
			jc.Skipped = &junit.Message{Message: fmt.Sprintf("%s check fails (does not fail the run): %s", c.Level, c.Reason), Body: body}
		case c.Outcome == conformance.XFail:
			jc.Skipped = &junit.Message{Message: "expected failure (" + c.Expected + "): " + c.Reason, Body: body}
		case c.Outcome == conformance.NotRun || c.Outcome == conformance.NA:
			jc.Skipped = &junit.Message{Message: string(c.Outcome) + ": " + c.Reason}
		}
		if jc.Failure != nil {
			s.Failures++
		}
		if jc.Skipped != nil {
			skipped++
		}
		s.Tests++
		s.Cases = append(s.Cases, jc)
	}
	// A case whose run never reached the step it exists for: the checks
	// that passed there are not judged (the run is INCOMPLETE for them).
	for _, c := range r.Cases {
		if c.NotReached != "" {
			s.Tests++
			skipped++
			s.Cases = append(s.Cases, junit.Case{Name: "case " + runLabel(c) + ": step never reached", Classname: "conformance.case",
				Skipped: &junit.Message{Message: "step never reached: " + c.NotReached}})
		}
	}
	s.Skipped = &skipped
	switch r.Verdict {
	case conformance.VerdictIncomplete, conformance.VerdictInterrupted:
		errs := 1
		s.Errors = &errs
		s.Tests++
		s.Cases = append(s.Cases, junit.Case{Name: "conform run: " + r.Verdict, Classname: "conformance.run",
			Error: &junit.Message{Message: VerdictLine(r), Body: strings.Join(r.NotJudged, "\n")}})
	}
	if err := junit.Write(w, s); err != nil {
		return fmt.Errorf("conformance: write JUnit report: %w", err)
	}
	return nil
}

// flakyBody lists why a flaky check is flaky (flakyLines): its outcome
// run by run, or the cases that failed it pooled and passed alone.
func flakyBody(c conformance.CheckResult) string {
	var lines []string
	for _, f := range flakyLines(c) {
		lines = append(lines, f.where+": "+f.reason)
	}
	return strings.Join(lines, "\n")
}
