package conformance

import (
	"strings"
	"testing"
	"time"

	"github.com/todoharness/todoharness/driver"
)

// An agent that does not exit when its stdin closes costs the grace once
// a run, not once a process: the first process to wait it out fails
// ACP-EXIT-1 with that evidence, and every later shutdown of the run
// signals at once, says so naming that process's case, and leaves
// ACP-EXIT-1 n/a on its case, never a pass. Under --repeat a run that
// judged the check nowhere makes it no flakier: it fails.
func TestExitGraceWaitedOncePerRun(t *testing.T) {
	t.Parallel()
	cases := twoCases(t)
	rep := runFake(t, "slow-exit", func(c *Config) {
		c.Cases, c.Parallel, c.Grace, c.Repeat, c.Dialect = cases, 1, time.Second, 2, driver.DialectTodoWrite
	})
	var teacher string // the case whose process waited the whole grace
	var cut []driver.ProcResult
	for _, cr := range rep.Cases {
		ev := cr.Evidence()
		if len(ev.Procs) != 1 {
			t.Fatalf("%s run %d: %d processes, want 1", cr.ID, cr.Run, len(ev.Procs))
		}
		switch p := ev.Procs[0]; {
		case p.GraceCut == "" && strings.HasPrefix(p.Shutdown, "did not exit within 1s of stdin closing: SIGTERM"):
			if teacher != "" || cr.Run != 1 {
				t.Errorf("%s run %d waited the whole grace too (%q): the run had learned it from %s", cr.ID, cr.Run, p.Shutdown, teacher)
			}
			teacher = cr.ID
		case p.GraceCut != "":
			cut = append(cut, p)
		default:
			t.Errorf("%s run %d: shutdown %q, exit %q: want the whole grace or a cut one", cr.ID, cr.Run, p.Shutdown, p.Exit)
		}
	}
	if teacher == "" || len(cut) != 3 {
		t.Fatalf("%q waited the whole grace, %d processes were signalled at once: want one and 3", teacher, len(cut))
	}
	learned := "agent process 1 of case " + teacher + " in run 1 of 2 did not exit within 1s of its stdin closing"
	for _, p := range cut {
		if p.GraceCut != learned || !strings.Contains(p.Shutdown, learned) || !strings.Contains(p.Shutdown, "SIGTERM") {
			t.Errorf("a cut shutdown says %q (graceCut %q), want it to name SIGTERM and %q", p.Shutdown, p.GraceCut, learned)
		}
	}
	c, _ := rep.Check(ACPExit1)
	if c.Outcome != Fail || len(c.Runs) != 2 || c.Runs[0].Outcome != Fail || c.Runs[1].Outcome != NA {
		t.Errorf("ACP-EXIT-1 %s %q, runs %+v: want a failure in run 1 and n/a in run 2, failed overall", c.Outcome, c.Reason, c.Runs)
	}
	if !strings.Contains(c.Reason, teacher+": agent process 1 did not exit within 1s of stdin closing: SIGTERM") {
		t.Errorf("ACP-EXIT-1's reason %q is not %s's evidence", c.Reason, teacher)
	}
	for _, v := range c.Cases { // run 1's
		switch {
		case v.Case == teacher && v.Outcome != Fail:
			t.Errorf("%s: %s %q, want the failure", v.Case, v.Outcome, v.Reason)
		case v.Case != teacher && (v.Outcome != NA || !strings.HasPrefix(v.Reason, NotJudgedPrefix) || !strings.Contains(v.Reason, learned)):
			t.Errorf("%s: %s %q, want n/a naming what the run learned from %s", v.Case, v.Outcome, v.Reason, teacher)
		}
	}
}

// twoCases are the built-in plan-basic and replace.
func twoCases(t *testing.T) []*Case {
	t.Helper()
	var cases []*Case
	for _, c := range builtinCases(t) {
		if c.ID == "plan-basic" || c.ID == "replace" {
			cases = append(cases, c)
		}
	}
	return cases
}

