package explore

import (
	"reflect"
	"slices"
	"testing"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/driver"
)

// The oracle expects of a cancelled prompt what the catalogue's own cancel
// case does, no more.
func TestCancelChecksAreTheCatalogueCancelCase(t *testing.T) {
	var found bool
	for _, c := range builtinCases(t) {
		if c.ID != "cancel-after-write" {
			continue
		}
		found = true
		want, got := slices.Sorted(slices.Values(c.Checks)), slices.Sorted(slices.Values(cancelChecks()))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("cancelChecks %v, the catalogue's cancel-after-write feeds %v", got, want)
		}
	}
	if !found {
		t.Fatal("no built-in case cancel-after-write")
	}
}

// Some scenarios cancel a prompt: it is their first session's last
// prompt, with one valid write; nothing but a restart and a load follows
// it; the oracle marks them with the cancel checks only; a scenario
// without a cancel is the same as before cancels were drawn.
func TestScenariosCancelSometimes(t *testing.T) {
	cat := conformance.Catalogue()
	o, _ := NewOracle(conformance.PolicySingle)
	g := Generator{Seed: 1}
	cancels, loads := 0, 0
	var want []string // the cancel checks but the Always ones (they judge every case)
	for _, ch := range cat {
		if !ch.Always && slices.Contains(cancelChecks(), ch.ID) {
			want = append(want, ch.ID)
		}
	}
	slices.Sort(want)
	for i := range 400 {
		c := g.Scenario(i)
		o.Mark(c, cat)
		at := slices.IndexFunc(c.Steps, func(st driver.Step) bool { return st.Cancel })
		if at < 0 {
			continue
		}
		cancels++
		if err := c.Validate(cat); err != nil {
			t.Fatalf("scenario %d: %v", i, err)
		}
		rest := c.Steps[at+1:]
		switch {
		case len(rest) == 0:
		case len(rest) == 3 && rest[0].Op == driver.OpRestart && rest[2].Op == driver.OpLoadSession:
			loads++
		default:
			t.Fatalf("scenario %d: steps after the cancelled prompt: %+v", i, rest)
		}
		last := c.Script[len(c.Script)-2]
		if len(last.ToolCalls) != 1 || last.ToolCalls[0].Name != driver.DialectTodoWrite || last.ToolCalls[0].Reject {
			t.Fatalf("scenario %d: the cancelled prompt's turn %+v, want one accepted todo_write", i, last)
		}
		if got := slices.Sorted(slices.Values(c.Checks)); !reflect.DeepEqual(got, want) {
			t.Fatalf("scenario %d feeds %v, want %v", i, got, want)
		}
	}
	if cancels < 25 || loads == 0 || loads == cancels {
		t.Errorf("%d of 400 scenarios cancel, %d of them load after", cancels, loads)
	}
}
