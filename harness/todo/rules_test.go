package todo_test

import (
	"strings"
	"testing"

	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/todo"
)

// The zero Rules is the contract; the parallel policy lifts its one rule
// (the relaxations of the broken agents are harness/breakage's).
func TestRulesPolicy(t *testing.T) {
	twoActive := []session.TodoItem{{Content: "a", Status: session.StatusInProgress}, {Content: "b", Status: session.StatusInProgress}}
	if _, err := (todo.Rules{}).Validate(twoActive); err == nil || err.Error() != "invalid todos: at most one task may be in_progress, got 2" {
		t.Errorf("contract: %v", err)
	}
	parallel := todo.Rules{Config: todo.Config{AllowParallelInProgress: true}}
	if _, err := parallel.Validate(twoActive); err != nil {
		t.Errorf("parallel: %v", err)
	}
	dup := []session.TodoItem{{Content: "a", Status: session.StatusPending}, {Content: " a ", Status: session.StatusPending}}
	if _, err := parallel.Validate(dup); err == nil || !strings.Contains(err.Error(), `duplicate content "a"`) {
		t.Errorf("parallel keeps the other rules: %v", err)
	}
	got, err := (todo.Rules{}).Validate(nil)
	if err != nil || got == nil {
		t.Errorf("an empty list is written as [], not null: %#v %v", got, err)
	}
}

// The tool exposes the rules it applies, so a wrapper can rebuild it with
// another validator instead of guessing the policy.
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
