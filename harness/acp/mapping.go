package acp

import (
	"encoding/json"
	"strings"
	"unicode/utf8"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/tools"
)

// Update is one session/update payload produced by the mapping: either an
// SDK value or raw JSON sent verbatim as the "update" field (text chunks,
// encoded directly for speed, and what the SDK types cannot express, such
// as the fault layer's plan entry without priority).
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
// A Mapper keeps the state of one stream of events (whether a step
// streamed its text); it is not safe for concurrent use.
type Mapper struct {
	tools  *tools.Registry
	replay bool
	// surface is the protocol surface the updates are for (v1's plan, v1's
	// plan operations, v2).
	surface surface
	// streamed records the (turn, step) pairs whose text or reasoning was
	// streamed as deltas, so their assistant/message is not shown twice.
	streamed map[[2]int]bool
}

// NewMapper returns a mapper that presents tool calls through reg (nil: a
// registry with no tools). replay selects the session/load flavour.
func NewMapper(reg *tools.Registry, replay bool) *Mapper {
	return newMapper(reg, replay, surfaceV1)
}

// NewMapperV2 returns a mapper of ACP version 2's updates (see Map).
func NewMapperV2(reg *tools.Registry, replay bool) *Mapper {
	return newMapper(reg, replay, surfaceV2)
}

func newMapper(reg *tools.Registry, replay bool, s surface) *Mapper {
	if reg == nil {
		reg = tools.NewRegistry()
	}
	return &Mapper{tools: reg, replay: replay, surface: s, streamed: map[[2]int]bool{}}
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
//
// On version 2 (NewMapperV2) the same events map to v2's updates: every
// text chunk carries a messageId (see messageID), user and steering
// messages show live too, as user_message (the acknowledgment of the
// prompt), a tool/call is the tool_call_update that creates the call
// (v2 has no tool_call), and a todo/write is plan_update {type "items",
// planId PlanID, entries}. A v1 client that advertised the plan capability
// gets that plan_update too, in place of plan.
func (m *Mapper) Map(e session.Event) ([]Update, error) {
	switch e.Type {
	case session.TypeAssistantChunk:
		return m.chunk(e)
	case session.TypeAssistantMessage:
		return m.message(e)
	case session.TypeUserMessage, session.TypeSteeringMessage:
		if m.surface == surfaceV2 {
			return userMessageV2(e)
		}
		if !m.replay {
			return nil, nil
		}
		return userMessage(e)
	case session.TypeToolCall:
		if m.surface == surfaceV2 {
			return m.toolCallV2(e)
		}
		return m.toolCall(e)
	case session.TypeTodoWrite:
		var d session.TodoWrite
		if err := e.Decode(&d); err != nil {
			return nil, err
		}
		if m.surface != surfaceV1 {
			return []Update{PlanItemsUpdate(PlanID, d.Todos)}, nil
		}
		return []Update{{SDK: PlanUpdate(d.Todos)}}, nil
	case session.TypeToolResult:
		return toolResult(e)
	}
	return nil, nil
}

// chunk maps an assistant/chunk: its reasoning or text delta.
func (m *Mapper) chunk(e session.Event) ([]Update, error) {
	if !m.replay {
		// A live turn's chunks are the agent's own Append of a
		// session.AssistantChunk (agent.runStep): most are tool-call deltas
		// and block ends, which show nothing, so those are not decoded.
		if typ, ok := liveChunkType(e.Data); ok && string(typ) != llm.ChunkReasoningDelta && string(typ) != llm.ChunkTextDelta {
			return nil, nil
		}
	}
	return m.chunkDecoded(e)
}

// chunkDecoded is chunk, the event's data decoded whole.
func (m *Mapper) chunkDecoded(e session.Event) ([]Update, error) {
	var d session.AssistantChunk
	if err := e.Decode(&d); err != nil {
		return nil, err
	}
	switch d.Chunk.Type {
	case llm.ChunkReasoningDelta:
		m.streamed[[2]int{d.Turn, d.Step}] = true
		return []Update{m.text(kindThought, d.Turn, d.Step, d.Chunk.Text)}, nil
	case llm.ChunkTextDelta:
		m.streamed[[2]int{d.Turn, d.Step}] = true
		return []Update{m.text(kindMessage, d.Turn, d.Step, d.Chunk.Text)}, nil
	}
	return nil, nil
}

// liveChunkType reads the chunk type of an assistant/chunk's data as the
// session log encodes a session.AssistantChunk: {"turn":N,"step":N,
// "chunk":{"type":"TYPE",... ok is false for anything else (such data is
// decoded whole), and for a TYPE with an escape.
func liveChunkType(data []byte) (typ []byte, ok bool) {
	rest, ok := cutNumberField(data, `{"turn":`)
	if !ok {
		return nil, false
	}
	if rest, ok = cutNumberField(rest, `,"step":`); !ok {
		return nil, false
	}
	const head = `,"chunk":{"type":"`
	if !hasPrefix(rest, head) {
		return nil, false
	}
	rest = rest[len(head):]
	for i, c := range rest {
		switch {
		case c == '"':
			return rest[:i], true
		case c == '\\' || c < 0x20:
			return nil, false
		}
	}
	return nil, false
}

// hasPrefix is bytes.HasPrefix(b, []byte(prefix)), allocating nothing.
func hasPrefix(b []byte, prefix string) bool {
	return len(b) >= len(prefix) && string(b[:len(prefix)]) == prefix
}

// cutNumberField cuts prefix and the integer after it from the front of b.
func cutNumberField(b []byte, prefix string) (rest []byte, ok bool) {
	if !hasPrefix(b, prefix) {
		return nil, false
	}
	b = b[len(prefix):]
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	n := 0
	for n < len(b) && b[n] >= '0' && b[n] <= '9' {
		n++
	}
	if n == 0 {
		return nil, false
	}
	return b[n:], true
}

// message maps an assistant/message whose step streamed no deltas.
func (m *Mapper) message(e session.Event) ([]Update, error) {
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
			out = append(out, m.text(kindThought, d.Turn, d.Step, p.Text))
		case llm.PartText:
			out = append(out, m.text(kindMessage, d.Turn, d.Step, p.Text))
		}
	}
	return out, nil
}

