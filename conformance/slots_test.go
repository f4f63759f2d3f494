package conformance

import (
	"sort"
	"testing"
	"time"
)

// With one slot, a case with several prompts lends its slot to the next
// case while it settles between them: the next case starts before the
// first one's last answer (before, it waited for it).
func TestSlotLentDuringTheSettleBetweenPrompts(t *testing.T) {
	var cases []*Case
	for _, c := range builtinCases(t) {
		if c.ID == "load-after-several" || c.ID == "load-between-prompts" {
			cases = append(cases, c)
		}
	}
	rep := runFake(t, "ok", func(c *Config) {
		c.Cases, c.Parallel, c.Settle, c.Dialect = cases, 1, 300*time.Millisecond, "todo_write"
	})
	evs := make([]*Evidence, 0, len(rep.Cases))
	for _, cr := range rep.Cases {
		if cr.Error != "" {
			t.Fatalf("%s: %s", cr.ID, cr.Error)
		}
		evs = append(evs, cr.Evidence())
	}
	sort.Slice(evs, func(i, j int) bool { return evs[i].Started.Before(evs[j].Started) })
	first, next := evs[0], evs[1]
	if !next.Started.Before(first.Started.Add(first.Answered)) {
		t.Errorf("%s started %s after %s, whose last step was answered at %s: the slot was held through the settles",
			next.Case.ID, next.Started.Sub(first.Started), first.Case.ID, first.Answered)
	}
}
