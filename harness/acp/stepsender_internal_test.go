package acp

import (
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/todoharness/todoharness/harness/session"
)

// The step faults reorder the plans of one model step (the events of its
// tool calls) and nothing else; without them every update goes at once.
func TestStepSender(t *testing.T) {
	call := func(id string) Update {
		return Update{SDK: sdk.SessionUpdate{ToolCall: &sdk.SessionUpdateToolCall{ToolCallId: sdk.ToolCallId(id)}}}
	}
	plan := func(content string) Update {
		return Update{SDK: PlanUpdate([]session.TodoItem{{Content: content, Status: session.StatusPending}})}
	}
	done := func(id string) Update {
		return Update{SDK: sdk.SessionUpdate{ToolCallUpdate: &sdk.SessionToolCallUpdate{ToolCallId: sdk.ToolCallId(id)}}}
	}
	name := func(u Update) string {
		switch {
		case u.SDK.ToolCall != nil:
			return "call " + string(u.SDK.ToolCall.ToolCallId)
		case u.SDK.ToolCallUpdate != nil:
			return "done " + string(u.SDK.ToolCallUpdate.ToolCallId)
		case u.SDK.Plan != nil:
			return "plan " + u.SDK.Plan.Entries[0].Content
		}
		return "?"
	}
	// One step with two writes, then the next step's text.
	events := []struct {
		typ string
		ups []Update
	}{
		{session.TypeToolCall, []Update{call("1")}},
		{session.TypeTodoWrite, []Update{plan("A")}},
		{session.TypeToolResult, []Update{done("1")}},
		{session.TypeToolCall, []Update{call("2")}},
		{session.TypeTodoWrite, []Update{plan("B")}},
		{session.TypeToolResult, []Update{done("2")}},
		{session.TypeAssistantChunk, nil},
	}
	for _, tc := range []struct {
		fault Fault
		want  string
	}{
		{"", "call 1, plan A, done 1, call 2, plan B, done 2"},
		{FaultPlansReversed, "call 1, done 1, call 2, done 2, plan B, plan A"},
		{FaultCoalescePlans, "call 1, done 1, call 2, done 2, plan B"},
		{FaultInterleavedPlans, "call 1, done 1, call 2, plan A, done 2, plan B"},
	} {
		t.Run(string(tc.fault), func(t *testing.T) {
			var got []string
			s := newTurnSender(Faults{tc.fault: tc.fault != ""}, func(u Update) error {
				got = append(got, name(u))
				return nil
			})
			for _, e := range events {
				if err := s.event(e.typ, e.ups); err != nil {
					t.Fatal(err)
				}
			}
			if err := s.flush(); err != nil {
				t.Fatal(err)
			}
			if g := strings.Join(got, ", "); g != tc.want {
				t.Errorf("sent %s, want %s", g, tc.want)
			}
		})
	}
	if replayTarget(Faults{FaultReplayOtherSession: true}, "s1") == "s1" || replayTarget(nil, "s1") != "s1" {
		t.Error("replay-other-session: the replay's session id")
	}
}
