package todo_test

import (
	"strings"
	"testing"

	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/todo"
)

func items(pairs ...string) []session.TodoItem {
	var out []session.TodoItem
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, session.TodoItem{Content: pairs[i], Status: pairs[i+1]})
	}
	return out
}

// Each relaxation lifts exactly one rule; the zero Rules is the contract.
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
	rules := map[string]todo.Rules{
		"contract":   {},
		"parallel":   {Config: todo.Config{AllowParallelInProgress: true}},
		"duplicates": {AllowDuplicates: true},
		"empty":      {AllowEmptyContent: true},
		"blank":      {AllowBlankContent: true},
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
	got, err := todo.Rules{AllowDuplicates: true}.Validate(lists["duplicate"])
	if err != nil || len(got) != 2 || got[1].Content != "a" {
		t.Errorf("duplicates: the whole trimmed list is kept: %v %v", got, err)
	}
	if _, err := (todo.Rules{}).Validate(lists["duplicate"]); err == nil || !strings.Contains(err.Error(), `duplicate content "a"`) {
		t.Errorf("contract: %v", err)
	}
}

// The tool exposes the rules it applies, so a wrapper can rebuild it with
// one rule changed instead of guessing the policy.
func TestToolExposesItsRules(t *testing.T) {
	cfg := todo.Config{AllowParallelInProgress: true}
	tool := todo.NewTool(cfg)
	r, ok := tool.Config.(todo.Rules)
	if !ok || r != (todo.Rules{Config: cfg}) {
		t.Fatalf("Config %#v, want the tool's todo.Rules", tool.Config)
	}
	if tool.Description != todo.Description(cfg) {
		t.Error("the description follows the policy")
	}
}