// With WaitEveryGrace (an exploration's shrinks) every process waits its
// whole grace and fails ACP-EXIT-1 on its own.
func TestWaitEveryGrace(t *testing.T) {
	t.Parallel()
	rep := runFake(t, "slow-exit", func(c *Config) {
		c.Cases, c.Grace, c.Dialect, c.WaitEveryGrace = twoCases(t), time.Second, driver.DialectTodoWrite, true
	})
	c, _ := rep.Check(ACPExit1)
	if len(c.Cases) != 2 {
		t.Fatalf("ACP-EXIT-1 judged on %d cases, want 2", len(c.Cases))
	}
	for _, v := range c.Cases {
		if v.Outcome != Fail || !strings.Contains(v.Reason, "did not exit within 1s of stdin closing: SIGTERM") {
			t.Errorf("%s: %s %q, want its own failure", v.Case, v.Outcome, v.Reason)
		}
	}
}

// Under --repeat a run where ACP-EXIT-1 was n/a only because the process
// was signalled before its grace was out counts for neither outcome,
// whichever run it is: beside a failure the check fails (with the
// failure's reason), beside a pass and a failure it is flaky.
func TestWithheldRunMakesNoFlakiness(t *testing.T) {
	t.Parallel()
	run := func(n int, mode string, cut bool) *Evidence {
		ev := savedCase(t, mode, "empty-list")
		ev.Repeat = n
		if cut {
			ev.Procs[0].GraceCut = "agent process 1 of case other did not exit within 2s of its stdin closing"
			ev.Procs[0].Shutdown = "was not given the 2s grace to exit on its own (" + ev.Procs[0].GraceCut + "): SIGTERM as its stdin closed"
		}
		return ev
	}
	for _, tc := range []struct {
		name string
		evs  []*Evidence
		want Outcome
	}{
		{"withheld, failed", []*Evidence{run(1, "fake-slow-exit", true), run(2, "fake-slow-exit", false)}, Fail},
		{"failed, withheld", []*Evidence{run(1, "fake-slow-exit", false), run(2, "fake-slow-exit", true)}, Fail},
		{"passed, failed, withheld", []*Evidence{run(1, "fake-ok", false), run(2, "fake-slow-exit", false), run(3, "fake-slow-exit", true)}, Flaky},
		{"passed, withheld", []*Evidence{run(1, "fake-ok", false), run(2, "fake-slow-exit", true)}, Pass},
	} {
		rep, err := Judge(tc.evs, JudgeConfig{Validator: sharedValidator(t), Only: []string{ACPExit1}})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := rep.Check(ACPExit1)
		if c.Outcome != tc.want || len(c.Runs) != len(tc.evs) {
			t.Errorf("%s: %s %q, runs %+v: want %s", tc.name, c.Outcome, c.Reason, c.Runs, tc.want)
		}
		if tc.want == Fail && !strings.Contains(c.Reason, "did not exit within 2s of stdin closing: SIGTERM") {
			t.Errorf("%s: reason %q, not the failure's", tc.name, c.Reason)
		}
	}
}

// Runs that share Config.Exits (an exploration's batches) learn from each
// other: the second run's processes are signalled at once, naming the first
// run's case, and ACP-EXIT-1 is n/a there, not a pass.
func TestRunsShareWhatTheyLearnOfTheExit(t *testing.T) {
	t.Parallel()
	cases := twoCases(t)
	exits := driver.NewExitWatch()
	mod := func(cs []*Case) func(*Config) {
		return func(c *Config) {
			c.Cases, c.Parallel, c.Grace, c.Dialect, c.Exits = cs, 1, time.Second, driver.DialectTodoWrite, exits
		}
	}
	first := runFake(t, "slow-exit", mod(cases[:1]))
	if p := first.Cases[0].Evidence().Procs[0]; p.GraceCut != "" || !strings.HasPrefix(p.Shutdown, "did not exit within 1s of stdin closing: SIGTERM") {
		t.Fatalf("the first run's process: shutdown %q, cut %q: want the whole grace waited", p.Shutdown, p.GraceCut)
	}
	second := runFake(t, "slow-exit", mod(cases[1:]))
	learned := "agent process 1 of case " + cases[0].ID + " did not exit within 1s of its stdin closing"
	if p := second.Cases[0].Evidence().Procs[0]; p.GraceCut != learned {
		t.Errorf("the second run's process: shutdown %q, cut %q: want it cut, learned from %q", p.Shutdown, p.GraceCut, learned)
	}
	if c, _ := second.Check(ACPExit1); c.Outcome != NA {
		t.Errorf("ACP-EXIT-1 in the second run: %s %q, want n/a", c.Outcome, c.Reason)
	}
}
