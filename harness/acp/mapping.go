package acp

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/todo"
	"github.com/todoharness/todoharness/harness/tools"
)

// Update is one session/update payload produced by the mapping: either an
// SDK value or raw JSON sent verbatim as the "update" field (text chunks,
// encoded directly for speed, and faults the SDK types cannot express, such
// as a plan entry without priority).
type Update struct {
	SDK sdk.SessionUpdate
	Raw json.RawMessage
}

// MarshalJSON encodes the update as it goes on the wire.
func (u Update) MarshalJSON() ([]byte, error) {
	if u.Raw != nil {
		return u.Raw, nil
	}
	return json.Marshal(u.SDK)
}

// Mapper turns session events into session/update payloads. The same mapping
// serves the live prompt and the session/load replay; the only difference is
// that a replay also shows the user's own messages (user_message_chunk),
// which a live client sent itself.
//
// A Mapper keeps the state of one stream of events (tool calls waiting for
// their result, whether a step streamed its text); it is not safe for
// concurrent use.
type Mapper struct {
	tools  *tools.Registry
	faults Faults
	replay bool
	calls  map[string]session.ToolCall
	// streamed records the (turn, step) pairs whose text or reasoning was
	// streamed as deltas, so their assistant/message is not shown twice.
	streamed map[[2]int]bool
}

// NewMapper returns a mapper that presents tool calls through reg (nil: a
// registry with no tools). replay selects the session/load flavour.
func NewMapper(reg *tools.Registry, faults Faults, replay bool) *Mapper {
	if reg == nil {
		reg = tools.NewRegistry()
	}
	return &Mapper{tools: reg, faults: faults, replay: replay, calls: map[string]session.ToolCall{}, streamed: map[[2]int]bool{}}
}

// Map returns the updates for one event, in order (often none). It fails
// only when the data of an event it maps is malformed; unknown event types
// map to nothing.
//
//   - assistant/chunk reasoning-delta -> agent_thought_chunk, text-delta ->
//     agent_message_chunk (other chunk kinds show nothing);
//   - assistant/message -> its text/reasoning, only when its step streamed
//     no deltas (a log written without chunks);
//   - user/message, steering/message -> user_message_chunk (replay only);
//   - tool/call -> tool_call (status in_progress; title, kind, rawInput from
//     the tool's presentCall);
//   - todo/write -> plan (entries in order, priority "medium", [] when
//     empty);
//   - tool/result -> tool_call_update (completed, or failed, with the
//     result's text as content).
func (m *Mapper) Map(e session.Event) ([]Update, error) {
	switch e.Type {
	case session.TypeAssistantChunk:
		var d session.AssistantChunk
		if err := e.Decode(&d); err != nil {
			return nil, err
		}
		switch d.Chunk.Type {
		case llm.ChunkReasoningDelta:
			m.streamed[[2]int{d.Turn, d.Step}] = true
			return []Update{textChunk(kindThought, d.Chunk.Text)}, nil
		case llm.ChunkTextDelta:
			m.streamed[[2]int{d.Turn, d.Step}] = true
			return []Update{textChunk(kindMessage, d.Chunk.Text)}, nil
		}
		return nil, nil
	case session.TypeAssistantMessage:
		var d session.AssistantMessage
		if err := e.Decode(&d); err != nil {
			return nil, err
		}
		if m.streamed[[2]int{d.Turn, d.Step}] {
			delete(m.streamed, [2]int{d.Turn, d.Step})
			return nil, nil
		}
		var out []Update
		for _, p := range d.Content {
			switch p.Type {
			case llm.PartReasoning:
				out = append(out, textChunk(kindThought, p.Text))
			case llm.PartText:
				out = append(out, textChunk(kindMessage, p.Text))
			}
		}
		return out, nil
	case session.TypeUserMessage, session.TypeSteeringMessage:
		if !m.replay {
			return nil, nil
		}
		var d session.UserMessage
		if err := e.Decode(&d); err != nil {
			return nil, err
		}
		var out []Update
		for _, p := range d.Content {
			if p.Type == llm.PartText {
				out = append(out, textChunk(kindUser, p.Text))
			}
		}
		return out, nil
	case session.TypeToolCall:
		var d session.ToolCall
		if err := e.Decode(&d); err != nil {
			return nil, err
		}
		m.calls[d.CallID] = d
		p := m.tools.PresentCall(d.Name, d.Arguments)
		kind := sdk.ToolKind(p.Kind)
		if kind == "" {
			kind = sdk.ToolKindOther
		}
		return one(sdk.StartToolCall(sdk.ToolCallId(d.CallID), p.Title,
			sdk.WithStartKind(kind),
			sdk.WithStartStatus(sdk.ToolCallStatusInProgress),
			sdk.WithStartRawInput(p.RawInput),
		)), nil
	case session.TypeTodoWrite:
		var d session.TodoWrite
		if err := e.Decode(&d); err != nil {
			return nil, err
		}
		if m.faults.Has(FaultNoPlan) {
			return nil, nil
		}
		u, err := m.plan(d.Todos)
		if err != nil {
			return nil, fmt.Errorf("event seq %d (%s): %w", e.Seq, e.Type, err)
		}
		return []Update{u}, nil
	case session.TypeToolResult:
		var d session.ToolResult
		if err := e.Decode(&d); err != nil {
			return nil, err
		}
		var out []Update
		call, known := m.calls[d.CallID]
		delete(m.calls, d.CallID)
		if d.IsError && known && call.Name == todo.ToolName && m.faults.Has(FaultPlanOnReject) && !m.faults.Has(FaultNoPlan) {
			var a session.TodoWrite
			if json.Unmarshal([]byte(call.Arguments), &a) == nil {
				if u, err := m.plan(a.Todos); err == nil {
					out = append(out, u)
				}
			}
		}
		status := sdk.ToolCallStatusCompleted
		if d.IsError {
			status = sdk.ToolCallStatusFailed
		}
		content := make([]sdk.ToolCallContent, 0, len(d.Content))
		for _, p := range d.Content {
			if p.Type == llm.PartText {
				content = append(content, sdk.ToolContent(sdk.TextBlock(p.Text)))
			}
		}
		out = append(out, Update{SDK: sdk.UpdateToolCall(sdk.ToolCallId(d.CallID),
			sdk.WithUpdateStatus(status),
			sdk.WithUpdateContent(content),
		)})
		return out, nil
	}
	return nil, nil
}

