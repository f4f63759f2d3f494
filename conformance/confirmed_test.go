package conformance

import (
	"sync"
	"testing"

	"github.com/todoharness/todoharness/mockmodel"
)

// A failure's shape (failureShape) is the kind of failure its reason
// says: the same for two cases whose check fails for one cause, whatever
// they wrote, which call, prompt or request it was and what the agent
// quoted; different for two causes of one check's failure.
func TestFailureShape(t *testing.T) {
	t.Parallel()
	w := mockmodel.ToolCall{Name: "todo_write"}
	plain := &Case{ID: "plain", Script: []mockmodel.Turn{{ToolCalls: []mockmodel.ToolCall{w, w}}, {ToolCalls: []mockmodel.ToolCall{w, w}}, {Text: "done"}}}
	custom := &Case{ID: "custom", Script: []mockmodel.Turn{
		{ToolCalls: []mockmodel.ToolCall{{ID: "tc-first", Name: "todo_write"}, {ID: "tc-first-b", Name: "todo_write"}}}}}
	same := []struct {
		a, b   string
		ca, cb *Case
	}{
		{`no plan update shows call_1 (["read the parser code" in_progress, "write the failing test" pending]) (no plan update of its prompt shows it)`,
			`no plan update shows call_3 (["a" completed, "b" completed, "c" in_progress]) (no plan update of its prompt shows it)`, plain, plain},
		{`no plan update shows call_1 (["read the parser code" in_progress]) (no plan update of its prompt shows it)`,
			`no plan update shows tc-first-b (["x" in_progress]) (no plan update of its prompt shows it)`, plain, custom},
		{`model request 2: message 3 (tool, the result of call_1) carries the list item "read the parser code": "Successfully updated…"; the tool result reports only the counts, the list travels in the call alone`,
			`model request 5: message 9 (tool, the result of call_3) carries the list item "修复": "Done"; the tool result reports only the counts, the list travels in the call alone; the case stopped early: step 7 (loadSession) was answered with JSON-RPC error -32603`, plain, plain},
		{`after call_2 (["step 001" completed, … 115 more] (120 items)) no plan shows exactly the new list (no plan update of its prompt shows it)`,
			`after call_4 (["read the parser code" completed, "write the failing test" in_progress]) no plan shows exactly the new list (no plan update of its prompt shows it)`, plain, plain},
		{`prompt 1: 2 update(s) of the turn (plan) came after its session/prompt answer, from 12ms to 1.5s after it`,
			`prompt 3: 1 update(s) of the turn (plan) came after its session/prompt answer, from 3s to 3s after it`, plain, plain},
	}
	for _, s := range same {
		if a, b := failureShape(s.ca, s.a), failureShape(s.cb, s.b); a != b {
			t.Errorf("one kind of failure, two shapes:\n  %s\n  %s", a, b)
		}
	}
	differ := [][2]string{
		// A lost list and a lost empty list.
		{`no plan update shows call_1 (["a" pending]) (no plan update of its prompt shows it)`, `no plan update shows call_2 ([]) (no plan update of its prompt shows it)`},
		// The list in the tool result, and a list the model never saw.
		{`model request 2: message 3 (tool, the result of call_1) carries the list item "a": "b"; the tool result reports only the counts, the list travels in the call alone`,
			`model request 2 never carries the result of call_1`},
		// No plan at all, and one showing another list.
		{`at the end of prompt 1 the client holds no plan; the last accepted list is call_1's ["a" pending]`,
			`at the end of prompt 1 the client holds ["b" pending]; the last accepted list is call_1's ["a" pending]`},
		// What a quote says never makes two failures one: the words
		// around it do.
		{`x "a" y`, `x "a" z`},
	}
	for _, d := range differ {
		if a, b := failureShape(plain, d[0]), failureShape(plain, d[1]); a == b {
			t.Errorf("two kinds of failure, one shape %q:\n  %s\n  %s", a, d[0], d[1])
		}
	}
	// A custom call ID is the case's own: made alike, never a part of a
	// longer one.
	if got := failureShape(custom, `tc-first and tc-first-b`); got != `call and call` {
		t.Errorf("shape %q, want both call IDs made alike", got)
	}
}

// A pooled case's failures are known only once a case that ran alone
// has ended with each of them: not before it is noted (the cases run at
// once, and a confirmation still under way is none), not when one of its
// failures is of a kind no case confirmed, and not for another check
// failing with the same words.
func TestConfirmationsKnownOnlyOnceNoted(t *testing.T) {
	t.Parallel()
	var cs confirmations
	c := &Case{ID: "pooled"}
	failed := map[string][]string{TWPlan1: {`no plan update shows call_1 (["a" pending]) (no plan update of its prompt shows it)`}}
	if by := cs.known(c, failed); by != nil {
		t.Fatalf("nothing noted yet, known %v", by)
	}
	cs.add(&Case{ID: "alone"}, map[string][]string{TWPlan1: {`no plan update shows call_2 (["b" completed]) (no plan update of its prompt shows it)`}})
	if by := cs.known(c, failed); by[TWPlan1] != "alone" {
		t.Errorf("known %v, want %s confirmed by case alone", by, TWPlan1)
	}
	more := map[string][]string{TWPlan1: failed[TWPlan1], TWFinal1: {`at the end of prompt 1 the client holds no plan; the last accepted list is call_1's ["a" pending]`}}
	if by := cs.known(c, more); by != nil {
		t.Errorf("%s confirmed by no case, yet known %v", TWFinal1, by)
	}
	other := map[string][]string{TWReplace1: failed[TWPlan1]}
	if by := cs.known(c, other); by != nil {
		t.Errorf("%s confirmed by no case (%s was, with its words), yet known %v", TWReplace1, TWPlan1, by)
	}
}

// What a case confirmed alone is told only in a run that pools: in one
// that does not, no pooled failure is to be decided, and the case is
// judged once, by the judge (it was judged whole as it ended too: 3.4% of
// an unpooled exploration's CPU).
func TestAnUnpooledRunConfirmsNothing(t *testing.T) {
	for _, pool := range []bool{false, true} {
		var mu sync.Mutex
		var told []string
		rep := runFake(t, "no-plan", func(c *Config) {
			c.Cases, c.Pool = oneCase(t, "empty-list"), pool
			c.Confirmed = func(*Case, map[string]string) string { return "" }
			c.ConfirmedAlone = func(c *Case, failed map[string]string) {
				mu.Lock()
				defer mu.Unlock()
				for id := range failed {
					told = append(told, c.ID+" "+id)
				}
			}
		})
		if len(rep.FailedIDs()) == 0 {
			t.Fatal("the no-plan agent failed nothing")
		}
		if pool != (len(told) > 0) {
			t.Errorf("pool %v: ConfirmedAlone told %q", pool, told)
		}
	}
}
