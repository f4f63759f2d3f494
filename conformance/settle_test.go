package conformance

import (
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/todoharness/todoharness/driver"
)

// lateCases are the cases the late-update specs run: one prompt, two
// prompts with rejected calls, and a load after a restart.
func lateCases(t *testing.T) []*Case {
	t.Helper()
	var out []*Case
	for _, c := range builtinCases(t) {
		switch c.ID {
		case "plan-basic", "replace", "load-after-several":
			out = append(out, c)
		}
	}
	if len(out) != 3 {
		t.Fatalf("found %d of the 3 cases", len(out))
	}
	return out
}

// outcomes maps each check to its outcome.
func outcomes(rep *Report) map[string]Outcome {
	m := map[string]Outcome{}
	for _, c := range rep.Checks {
		m[c.ID] = c.Outcome
	}
	return m
}

// lateFake is the fake agent that answers each prompt before its tool
// calls run, which it starts delay after the answer.
func lateFake(t *testing.T, delay time.Duration) driver.Target {
	tg := fakeTarget(t, "updates-after-response")
	tg.Env = append(tg.Env, fakeDelayEnv+"="+delay.String())
	return tg
}

var reLateGap = regexp.MustCompile(`came after its session/prompt answer, from \S+ to (\S+) after it`)

// An agent that answers the prompt before its updates gets the same
// verdict whatever the delay: the runner waits for the turn to end on both
// wires, judges the plans it then sends, and ACP-TURN-1 lists the late
// updates with how late they came.
func TestLateUpdatesSameVerdictAtEveryDelay(t *testing.T) {
	t.Parallel()
	var first map[string]Outcome
	for _, delay := range []time.Duration{0, 50 * time.Millisecond, 200 * time.Millisecond, 500 * time.Millisecond} {
		rep := runFake(t, "", func(c *Config) {
			c.Agent, c.Cases, c.Dialect, c.Parallel = lateFake(t, delay), lateCases(t), driver.DialectTodoWrite, 3
		})
		got := outcomes(rep)
		for _, id := range []string{"TW-PLAN-1", "TW-REPLACE-1", "TW-REJECT-KEEP-1", "TW-LOAD-1", "TW-LOAD-2", "RUN-1"} {
			if got[id] != Pass {
				dumpFailures(t, rep)
				t.Fatalf("delay %s: %s is %s, want pass", delay, id, got[id])
			}
		}
		turn, _ := rep.Check("ACP-TURN-1")
		m := reLateGap.FindStringSubmatch(turn.Reason)
		if turn.Outcome != Fail || m == nil {
			t.Fatalf("delay %s: ACP-TURN-1 %s %q, want a failure listing the late updates and their gap", delay, turn.Outcome, turn.Reason)
		}
		// The gap is a duration between two receive times of the runner.
		// Its size is not asserted: the answer can be read late by any
		// amount on a loaded machine (CI once reported 499ms for 500ms;
		// beside two busy loops 272ms for 300ms), down to the two lines
		// read together. That the settle waited for the late updates is
		// shown by their being listed at all.
		if gap, err := time.ParseDuration(m[1]); err != nil || gap < 0 {
			t.Errorf("delay %s: the last late update is reported %s after the answer (%v), want a duration", delay, m[1], err)
		}
		if first == nil {
			first = got
		} else if !reflect.DeepEqual(got, first) {
			t.Errorf("delay %s: outcomes %v, at delay 0 %v", delay, got, first)
		}
	}
}

// Done means: ten consecutive runs against an agent that answers before
// its updates give the same outcome for every check.
func TestLateUpdatesTenRunsAgree(t *testing.T) {
	t.Parallel()
	rep := runFake(t, "", func(c *Config) {
		c.Agent, c.Cases, c.Dialect, c.Parallel, c.Repeat = lateFake(t, 20*time.Millisecond), lateCases(t), driver.DialectTodoWrite, 3, 10
	})
	if rep.Repeat != 10 || len(rep.Cases) != 10*3 {
		t.Fatalf("repeat %d, %d cases: want 10 runs of 3", rep.Repeat, len(rep.Cases))
	}
	for _, c := range rep.Checks {
		if c.Outcome == Flaky {
			t.Errorf("%s is flaky: %s", c.ID, c.Reason)
		}
		if len(c.Runs) != 10 {
			t.Errorf("%s: %d runs recorded, want 10", c.ID, len(c.Runs))
		}
	}
	if p, _ := rep.Check("TW-PLAN-1"); p.Outcome != Pass {
		dumpFailures(t, rep)
		t.Errorf("TW-PLAN-1 %s: %s", p.Outcome, p.Reason)
	}
	if tc, _ := rep.Check("ACP-TURN-1"); tc.Outcome != Fail {
		t.Errorf("ACP-TURN-1 %s, want fail in every run", tc.Outcome)
	}
	if !slices.Equal(rep.Failing, []string{"ACP-TURN-1"}) || len(rep.Flaky) > 0 || rep.Verdict != VerdictFail {
		dumpFailures(t, rep)
		t.Errorf("verdict %s (failing %v, flaky %v): want FAIL on ACP-TURN-1 alone (a MUST check), nothing flaky", rep.Verdict, rep.Failing, rep.Flaky)
	}
}