func one(u sdk.SessionUpdate) []Update { return []Update{{SDK: u}} }

// validUTF8 replaces each invalid byte with U+FFFD, as a JSON encode and
// decode round trip (the SDK's) does.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		b.WriteRune(r) // an invalid byte ranges as utf8.RuneError
	}
	return b.String()
}

// Discriminators of the text chunk updates.
const (
	kindThought = "agent_thought_chunk"
	kindMessage = "agent_message_chunk"
	kindUser    = "user_message_chunk"
)

// textChunk is a text chunk update (agent_thought_chunk,
// agent_message_chunk, user_message_chunk), encoded directly: these are most
// of a replay, and the SDK encodes every update three times over (struct,
// map, struct). The bytes are exactly the SDK's (keys sorted as its map
// round trip sorts them, strings escaped by encoding/json); a test holds
// them equal.
func textChunk(kind, text string) Update {
	q, err := json.Marshal(validUTF8(text))
	if err != nil { // a Go string always encodes
		panic(err)
	}
	b := make([]byte, 0, len(q)+len(kind)+64)
	b = append(b, `{"content":{"text":`...)
	b = append(b, q...)
	b = append(b, `,"type":"text"},"sessionUpdate":"`...)
	b = append(b, kind...)
	b = append(b, `"}`...)
	return Update{Raw: b}
}

// plan builds the plan update for a whole list. Priority is synthesised
// here, at the ACP boundary: the todo items have none. The entries are never
// null (an empty list is []), except under FaultNullEntries.
func (m *Mapper) plan(todos []session.TodoItem) (Update, error) {
	if m.faults.Has(FaultNullEntries) {
		return Update{SDK: sdk.SessionUpdate{Plan: &sdk.SessionUpdatePlan{Entries: nil}}}, nil
	}
	if m.faults.Has(FaultNoPriority) {
		type entry struct {
			Content string `json:"content"`
			Status  string `json:"status"`
		}
		entries := make([]entry, 0, len(todos))
		for _, t := range todos {
			entries = append(entries, entry{Content: t.Content, Status: t.Status})
		}
		raw, err := json.Marshal(struct {
			SessionUpdate string  `json:"sessionUpdate"`
			Entries       []entry `json:"entries"`
		}{"plan", entries})
		if err != nil {
			return Update{}, fmt.Errorf("plan: %w", err)
		}
		return Update{Raw: raw}, nil
	}
	return Update{SDK: PlanUpdate(todos)}, nil
}

// PlanUpdate is the plan session update for a todo list: one entry per item,
// in order, priority "medium", status as is; an empty (or nil) list gives
// `entries: []`, never null (sdk.UpdatePlan() with no entries encodes null).
func PlanUpdate(todos []session.TodoItem) sdk.SessionUpdate {
	entries := make([]sdk.PlanEntry, 0, len(todos))
	for _, t := range todos {
		entries = append(entries, sdk.PlanEntry{
			Content:  t.Content,
			Priority: sdk.PlanEntryPriorityMedium,
			Status:   sdk.PlanEntryStatus(t.Status),
		})
	}
	return sdk.SessionUpdate{Plan: &sdk.SessionUpdatePlan{Entries: entries}}
}
