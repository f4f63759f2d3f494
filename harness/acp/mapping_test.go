package acp_test

import (
	"encoding/json"
	"testing"

	"github.com/todoharness/todoharness/harness/acp"
	"github.com/todoharness/todoharness/harness/builtin"
	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
)

func ev(t *testing.T, typ string, data any) session.Event {
	t.Helper()
	raw, err := json.Marshal(data)
	if err != nil {
		t.Fatal(err)
	}
	return session.Event{Type: typ, Data: raw}
}

func mapAll(t *testing.T, m *acp.Mapper, events ...session.Event) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, e := range events {
		ups, err := m.Map(e)
		if err != nil {
			t.Fatalf("map %s: %v", e.Type, err)
		}
		for _, u := range ups {
			b, err := json.Marshal(u)
			if err != nil {
				t.Fatal(err)
			}
			var v map[string]any
			if err := json.Unmarshal(b, &v); err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
	}
	return out
}

func TestMapperUserMessageOnlyOnReplay(t *testing.T) {
	msg := ev(t, session.TypeUserMessage, session.UserMessage{Content: []llm.Part{{Type: llm.PartText, Text: "hello"}}})
	if got := mapAll(t, acp.NewMapper(nil, false), msg); len(got) != 0 {
		t.Errorf("live mapping echoed the user message: %v", got)
	}
	got := mapAll(t, acp.NewMapper(nil, true), msg)
	jsonEq(t, "replayed user message", got, `[{"sessionUpdate":"user_message_chunk","content":{"type":"text","text":"hello"}}]`)
}

func TestMapperAssistantMessageShownOnlyWithoutDeltas(t *testing.T) {
	m := acp.NewMapper(nil, true)
	msg := session.AssistantMessage{Turn: 1, Step: 1, Content: []llm.Part{
		{Type: llm.PartReasoning, Text: "hmm"}, {Type: llm.PartText, Text: "hi"}, {Type: llm.PartToolCall, ID: "x", Name: "y"},
	}}
	got := mapAll(t, m, ev(t, session.TypeAssistantMessage, msg))
	jsonEq(t, "no deltas", got, `[{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"hmm"}},{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}]`)

	delta := session.AssistantChunk{Turn: 1, Step: 2, Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Index: llm.IntPtr(0), Text: "hi"}}
	msg.Step = 2
	got = mapAll(t, m, ev(t, session.TypeAssistantChunk, delta), ev(t, session.TypeAssistantMessage, msg))
	jsonEq(t, "with deltas", got, `[{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}]`)
}

func TestMapperIgnoresOtherChunksAndUnknownEvents(t *testing.T) {
	m := acp.NewMapper(nil, true)
	got := mapAll(t, m,
		ev(t, session.TypeAssistantChunk, session.AssistantChunk{Turn: 1, Step: 1, Chunk: llm.Chunk{Type: llm.ChunkBlockStart, Index: llm.IntPtr(0), BlockType: "text"}}),
		ev(t, session.TypeAssistantChunk, session.AssistantChunk{Turn: 1, Step: 1, Chunk: llm.Chunk{Type: llm.ChunkToolCallDelta, Index: llm.IntPtr(0), ArgumentsDelta: llm.StrPtr("{")}}),
		ev(t, session.TypeAssistantChunk, session.AssistantChunk{Turn: 1, Step: 1, Chunk: llm.Chunk{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: "stop"}}}),
		ev(t, session.TypeTurnStart, session.TurnStart{Turn: 1}),
		ev(t, session.TypeContextMessage, session.UserMessage{Content: []llm.Part{{Type: llm.PartText, Text: "ctx"}}}),
		ev(t, "future/thing", map[string]any{"x": 1}),
	)
	if len(got) != 0 {
		t.Errorf("unexpected updates: %v", got)
	}
}

func TestMapperToolCallPresentedByRegistry(t *testing.T) {
	reg, err := builtin.Compose("")
	if err != nil {
		t.Fatal(err)
	}
	m := acp.NewMapper(reg, false)
	got := mapAll(t, m,
		ev(t, session.TypeToolCall, session.ToolCall{CallID: "c", Name: "todo_write", Arguments: `{"todos":[{"content":"x","status":"pending"}]}`}),
		ev(t, session.TypeToolCall, session.ToolCall{CallID: "d", Name: "bash", Arguments: `{"cmd":"ls"}`}),
	)
	jsonEq(t, "tool calls", got, `[
		{"sessionUpdate":"tool_call","toolCallId":"c","title":"Update todo list","kind":"other","status":"in_progress","rawInput":[{"content":"x","status":"pending"}]},
		{"sessionUpdate":"tool_call","toolCallId":"d","title":"bash","kind":"other","status":"in_progress","rawInput":{"cmd":"ls"}}]`)
}

func TestPlanUpdateNeverNull(t *testing.T) {
	b, err := json.Marshal(acp.PlanUpdate(nil))
	if err != nil {
		t.Fatal(err)
	}
	jsonEq(t, "empty plan", json.RawMessage(b), `{"sessionUpdate":"plan","entries":[]}`)
}