// Judge stays a pure function of the evidence: the evidence of a repeated
// run, judged again, says the same (the runs are in Evidence.Repeat).
func TestJudgeRepeatedEvidenceAgain(t *testing.T) {
	t.Parallel()
	evs := append(append([]*Evidence(nil), savedRun(t, "fake-ok")...), savedRun(t, "fake-no-plan")...)
	runs := make([]*Evidence, len(evs))
	for i, ev := range evs {
		e := *ev
		e.Repeat = 1
		if i >= len(savedRun(t, "fake-ok")) {
			e.Repeat = 2
		}
		runs[i] = &e
	}
	rep, err := Judge(runs, JudgeConfig{Checks: capturedChecks(t), Validator: sharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := rep.Check("TW-PLAN-1")
	if p.Outcome != Flaky || !strings.Contains(p.Reason, "pass in run 1; fail in run 2: ") {
		t.Errorf("TW-PLAN-1 %s %q, want flaky: pass in run 1; fail in run 2", p.Outcome, p.Reason)
	}
	if c, _ := rep.Check("TW-TOOL-1"); c.Outcome != Pass || len(c.Runs) != 2 {
		t.Errorf("TW-TOOL-1 %s with %d runs, want pass in both", c.Outcome, len(c.Runs))
	}
}

// stepSettles lists why each prompt step of the report's cases settled.
func stepSettles(rep *Report) []string {
	var out []string
	for _, c := range rep.Cases {
		for _, s := range c.Evidence().Steps {
			if s.Op == driver.OpPrompt {
				out = append(out, s.Settled)
			}
		}
	}
	return out
}

// An agent that shows its plan once more right after it answered, with
// nothing open (every tool call has its final status, the model took every
// turn), is not waited for through the whole settle window: the settle ends
// once the wires stay quiet for the longest gap between its late updates
// (at least settleFast), and ACP-TURN-1 still lists the late plan.
func TestSettleEndsOnceNothingIsOpen(t *testing.T) {
	t.Parallel()
	rep := runFake(t, "late-plan", func(c *Config) {
		c.Cases, c.Dialect, c.Settle = oneCase(t, "plan-basic"), driver.DialectTodoWrite, 5*time.Second
	})
	settles := stepSettles(rep)
	if len(settles) == 0 {
		t.Fatal("no prompt step")
	}
	for _, s := range settles {
		if !strings.HasPrefix(s, "after the answer the agent sent updates of the turn (plan), no tool call of the turn is open") {
			t.Errorf("the prompt settled: %q; want it to end once nothing is open, not after the window", s)
		}
	}
	if turn, _ := rep.Check("ACP-TURN-1"); turn.Outcome != Fail || !strings.Contains(turn.Reason, "plan") {
		t.Errorf("ACP-TURN-1 %s %q, want a failure listing the late plan", turn.Outcome, turn.Reason)
	}
}

// A tool call the agent announced before its answer and ends later holds
// the settle open, whatever the quiet: the update that ends it and the plan
// after it, sent 300ms after the answer (past settleFast), are on the wire,
// and ACP-TURN-1 lists them with how late they came.
func TestSettleWaitsForAnOpenToolCall(t *testing.T) {
	t.Parallel()
	const delay = 300 * time.Millisecond
	tg := fakeTarget(t, "open-call-late")
	tg.Env = append(tg.Env, fakeDelayEnv+"="+delay.String())
	rep := runFake(t, "", func(c *Config) {
		c.Agent, c.Cases, c.Dialect, c.Settle = tg, oneCase(t, "plan-basic"), driver.DialectTodoWrite, 5*time.Second
	})
	for _, s := range stepSettles(rep) {
		if !strings.Contains(s, "no tool call of the turn is open") {
			t.Errorf("the prompt settled: %q; want it to end once the open tool call ended", s)
		}
	}
	turn, _ := rep.Check("ACP-TURN-1")
	m := reLateGap.FindStringSubmatch(turn.Reason)
	if turn.Outcome != Fail || m == nil || !strings.Contains(turn.Reason, "tool_call_update") {
		t.Fatalf("ACP-TURN-1 %s %q, want a failure listing the late tool_call_update and plan", turn.Outcome, turn.Reason)
	}
	// Its size is not asserted (see TestLateUpdatesSameVerdictAtEveryDelay):
	// that the settle ended on the call's end is asserted above.
	if gap, err := time.ParseDuration(m[1]); err != nil || gap < 0 {
		t.Errorf("the last late update is reported %s after the answer (%v), want a duration", m[1], err)
	}
}