// userMessage maps a user or steering message (replay only).
func userMessage(e session.Event) ([]Update, error) {
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
}

// toolCall maps a tool/call as its tool presents it.
func (m *Mapper) toolCall(e session.Event) ([]Update, error) {
	d, p, kind, err := m.presentCall(e)
	if err != nil {
		return nil, err
	}
	return one(sdk.StartToolCall(sdk.ToolCallId(d.CallID), p.Title,
		sdk.WithStartKind(kind),
		sdk.WithStartStatus(sdk.ToolCallStatusInProgress),
		sdk.WithStartRawInput(p.RawInput),
	)), nil
}

// presentCall decodes a tool/call and presents it as its tool does (kind
// "other" when the tool names none).
func (m *Mapper) presentCall(e session.Event) (session.ToolCall, tools.Presentation, sdk.ToolKind, error) {
	var d session.ToolCall
	if err := e.Decode(&d); err != nil {
		return d, tools.Presentation{}, "", err
	}
	p := m.tools.PresentCall(d.Name, d.Arguments)
	kind := sdk.ToolKind(p.Kind)
	if kind == "" {
		kind = sdk.ToolKindOther
	}
	return d, p, kind, nil
}

// toolResult maps a tool/result: completed or failed, its text as content.
func toolResult(e session.Event) ([]Update, error) {
	var d session.ToolResult
	if err := e.Decode(&d); err != nil {
		return nil, err
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
	return []Update{{SDK: sdk.UpdateToolCall(sdk.ToolCallId(d.CallID),
		sdk.WithUpdateStatus(status),
		sdk.WithUpdateContent(content),
	)}}, nil
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
func textChunk(kind, text string) Update { return textChunkID(kind, "", text) }

// textChunkID is textChunk with v2's messageId (none when id is empty),
// its key in sorted place. id is the bridge's own (messageID): it needs
// no escaping.
func textChunkID(kind, id, text string) Update {
	q, err := json.Marshal(validUTF8(text))
	if err != nil { // a Go string always encodes
		panic(err)
	}
	b := make([]byte, 0, len(q)+len(kind)+len(id)+80)
	b = append(b, `{"content":{"text":`...)
	b = append(b, q...)
	b = append(b, `,"type":"text"},`...)
	if id != "" {
		b = append(b, `"messageId":"`...)
		b = append(b, id...)
		b = append(b, `",`...)
	}
	b = append(b, `"sessionUpdate":"`...)
	b = append(b, kind...)
	b = append(b, `"}`...)
	return Update{Raw: b}
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
