package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/todo"
	"github.com/todoharness/todoharness/harness/tools"
	"github.com/todoharness/todoharness/internal/breakage"
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
		FaultReplayOtherSession,
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
	out, err := reg.With(todo.ToolName, func(t tools.Tool) (tools.Tool, error) { return faultyTodo(t, fs) })
	if err != nil {
		return nil, fmt.Errorf("faults: %w", err)
	}
	return out, nil
}

// faultyTodo relaxes the tool's own rules for accept-duplicates (the rules
// layer of internal/breakage; nothing here repeats them) and rewrites the
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

// replayTarget is the session id session/load's replay of id is sent to:
// id itself, another one under FaultReplayOtherSession.
func replayTarget(fs Faults, id string) string {
	if fs.Has(FaultReplayOtherSession) {
		return id + "-other"
	}
	return id
}

// stepSender sends the updates of one prompt turn, holding the plans of a
// model step as the step faults (plans-reversed, coalesce-plans,
// interleaved-plans) need; without them it sends each update at once. A
// step's updates are those of its tool/call, todo/write and tool/result
// events: any other event (the next step's text, the turn's end) ends it.
// Not safe for concurrent use (the turn's subscriber holds its lock).
type stepSender struct {
	faults Faults
	send   func(Update) error
	held   []Update
}

// newStepSender returns a sender for one turn; send sends one update.
func newStepSender(fs Faults, send func(Update) error) *stepSender {
	return &stepSender{faults: fs, send: send}
}

// active reports whether a step fault is set.
func (s *stepSender) active() bool {
	return s.faults.Has(FaultPlansReversed) || s.faults.Has(FaultCoalescePlans) || s.faults.Has(FaultInterleavedPlans)
}

// event sends (or holds) the updates ups of one event of type typ.
func (s *stepSender) event(typ string, ups []Update) error {
	if !s.active() {
		return s.sendAll(ups)
	}
	switch typ {
	case session.TypeToolCall, session.TypeTodoWrite, session.TypeToolResult:
	default:
		if err := s.flush(); err != nil {
			return err
		}
	}
	for _, u := range ups {
		switch {
		case u.SDK.Plan != nil || (u.Raw != nil && isRawPlan(u.Raw)):
			s.held = append(s.held, u)
		case u.SDK.ToolCall != nil && s.faults.Has(FaultInterleavedPlans):
			if err := s.send(u); err != nil {
				return err
			}
			if err := s.flush(); err != nil {
				return err
			}
		default:
			if err := s.send(u); err != nil {
				return err
			}
		}
	}
	return nil
}

// flush sends the held plans: reversed, the last alone, or in order.
func (s *stepSender) flush() error {
	held := s.held
	s.held = nil
	switch {
	case len(held) == 0:
		return nil
	case s.faults.Has(FaultPlansReversed):
		slices.Reverse(held)
	case s.faults.Has(FaultCoalescePlans):
		held = held[len(held)-1:]
	}
	return s.sendAll(held)
}

// sendAll sends every update, returning the first error.
func (s *stepSender) sendAll(ups []Update) error {
	var first error
	for _, u := range ups {
		if err := s.send(u); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// isRawPlan reports whether a raw update is a plan (FaultNoPriority's).
func isRawPlan(raw json.RawMessage) bool {
	var u struct {
		Kind string `json:"sessionUpdate"`
	}
	return json.Unmarshal(raw, &u) == nil && u.Kind == "plan"
}
