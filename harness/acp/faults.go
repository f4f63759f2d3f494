package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"github.com/todoharness/todoharness/harness/breakage"
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
	// FaultUpdatesAfterResponse answers session/prompt (end_turn) as soon
	// as the model calls todo_write, and sends that call's updates and the
	// rest of the turn after the answer, as agents whose tools run beside
	// their answer do.
	FaultUpdatesAfterResponse Fault = "updates-after-response"
	// FaultPlansReversed holds the plans of one model step (the todo_write
	// calls of one model turn) and sends them in reverse order once the
	// step's calls have run, as codex-acp 0.16.0 does: the client ends the
	// turn on a stale list.
	FaultPlansReversed Fault = "plans-reversed"
	// FaultCoalescePlans sends only the last plan of a model step: several
	// writes of one model turn are shown as one plan.
	FaultCoalescePlans Fault = "coalesce-plans"
	// FaultInterleavedPlans holds each plan until the step's next tool call
	// is announced (or the step ends), as opencode 1.15.4 orders them. The
	// plans stay in order: nothing the contract says is broken.
	FaultInterleavedPlans Fault = "interleaved-plans"
	// FaultReplayOtherSession sends session/load's replay under another
	// session id than the one loaded.
	FaultReplayOtherSession Fault = "replay-other-session"
	// FaultRefuseLiveLoad refuses a session/load of a session open on
	// this process with -32602 "Invalid params: session … is already
	// loaded", as the original implementation did at the RFC's commit.
	// Nothing the contract says is broken: a load after a restart works.
	FaultRefuseLiveLoad Fault = "refuse-live-load"
	// FaultSharedTodoList keeps one todo list for the whole process, not
	// one a session: a session opened after another wrote a list starts
	// with that list and shows it (a plan) when its first prompt starts. A process that serves one session shows
	// nothing wrong; one that serves several in turn (a pooled run) shows
	// each the list of the session before it.
	FaultSharedTodoList Fault = "shared-todo-list"
)

// FaultEnv is the environment variable `todoharness agent` reads faults from.
const FaultEnv = "TODOHARNESS_FAULT"

// KnownFaults lists every fault name, sorted.
func KnownFaults() []Fault {
	out := []Fault{
		FaultNoPlan, FaultNullEntries, FaultNoPriority, FaultPlanOnReject,
		FaultAcceptDuplicates, FaultNoLoadReplay, FaultReplayAfterResponse,
		FaultWrongCounts, FaultEchoList, FaultHangOnPrompt, FaultCrashOnPrompt,
		FaultUpdatesAfterResponse, FaultPlansReversed, FaultCoalescePlans, FaultInterleavedPlans,
		FaultReplayOtherSession, FaultRefuseLiveLoad, FaultSharedTodoList,
	}
	out = append(out, SurfaceFaults()...)
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
	all := KnownFaults() // SurfaceFaults among them
	known := map[Fault]bool{}
	for _, f := range all {
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
			for _, f := range all {
				names = append(names, string(f))
			}
			return nil, fmt.Errorf("unknown fault %q (known: %s)", name, strings.Join(names, ", "))
		}
		fs[name] = true
	}
	return fs, nil
}

// injectFaults builds the fault layer around b for the faults fs (none:
// b is left the correct agent): the tool layer (faultyTools), the
// presentation layer (faultyPresenter: mapping and sending of updates) and
// the request layer (faultyAgent: what serves the connection).
func injectFaults(b *Bridge, fs Faults) error {
	if len(fs) == 0 {
		return nil
	}
	reg, err := faultyTools(b.tools, fs)
	if err != nil {
		return err
	}
	b.log.Warn("faults injected: this agent is broken on purpose", "faults", fs.String())
	b.tools = reg
	b.present = faultyPresenter{plain: plainPresenter{reg}, faults: fs}
	b.handler = &faultyAgent{Bridge: b, faults: fs, shared: &sharedTodos{inherited: map[string][]session.TodoItem{}}}
	return nil
}

// faultyTools returns reg itself when no tool-level fault is set, else a copy
// of reg whose todo_write tool carries the tool-level faults
// (accept-duplicates, wrong-counts, echo-list).
func faultyTools(reg *tools.Registry, fs Faults) (*tools.Registry, error) {
	if !fs.Has(FaultAcceptDuplicates) && !fs.Has(FaultWrongCounts) && !fs.Has(FaultEchoList) {
		return reg, nil
	}
	out, err := reg.With(todo.ToolName, func(t tools.Tool) (tools.Tool, error) { return faultyTodo(t, fs) })
	if err != nil {
		return nil, fmt.Errorf("faults: %w", err)
	}
	return out, nil
}

// faultyTodo relaxes the tool's own rules for accept-duplicates (the rules
// layer of harness/breakage; nothing here repeats them) and rewrites the
// result text for wrong-counts and echo-list.
func faultyTodo(t tools.Tool, fs Faults) (tools.Tool, error) {
	if fs.Has(FaultAcceptDuplicates) {
		relaxed, err := breakage.RelaxTodo(t, breakage.AcceptDuplicates)
		if err != nil {
			return t, fmt.Errorf("%s: %w", FaultAcceptDuplicates, err)
		}
		t = relaxed
	}
	exec := t.Execute
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
	return t, nil
}

// wrongSummary is todo.Summary with one pending task too many.
func wrongSummary(todos []session.TodoItem) string {
	p, i, c := todo.Counts(todos)
	return todo.FormatSummary(p+1, i, c)
}
