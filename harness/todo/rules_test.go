package todo_test

import (
	"context"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/todo"
	"github.com/todoharness/todoharness/harness/tools"
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

// Every agent start registers todo_write: its schema is compiled once for
// the process, not at each registration (it was: 744 allocations, now 6).
func TestRegisteringTheToolCompilesNoSchema(t *testing.T) {
	tool := todo.NewTool(todo.Config{})
	allocs := testing.AllocsPerRun(20, func() {
		if _, err := tools.NewRegistry().Register(tool); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 20 {
		t.Errorf("registering todo_write: %.0f allocations, want at most 20", allocs)
	}
	reg := tools.NewRegistry()
	if _, err := reg.Register(todo.NewTool(todo.Config{})); err != nil {
		t.Fatal(err)
	}
	res := reg.Execute(context.Background(), tools.Exec{}, todo.ToolName, `{"todos":[{"content":"a","status":"done"}]}`)
	if !res.IsError || !strings.Contains(res.Text(), "invalid arguments") {
		t.Errorf("a status out of the schema: %s", res.Text())
	}
}
