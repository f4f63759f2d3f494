package breakage

import (
	"encoding/json"
	"fmt"

	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/todo"
	"github.com/todoharness/todoharness/harness/todolist"
	"github.com/todoharness/todoharness/harness/tools"
)

// The breakages that relax one value rule of the todo tool: the bridge's
// accept-duplicates fault and the mutant test agent's tool breakages.
const (
	AcceptDuplicates = "accept-duplicates"
	AcceptEmpty      = "accept-empty"
	AcceptBlank      = "accept-blank"
	StringList       = "string-list"
)

// Rules are the todo tool's rules (todolist's, under the tool's policy)
// with some of them relaxed: the rules layer of the broken agents, so that
// no broken agent carries a copy of the rules and the production rules have
// no switch to break them. Each relaxation lifts exactly one rule.
type Rules struct {
	// Policy is the tool's in_progress policy.
	Policy todolist.Policy
	// AcceptDuplicates accepts a list with duplicate (trimmed) content and
	// writes all of it; the other rules judge the first occurrences.
	AcceptDuplicates bool
	// AcceptEmpty accepts empty and whitespace-only content.
	AcceptEmpty bool
	// AcceptBlank accepts whitespace-only content (still not "").
	AcceptBlank bool
	// AcceptStringList accepts a string for todos, written as one pending
	// task (the schema must allow it too).
	AcceptStringList bool
}

// RelaxTodo returns the todo tool t deciding its calls by its own rules
// (t.Config, a todo.Rules) with the named relaxations (AcceptDuplicates,
// AcceptEmpty, AcceptBlank, StringList) lifted.
func RelaxTodo(t tools.Tool, names ...string) (tools.Tool, error) {
	rules, ok := t.Config.(todo.Rules)
	if !ok {
		return t, fmt.Errorf("the todo tool does not expose its todo.Rules (Config is %T)", t.Config)
	}
	r := Rules{Policy: rules.Policy()}
	for _, n := range names {
		switch n {
		case AcceptDuplicates:
			r.AcceptDuplicates = true
		case AcceptEmpty:
			r.AcceptEmpty = true
		case AcceptBlank:
			r.AcceptBlank = true
		case StringList:
			r.AcceptStringList = true
		default:
			return t, fmt.Errorf("breakage %q relaxes no rule of the todo tool", n)
		}
	}
	t.Execute = rules.ToolWith(r.Accept).Execute
	return t, nil
}

// Accept is r's todo.Validator: the todos of the arguments (a string, under
// AcceptStringList, as one pending task), validated by r.
func (r Rules) Accept(raw json.RawMessage) ([]session.TodoItem, error) {
	if r.AcceptStringList {
		var a struct {
			Todos json.RawMessage `json:"todos"`
		}
		var one string
		if json.Unmarshal(raw, &a) == nil && json.Unmarshal(a.Todos, &one) == nil {
			return r.Validate([]session.TodoItem{{Content: one, Status: session.StatusPending}})
		}
	}
	var a struct {
		Todos []session.TodoItem `json:"todos"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("invalid arguments: %w", err)
	}
	return r.Validate(a.Todos)
}

// Validate applies the rules with r's relaxations and returns the trimmed
// list.
func (r Rules) Validate(items []session.TodoItem) ([]session.TodoItem, error) {
	l := todolist.NewList(r.Policy, len(items))
	for _, t := range items {
		blankOK := r.AcceptEmpty || (r.AcceptBlank && t.Content != "")
		var err error
		switch {
		case todolist.Blank(t.Content) && !blankOK:
			err = l.Add(t) // refused: empty content
		case r.AcceptDuplicates && l.Has(t.Content):
			l.Append(t)
		case todolist.Blank(t.Content):
			err = l.AddUnique(t)
		default:
			err = l.Add(t)
		}
		if err != nil {
			return nil, err
		}
	}
	return l.Done()
}
