package conformance

import (
	"regexp"
	"slices"
	"strings"
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

// The strings of a message are read as decoded: the escape of a quote
// before "&amp;" in a tool call's input is no item `\"&amp;` (another
// scenario's, which a pooled exploration of the reference agent saw as
// crossed); a text that is not JSON is itself.
func TestJSONStringsAreDecoded(t *testing.T) {
	t.Parallel()
	got := jsonStrings(`{"todos":[{"content":"\"&amp;","status":"pending"}]}`)
	slices.Sort(got)
	if want := []string{"\"&amp;", "content", "pending", "status", "todos"}; !slices.Equal(got, want) {
		t.Errorf("strings %q, want %q", got, want)
	}
	if slices.ContainsFunc(got, func(s string) bool { return strings.Contains(s, `\"&amp;`) }) {
		t.Errorf("%q: an escape read as text", got)
	}
	if got := jsonStrings(`{"a": not json`); !slices.Equal(got, []string{`{"a": not json`}) {
		t.Errorf("not JSON: %q", got)
	}
}
