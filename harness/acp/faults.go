package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/todo"
	"github.com/todoharness/todoharness/harness/tools"
)

// Fault is a deliberately broken behaviour of the bridge, for testing that
// the conformance suite notices it. Faults exist for tests only: the default
// (empty) set is the correct agent. `todoharness agent` reads them from
// $TODOHARNESS_FAULT (a comma-separated list of names).
type Fault string

// The faults. Each breaks exactly one promise of the spec.
const (
	// FaultNoPlan never sends a plan update.
	FaultNoPlan Fault = "no-plan"
	// FaultNullEntries sends plan updates whose entries are null.
	FaultNullEntries Fault = "null-entries"
	// FaultNoPriority omits the priority field of every plan entry.
	FaultNoPriority Fault = "no-priority"
	// FaultPlanOnReject also sends a plan for a rejected todo_write call,
	// carrying the list the model attempted to write.
	FaultPlanOnReject Fault = "plan-on-reject"
	// FaultAcceptDuplicates makes the todo tool accept (and write) a list
	// with duplicate content.
	FaultAcceptDuplicates Fault = "accept-duplicates"
	// FaultNoLoadReplay answers session/load without replaying anything.
	FaultNoLoadReplay Fault = "no-load-replay"
	// FaultReplayAfterResponse answers session/load first and replays after.
	FaultReplayAfterResponse Fault = "replay-after-response"
	// FaultWrongCounts makes the todo tool's result text count one pending
	// task too many.
	FaultWrongCounts Fault = "wrong-counts"
	// FaultEchoList appends the whole list as JSON to the todo tool's result
	// text, so the list lands in the model history.
	FaultEchoList Fault = "echo-list"
	// FaultHangOnPrompt never answers session/prompt and ignores
	// session/cancel (it returns only when the connection closes).
	FaultHangOnPrompt Fault = "hang-on-prompt"
	// FaultCrashOnPrompt exits the process with status 3 on session/prompt
	// (Config.Exit).
	FaultCrashOnPrompt Fault = "crash-on-prompt"
)

// FaultEnv is the environment variable `todoharness agent` reads faults from.
const FaultEnv = "TODOHARNESS_FAULT"

// KnownFaults lists every fault name, sorted.
func KnownFaults() []Fault {
	out := []Fault{
		FaultNoPlan, FaultNullEntries, FaultNoPriority, FaultPlanOnReject,
		FaultAcceptDuplicates, FaultNoLoadReplay, FaultReplayAfterResponse,
		FaultWrongCounts, FaultEchoList, FaultHangOnPrompt, FaultCrashOnPrompt,
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// Faults is a set of faults. The zero value is the correct agent.
type Faults map[Fault]bool

// Has reports whether f is in the set.
func (fs Faults) Has(f Fault) bool { return fs[f] }

// String lists the faults, sorted and comma-separated.
func (fs Faults) String() string {
	names := make([]string, 0, len(fs))
	for f, on := range fs {
		if on {
			names = append(names, string(f))
		}
	}
	sort.Strings(names)
	return strings.Join(names, ",")
}

// ParseFaults parses a comma-separated list of fault names (spaces and empty
// items are ignored). An unknown name is an error that lists the known ones.
func ParseFaults(s string) (Faults, error) {
	known := map[Fault]bool{}
	for _, f := range KnownFaults() {
		known[f] = true
	}
	fs := Faults{}
	for _, item := range strings.Split(s, ",") {
		name := Fault(strings.TrimSpace(item))
		if name == "" {
			continue
		}
		if !known[name] {
			names := make([]string, 0, len(known))
			for _, f := range KnownFaults() {
				names = append(names, string(f))
			}
			return nil, fmt.Errorf("unknown fault %q (known: %s)", name, strings.Join(names, ", "))
		}
		fs[name] = true
	}
	return fs, nil
}

// faultyTools returns reg itself when no tool-level fault is set, else a copy
// of reg whose todo_write tool carries the tool-level faults
// (accept-duplicates, wrong-counts, echo-list).
func faultyTools(reg *tools.Registry, fs Faults) (*tools.Registry, error) {
	if !fs.Has(FaultAcceptDuplicates) && !fs.Has(FaultWrongCounts) && !fs.Has(FaultEchoList) {
		return reg, nil
	}
	out := tools.NewRegistry()
	for _, name := range reg.Names() {
		t, ok := reg.Get(name)
		if !ok {
			continue
		}
		if name == todo.ToolName {
			t = faultyTodo(t, fs)
		}
		if _, err := out.Register(t); err != nil {
			return nil, fmt.Errorf("faults: %w", err)
		}
	}
	return out, nil
}

func faultyTodo(t tools.Tool, fs Faults) tools.Tool {
	inner := t.Execute
	// The policy is not visible from outside the tool, but its description
	// says which one it is.
	cfg := todo.Config{AllowParallelInProgress: t.Description == todo.Description(todo.Config{AllowParallelInProgress: true})}
	exec := inner
	if fs.Has(FaultAcceptDuplicates) {
		exec = func(ctx context.Context, ex tools.Exec, raw json.RawMessage) (tools.Result, error) {
			return acceptDuplicates(cfg, ex, raw)
		}
	}
	t.Execute = func(ctx context.Context, ex tools.Exec, raw json.RawMessage) (tools.Result, error) {
		res, err := exec(ctx, ex, raw)
		if err != nil || res.IsError {
			return res, err
		}
		var a struct {
			Todos []session.TodoItem `json:"todos"`
		}
		if json.Unmarshal(raw, &a) != nil {
			return res, nil
		}
		if fs.Has(FaultWrongCounts) {
			res = tools.TextResult(wrongSummary(a.Todos))
		}
		if fs.Has(FaultEchoList) {
			list, err := json.Marshal(a.Todos)
			if err == nil {
				res = tools.TextResult(res.Text() + "\n" + string(list))
			}
		}
		return res, nil
	}
	return t
}

// acceptDuplicates is todo_write without the duplicate-content rule: every
// other rule still applies, and the whole list (duplicates included) is
// written.
func acceptDuplicates(cfg todo.Config, ex tools.Exec, raw json.RawMessage) (tools.Result, error) {
	var a struct {
		Todos []session.TodoItem `json:"todos"`
	}
	if err := json.Unmarshal(raw, &a); err != nil {
		return tools.Result{}, fmt.Errorf("invalid arguments: %w", err)
	}
	trimmed := make([]session.TodoItem, 0, len(a.Todos))
	unique := make([]session.TodoItem, 0, len(a.Todos))
	seen := map[string]bool{}
	for _, it := range a.Todos {
		it.Content = strings.TrimSpace(it.Content)
		trimmed = append(trimmed, it)
		if !seen[it.Content] {
			seen[it.Content] = true
			unique = append(unique, it)
		}
	}
	if _, err := todo.Validate(cfg, unique); err != nil {
		return tools.Result{}, err
	}
	if ex.Agent == nil || ex.Agent.Session() == nil {
		return tools.Result{}, fmt.Errorf("todo_write requires an owning agent session")
	}
	if _, err := ex.Agent.Session().Append(session.TypeTodoWrite, session.TodoWrite{Todos: trimmed}); err != nil {
		return tools.Result{}, fmt.Errorf("todo_write: %w", err)
	}
	return tools.TextResult(todo.Summary(trimmed)), nil
}

// wrongSummary is todo.Summary with one pending task too many.
func wrongSummary(todos []session.TodoItem) string {
	p, i, c := todo.Counts(todos)
	return todo.FormatSummary(p+1, i, c)
}
