package conformance

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/internal/testutil"
	"github.com/todoharness/todoharness/mockmodel"
)

// The picker takes allow_once or allow_always, exactly: a kind that only
// starts with "allow" is not an allow option.
// A write with no content is an invalid-params error, and writes nothing.
// An agent that echoes its input (cat) is reported as echoing the runner's
// own request, not as having answered "Method not found".
func TestRunEchoingAgent(t *testing.T) {
	t.Parallel()
	rep, err := Run(context.Background(), Config{Agent: driver.Target{Command: []string{"cat"}}, Cases: oneCase(t, "plan-basic"),
		Dialect: driver.DialectTodoWrite, Timeout: 5 * time.Second, Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cases[0]
	if !strings.Contains(c.Error, "echo") || strings.Contains(c.Error, "Method not found") {
		t.Errorf("case error %q, want the echo named and no Method not found", c.Error)
	}
	for _, p := range c.ev.Procs {
		if len(p.ClientRequests) > 0 {
			t.Errorf("the echoed request was served as a client request: %v", p.ClientRequests)
		}
	}
}

// hangLimit bounds how long a spec waits for a run whose case timeout
// (seconds) must end it: far above any case timeout, so that only a run
// the timeout failed to end trips it, however loaded the machine.
const hangLimit = 90 * time.Second

// An agent that stops reading its stdin while the runner writes a prompt
// larger than the pipe: the case ends at its timeout, the agent killed.
func TestRunAgentStopsReading(t *testing.T) {
	t.Parallel()
	c := &Case{ID: "big-prompt", Title: "a prompt larger than a pipe", Source: "(test)",
		Checks: []string{"RUN-1"},
		Steps:  []driver.Step{{Op: driver.OpInitialize}, {Op: driver.OpNewSession}, {Op: driver.OpPrompt, Text: strings.Repeat("x", 1<<20)}},
		Script: []mockmodel.Turn{{Text: "OK"}}}
	var rep *Report
	hangCheck(t, hangLimit, "Run with a 10s case timeout", func() {
		var err error
		rep, err = Run(context.Background(), Config{Agent: fakeTarget(t, "stop-reading"), Cases: []*Case{c},
			Dialect: driver.DialectTodoWrite, Timeout: 10 * time.Second, Grace: 200 * time.Millisecond})
		if err != nil {
			t.Error(err)
		}
	})
	if rep == nil {
		return
	}
	cr := rep.Cases[0]
	if cr.Completed || !strings.Contains(cr.Error, "deadline") {
		t.Errorf("case error %q, want the deadline named", cr.Error)
	}
	if p := cr.ev.Procs[0]; !strings.Contains(p.Shutdown, "killed") {
		t.Errorf("shutdown %q, want the kill named", p.Shutdown)
	}
}

// A write blocked on a full pipe holds the write lock: a call behind it
// still gives up when its context ends.
// A hard link to a file outside the case folder is neither written nor
// read, and the refusal says why.
// A FIFO in the case folder is refused, not read (the read would block).
// A line over the cap is kept as a marked prefix; the next line is read.
// An agent flooding the wire is stopped at the case's wire cap: the case
// does not complete and says why; the log keeps no more than the cap.
func TestRunWireFlood(t *testing.T) {
	t.Parallel()
	script, err := filepath.Abs("testdata/flood/agent.sh")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), Config{Agent: driver.Target{Command: []string{"sh", script, "notify"}},
		Cases: oneCase(t, "plan-basic"), Dialect: driver.DialectTodoWrite, Timeout: time.Minute, Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cr := rep.Cases[0]
	t.Logf("case took %s, run %s, %d messages kept", cr.Duration, rep.Duration, len(cr.ev.Wire))
	if n := len(cr.ev.Wire); n > driver.MaxWireMsgs {
		t.Errorf("the wire log kept %d messages, cap %d", n, driver.MaxWireMsgs)
	}
	if cr.Completed || !strings.Contains(cr.Error, "cap") {
		t.Errorf("case error %q, want the wire cap named", cr.Error)
	}
	if c, _ := rep.Check("RUN-1"); c.Outcome != Fail || !strings.Contains(c.Reason, "cap") {
		t.Errorf("RUN-1: %s %q, want a failure naming the cap", c.Outcome, c.Reason)
	}
}

// hangCheck fails the test when f has not returned within d (the runner
// hung).
func hangCheck(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	testutil.NoHang(t, d, what, f)
}
