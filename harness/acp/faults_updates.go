package acp

import (
	"encoding/json"
	"fmt"
	"slices"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/todo"
)

// faultyPresenter is the presentation layer of the faults: the plain
// presenter's mapping with the plan faults (no-plan, null-entries,
// no-priority, plan-on-reject) and its sending with the step faults
// (plans-reversed, coalesce-plans, interleaved-plans).
type faultyPresenter struct {
	plain  plainPresenter
	faults Faults
}

func (p faultyPresenter) mapper(replay bool, s surface) eventMapper {
	return &faultyMapper{inner: p.plain.mapper(replay, s), faults: p.faults, surface: s, calls: map[string]session.ToolCall{}}
}

func (p faultyPresenter) turnSender(send func(Update) error) turnSender {
	return newTurnSender(p.faults, send)
}

// newTurnSender returns a stepSender when a step fault is set, else the
// plain sender.
func newTurnSender(fs Faults, send func(Update) error) turnSender {
	if fs.Has(FaultPlansReversed) || fs.Has(FaultCoalescePlans) || fs.Has(FaultInterleavedPlans) {
		return &stepSender{faults: fs, send: send}
	}
	return directSender(send)
}

// faultyMapper maps events as inner does, then breaks the plans.
type faultyMapper struct {
	inner   eventMapper
	faults  Faults
	surface surface
	// calls are the todo_write calls waiting for their result
	// (plan-on-reject).
	calls map[string]session.ToolCall
}

// Map maps e with the plan faults.
func (m *faultyMapper) Map(e session.Event) ([]Update, error) {
	ups, err := m.inner.Map(e)
	if err != nil {
		return nil, err
	}
	switch e.Type {
	case session.TypeTodoWrite:
		if m.faults.Has(FaultNoPlan) {
			return nil, nil
		}
		if alt, ok, err := m.surfacePlan(e); ok || err != nil {
			return alt, err
		}
		for i, u := range ups {
			if u.SDK.Plan == nil {
				continue
			}
			if ups[i], err = m.plan(u.SDK.Plan.Entries); err != nil {
				return nil, fmt.Errorf("event seq %d (%s): %w", e.Seq, e.Type, err)
			}
		}
	case session.TypeToolCall:
		var d session.ToolCall
		if m.faults.Has(FaultPlanOnReject) && e.Decode(&d) == nil && d.Name == todo.ToolName {
			m.calls[d.CallID] = d
		}
	case session.TypeToolResult:
		return m.planOnReject(e, ups), nil
	}
	return ups, nil
}

// planOnReject puts, under FaultPlanOnReject, a plan of the list a
// rejected todo_write call attempted before the updates ups of its result.
func (m *faultyMapper) planOnReject(e session.Event, ups []Update) []Update {
	var d session.ToolResult
	if len(m.calls) == 0 || e.Decode(&d) != nil {
		return ups
	}
	call, known := m.calls[d.CallID]
	delete(m.calls, d.CallID)
	if !d.IsError || !known || m.faults.Has(FaultNoPlan) {
		return ups
	}
	var a session.TodoWrite
	if json.Unmarshal([]byte(call.Arguments), &a) != nil {
		return ups
	}
	u, err := m.plan(PlanUpdate(a.Todos).Plan.Entries)
	if err != nil {
		return ups
	}
	return append([]Update{u}, ups...)
}

// plan is the plan update for entries under the plan faults: entries null
// (FaultNullEntries) or without priority (FaultNoPriority, raw JSON the
// SDK types cannot express).
func (m *faultyMapper) plan(entries []sdk.PlanEntry) (Update, error) {
	if m.faults.Has(FaultNullEntries) {
		return Update{SDK: sdk.SessionUpdate{Plan: &sdk.SessionUpdatePlan{Entries: nil}}}, nil
	}
	if !m.faults.Has(FaultNoPriority) {
		return Update{SDK: sdk.SessionUpdate{Plan: &sdk.SessionUpdatePlan{Entries: entries}}}, nil
	}
	type entry struct {
		Content string `json:"content"`
		Status  string `json:"status"`
	}
	out := make([]entry, 0, len(entries))
	for _, t := range entries {
		out = append(out, entry{Content: t.Content, Status: string(t.Status)})
	}
	raw, err := json.Marshal(struct {
		SessionUpdate string  `json:"sessionUpdate"`
		Entries       []entry `json:"entries"`
	}{"plan", out})
	if err != nil {
		return Update{}, fmt.Errorf("plan: %w", err)
	}
	return Update{Raw: raw}, nil
}

// stepSender sends the updates of one prompt turn, holding the plans of a
// model step as the step faults (plans-reversed, coalesce-plans,
// interleaved-plans) need. A step's updates are those of its tool/call,
// todo/write and tool/result events: any other event (the next step's
// text, the turn's end) ends it. Not safe for concurrent use (the turn's
// subscriber holds its lock).
type stepSender struct {
	faults Faults
	send   func(Update) error
	held   []Update
}

// event sends (or holds) the updates ups of one event of type typ.
func (s *stepSender) event(typ string, ups []Update) error {
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
	return sendAll(s.send, held)
}

// isRawPlan reports whether a raw update is a plan (FaultNoPriority's).
func isRawPlan(raw json.RawMessage) bool {
	var u struct {
		Kind string `json:"sessionUpdate"`
	}
	return json.Unmarshal(raw, &u) == nil && u.Kind == "plan"
}
