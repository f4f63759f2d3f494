package conformance

import (
	"regexp"
	"slices"
	"testing"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/mockmodel"
)

// What a session's own model sends (a tool call's arguments, which the
// agent shows in its tool_call) is no crossing, even when another session
// of the process wrote the same words as a todo: a pooled exploration of
// the reference agent failed ACP-ISOLATION-1 on a generated scenario whose
// lookup tool call carried "{{.Cwd}}", an item another scenario wrote. The
// same tool call with words its script does not carry still fails it.
func TestIsolationLeavesASessionsOwnModelsWords(t *testing.T) {
	t.Parallel()
	v := sharedValidator(t)
	const item = "run the full test suite" // only plan-basic writes it
	for _, own := range []bool{true, false} {
		a, b := savedCase(t, "reference", "reject-empty"), savedCase(t, "reference", "plan-basic")
		sid := regexp.MustCompile(`"sessionId":"[^"]*"`).FindString(a.Wire[slices.IndexFunc(a.Wire, func(m driver.WireMsg) bool { return m.Method == "session/update" })].Line)
		a.Wire = append(a.Wire, received(len(a.Wire), `{"jsonrpc":"2.0","method":"session/update","params":{`+sid+`,"update":{"sessionUpdate":"tool_call","toolCallId":"call_9","title":"lookup","kind":"other","status":"pending","rawInput":{"query":"`+item+`"}}}}`))
		if own {
			c := *a.Case
			c.Script = append(slices.Clone(c.Script), mockmodel.Turn{ToolCalls: []mockmodel.ToolCall{{Name: "lookup", Arguments: map[string]any{"query": item}}}})
			a.Case = &c
		}
		rep, err := Judge(asSessions(a, b), JudgeConfig{Checks: capturedChecks(t), Validator: v})
		if err != nil {
			t.Fatal(err)
		}
		c, _ := rep.Check(ACPIsolation1)
		if want := map[bool]Outcome{true: Pass, false: Fail}[own]; c.Outcome != want {
			t.Errorf("a tool call carrying %q, its own model's words %v: %s %q, want %s", item, own, c.Outcome, c.Reason, want)
		}
	}
}
