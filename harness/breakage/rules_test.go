package breakage_test

import (
	"strings"
	"testing"

	"github.com/todoharness/todoharness/harness/breakage"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/todo"
	"github.com/todoharness/todoharness/harness/todolist"
)

func items(pairs ...string) []session.TodoItem {
	var out []session.TodoItem
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, session.TodoItem{Content: pairs[i], Status: pairs[i+1]})
	}
	return out
}

// Each relaxation lifts exactly one rule; no relaxation is the contract.
func TestRulesRelaxOneRuleEach(t *testing.T) {
	const (
		p = session.StatusPending
		a = session.StatusInProgress
	)
	lists := map[string][]session.TodoItem{
		"ok":         items(" read ", a, "fix", p),
		"empty":      items("", p),
		"blank":      items("   ", p),
		"duplicate":  items("a", a, " a ", a),
		"two-active": items("a", a, "b", a),
	}
	rules := map[string]breakage.Rules{
		"contract":   {},
		"parallel":   {Policy: todolist.Parallel},
		"duplicates": {AcceptDuplicates: true},
		"empty":      {AcceptEmpty: true},
		"blank":      {AcceptBlank: true},
	}
	accepts := map[string][]string{ // rules -> lists accepted
		"contract":   {"ok"},
		"parallel":   {"ok", "two-active"},
		"duplicates": {"ok", "duplicate"},
		"empty":      {"ok", "empty", "blank"},
		"blank":      {"ok", "blank"},
	}
	for rn, r := range rules {
		for ln, l := range lists {
			_, err := r.Validate(l)
			want := false
			for _, x := range accepts[rn] {
				want = want || x == ln
			}
			if (err == nil) != want {
				t.Errorf("rules %s, list %s: error %v, want accepted=%v", rn, ln, err, want)
			}
		}
	}
	got, err := breakage.Rules{AcceptDuplicates: true}.Validate(lists["duplicate"])
	if err != nil || len(got) != 2 || got[1].Content != "a" {
		t.Errorf("duplicates: the whole trimmed list is kept: %v %v", got, err)
	}
	if _, err := (breakage.Rules{}).Validate(lists["duplicate"]); err == nil || !strings.Contains(err.Error(), `duplicate content "a"`) {
		t.Errorf("contract: %v", err)
	}
	if _, err := (breakage.Rules{AcceptBlank: true}).Validate(items(" ", p, "  ", p)); err == nil || err.Error() != `invalid todos: duplicate content ""` {
		t.Errorf("two blank items: %v", err)
	}
}

// A relaxed tool decides its calls by the relaxed rules and keeps the rest
// of the tool.
func TestRelaxTodo(t *testing.T) {
	tool := todo.NewTool(todo.Config{})
	relaxed, err := breakage.RelaxTodo(tool, breakage.StringList)
	if err != nil {
		t.Fatal(err)
	}
	if relaxed.Name != tool.Name || relaxed.Description != tool.Description || string(relaxed.Parameters) != string(tool.Parameters) {
		t.Error("the relaxed tool is offered as the tool is")
	}
	if _, err := breakage.RelaxTodo(tool, "no-plan"); err == nil {
		t.Error("no-plan relaxes no rule")
	}
}
