package conformance

import (
	"strings"
	"testing"
)

// An agent that refuses to load the session it has open (-32602 "already
// loaded", as the original implementation at the RFC's commit) is not
// failed for it: nothing requires accepting such a load. The refused load
// leaves TW-LOAD-1 and TW-LOAD-2 not judged on that case, saying why, the
// case goes on with its next prompt, and the cases that restart the agent
// before the load judge the load.
func TestRefusedLiveLoadIsNotJudged(t *testing.T) {
	t.Parallel()
	var cases []*Case
	for _, c := range builtinCases(t) {
		if c.ID == "load-between-prompts" || c.ID == "load-replay" {
			cases = append(cases, c)
		}
	}
	rep := runFake(t, "refuse-live-load", func(c *Config) { c.Cases = cases })
	if got := rep.FailedIDs(); len(got) > 0 {
		dumpFailures(t, rep)
		t.Fatalf("failed %v, want nothing", got)
	}
	// Every check the two cases feed is judged, and passes.
	for _, c := range cases {
		for _, id := range c.Checks {
			if cr, _ := rep.Check(id); cr.Outcome != Pass {
				t.Errorf("%s: %s %q, want a pass", id, cr.Outcome, cr.Reason)
			}
		}
	}
	for _, id := range []string{"TW-LOAD-1", "TW-LOAD-2"} {
		c, _ := rep.Check(id)
		if c.Outcome != Pass {
			t.Errorf("%s: %s %q, want a pass (judged on load-replay)", id, c.Outcome, c.Reason)
		}
		for _, cv := range c.Cases {
			switch cv.Case {
			case "load-between-prompts":
				if cv.Outcome != NotRun || !strings.Contains(cv.Reason, "already loaded") || !strings.Contains(cv.Reason, "nothing in ACP or the spec requires") {
					t.Errorf("%s on load-between-prompts: %s %q, want not judged, quoting the refusal", id, cv.Outcome, cv.Reason)
				}
			case "load-replay":
				if cv.Outcome != Pass {
					t.Errorf("%s on load-replay: %s %q", id, cv.Outcome, cv.Reason)
				}
			}
		}
	}
	// The case went on: its second prompt ran and is judged.
	for _, cr := range rep.Cases {
		if cr.ID != "load-between-prompts" {
			continue
		}
		if !cr.Completed || cr.ev.PromptsRun != 2 {
			t.Errorf("load-between-prompts: completed %v, %d prompt(s) run (error %q), want both prompts", cr.Completed, cr.ev.PromptsRun, cr.Error)
		}
	}
	if c, _ := rep.Check("TW-FINAL-1"); c.Outcome != Pass {
		t.Errorf("TW-FINAL-1: %s %q", c.Outcome, c.Reason)
	}
}

// Only the load of the session open on the process is taken for a
// refusal: the same refusal after a restart (the session is not open) is
// a broken load, and fails.
func TestRefusedLoadAfterRestartFails(t *testing.T) {
	t.Parallel()
	rep := runFake(t, "load-error", func(c *Config) { c.Cases = oneCase(t, "load-replay") })
	if c, _ := rep.Check("TW-LOAD-1"); c.Outcome != Fail {
		t.Errorf("TW-LOAD-1: %s %q, want a failure", c.Outcome, c.Reason)
	}
}
