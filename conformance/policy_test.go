package conformance

import (
	"strings"
	"testing"

	"github.com/todoharness/todoharness/harness/todo"
)

func TestDetectPolicy(t *testing.T) {
	for _, tc := range []struct {
		name, desc, want, quote string
	}{
		{"reference single", todo.Description(todo.Config{}), PolicySingle, "exactly one task in_progress"},
		{"reference parallel", todo.Description(todo.Config{AllowParallelInProgress: true}), PolicyParallel, "several tasks may be in_progress"},
		{"original wording", "When work runs in parallel, mark multiple tasks as in_progress.", PolicyParallel, "multiple tasks as in_progress"},
		{"in progress at once", "Tasks can be in progress at the same time.", PolicyParallel, "at the same time"},
		{"only one", "Only one task should be in progress.", PolicySingle, "Only one task should be in progress"},
		{"both", "Several tasks may be in_progress. At most one task may be in_progress.", PolicySingle, "both"},
		{"silent", "Record your task list.", PolicySingle, "says nothing about parallel work"},
		{"empty", "", PolicySingle, "no description"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, why := DetectPolicy(tc.desc)
			if got != tc.want || !strings.Contains(why, tc.quote) {
				t.Fatalf("DetectPolicy(%q) = %s, %q; want %s quoting %q", tc.desc, got, why, tc.want, tc.quote)
			}
		})
	}
}

func TestParsePolicy(t *testing.T) {
	if p, err := ParsePolicy(""); err != nil || p != PolicySingle {
		t.Fatalf(`ParsePolicy("") = %q, %v; want single`, p, err)
	}
	for _, p := range []string{PolicySingle, PolicyParallel, PolicyAuto} {
		if got, err := ParsePolicy(p); err != nil || got != p {
			t.Fatalf("ParsePolicy(%q) = %q, %v", p, got, err)
		}
	}
	if _, err := ParsePolicy("both"); err == nil || !strings.Contains(err.Error(), `unknown policy "both"`) {
		t.Fatalf("ParsePolicy(both) = %v, want an error naming it", err)
	}
}

func TestTwoActiveIsOnlyTheTwoActiveFault(t *testing.T) {
	w := func(items ...Todo) Write { return Write{Todos: items, Shaped: true} }
	a, b := Todo{Content: "a", Status: "in_progress"}, Todo{Content: "b", Status: "in_progress"}
	if !twoActive(w(a, b)) {
		t.Fatal("two in_progress: want twoActive")
	}
	if twoActive(w(a, Todo{Content: "b", Status: "pending"})) {
		t.Fatal("one in_progress: want not twoActive")
	}
	if twoActive(w(a, Todo{Content: "a", Status: "in_progress"})) {
		t.Fatal("duplicate content too: the write is rejected whatever the policy")
	}
	if twoActive(w(a, b, Todo{Content: "c", Status: "done"})) {
		t.Fatal("bad status too: the write is rejected whatever the policy")
	}
	if twoActive(Write{Todos: []Todo{a, b}}) {
		t.Fatal("unshaped arguments: want not twoActive")
	}
}

// The policy a TW-VALID-TWOACTIVE failure was judged under stays in the
// reported reason, also now that each failure is kept and baselined on its
// own.
func TestTwoActiveFailureNamesThePolicy(t *testing.T) {
	t.Parallel()
	c, _ := judgeSaved(t, "composition-allow-parallel-in-progress", nil).Check("TW-VALID-TWOACTIVE")
	if c.Outcome != Fail || !strings.Contains(c.Reason, "policy single") {
		t.Fatalf("%s %q, want a failure naming policy single", c.Outcome, c.Reason)
	}
	for _, f := range c.Cases[0].Failures {
		if !strings.Contains(f.Reason, "policy single") {
			t.Errorf("failure %q does not name the policy", f.Reason)
		}
	}
}
