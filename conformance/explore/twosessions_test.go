package explore_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/todoharness/todoharness/conformance"
)

// twoSessionCase is a case that opens a second session on its process.
const twoSessionCase = `title: two sessions, each with its own list
checks: [TW-PLAN-1, ACP-ISOLATION-1]
steps:
  - op: initialize
  - op: newSession
  - op: prompt
    text: Record a plan with your todo tool, then reply DONE.
  - op: newSession
  - op: prompt
    text: Record another plan with your todo tool, then reply DONE.
script:
  - toolCalls: [{name: todo_write, arguments: {todos: [{content: the first session's item, status: pending}]}}]
  - text: DONE
  - toolCalls: [{name: todo_write, arguments: {todos: [{content: the second session's item, status: pending}]}}]
  - text: DONE
`

// A pooled case that opens a second session/new marks that session's
// first prompt too: the second conversation starts without the first's
// messages, and the pooled model tells its requests by the marker (a
// generated scenario with two sessions failed RUN-1 pooled: "carries no
// scenario's marker", then passed alone in a fresh process).
func TestAPooledCaseMarksEachSession(t *testing.T) {
	var cases []*conformance.Case
	for i := range 3 {
		c, err := conformance.LoadCase([]byte(twoSessionCase), "twosessions_test.go", fmt.Sprintf("two-sessions-%d", i+1))
		if err != nil {
			t.Fatal(err)
		}
		cases = append(cases, c)
	}
	cfg := runConfig(t, reference(""), validator(t))
	cfg.Cases, cfg.Pool, cfg.Parallel, cfg.Dialect = cases, true, 2, "todo_write"
	rep, err := conformance.Run(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	if rep.PooledCases == 0 || rep.PoolRanAlone != 0 {
		for _, c := range rep.Cases {
			if pf := c.Evidence().PooledFailure; pf != nil {
				t.Errorf("case %s failed pooled: %v %v %s", c.ID, pf.Failed, pf.Failures, pf.Aborted)
			}
		}
		t.Fatalf("%d cases stayed pooled, %d ran again alone: want every pooled case to pass there", rep.PooledCases, rep.PoolRanAlone)
	}
	for _, c := range rep.Checks {
		if c.Outcome == conformance.Fail || c.Outcome == conformance.Flaky {
			t.Errorf("%s %s: %s", c.ID, c.Outcome, c.Reason)
		}
	}
}
