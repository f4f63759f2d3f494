package report

import (
	"encoding/xml"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/conformance"
)

func junitOf(t *testing.T, rep *conformance.Report) string {
	t.Helper()
	var b strings.Builder
	if err := WriteJUnit(&b, rep); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// One test case per check; the failures are the checks that fail the
// run.
func TestJUnitCountsTheChecks(t *testing.T) {
	t.Parallel()
	rep := judgeSaved(t, "fake-no-plan", false, nil)
	var suites struct {
		Suites []struct {
			Tests    int `xml:"tests,attr"`
			Failures int `xml:"failures,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(junitOf(t, rep)), &suites); err != nil {
		t.Fatalf("JUnit: %v", err)
	}
	if s := suites.Suites[0]; s.Tests != len(rep.Checks) || s.Failures != len(rep.Failing) || s.Failures == 0 {
		t.Errorf("JUnit: %d tests, %d failures; want %d, %d (not 0)", s.Tests, s.Failures, len(rep.Checks), len(rep.Failing))
	}
}

// A failed SHOULD check (the fake that is slow to exit fails only
// ACP-EXIT-1) is a JUnit <skipped>; under Strict a <failure>.
func TestJUnitStrict(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		strict          bool
		junit, failures string
	}{
		{strict: false, junit: `<skipped message="SHOULD check fails (does not fail the run): `, failures: `failures="0"`},
		{strict: true, junit: "<failure message=", failures: `failures="1"`},
	} {
		junit := junitOf(t, judgeSaved(t, "fake-slow-exit", tc.strict, nil))
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
	}
}

// A flaky MUST check is a failure saying so, its runs in the body.
func TestJUnitFlaky(t *testing.T) {
	t.Parallel()
	ok, bad := savedRun(t, "fake-ok"), savedRun(t, "fake-no-plan")
	var runs []*conformance.Evidence
	for i, ev := range append(append([]*conformance.Evidence(nil), ok...), bad...) {
		e := *ev
		e.Repeat = 1
		if i >= len(ok) {
			e.Repeat = 2
		}
		runs = append(runs, &e)
	}
	rep, err := conformance.Judge(runs, conformance.JudgeConfig{Checks: capturedChecks(t), Validator: sharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	junit := junitOf(t, rep)
	if !strings.Contains(junit, `message="flaky: the outcome differs between runs`) || !strings.Contains(junit, "run 2: fail ") {
		t.Errorf("JUnit lacks the flaky failure:\n%s", junit)
	}
}

// An interrupted or incomplete run is a JUnit error (errors="1"), not a
// green suite with failures="0".
func TestJUnitIncompleteOrInterruptedIsAnError(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		verdict string
		mark    func(ev *conformance.Evidence)
	}{
		{conformance.VerdictInterrupted, func(ev *conformance.Evidence) { ev.Interrupted = "interrupted (SIGINT)" }},
		{conformance.VerdictIncomplete, func(ev *conformance.Evidence) { ev.NotRun = "not run: the probe failed" }},
	} {
		var evs []*conformance.Evidence
		for i, ev := range savedRun(t, "fake-ok") {
			e := *ev
			if i == 0 {
				tc.mark(&e)
			}
			evs = append(evs, &e)
		}
		rep, err := conformance.Judge(evs, conformance.JudgeConfig{Checks: capturedChecks(t), Validator: sharedValidator(t)})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Verdict != tc.verdict {
			t.Fatalf("verdict %s, want %s", rep.Verdict, tc.verdict)
		}
		var suites struct {
			Suites []struct {
				Tests  int `xml:"tests,attr"`
				Errors int `xml:"errors,attr"`
				Cases  []struct {
					Name  string `xml:"name,attr"`
					Error *struct {
						Message string `xml:"message,attr"`
					} `xml:"error"`
				} `xml:"testcase"`
			} `xml:"testsuite"`
		}
		junit := junitOf(t, rep)
		if err := xml.Unmarshal([]byte(junit), &suites); err != nil {
			t.Fatalf("JUnit: %v", err)
		}
		s := suites.Suites[0]
		last := s.Cases[len(s.Cases)-1]
		if s.Errors != 1 || s.Tests != len(rep.Checks)+1 || last.Error == nil || !strings.HasPrefix(last.Error.Message, tc.verdict+": ") {
			t.Errorf("%s: JUnit has %d errors, %d tests (want 1, %d), last case %q; want an error saying %s:\n%s", tc.verdict, s.Errors, s.Tests, len(rep.Checks)+1, last.Name, tc.verdict, junit)
		}
	}
}
