package acp

import (
	"encoding/json"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
)

// surface is the protocol surface a connection negotiated: it decides how
// a todo list (and, on v2, every other event) is shown.
type surface uint32

const (
	// surfaceV1 is ACP version 1: a todo list is a plan update.
	surfaceV1 surface = iota
	// surfaceV1PlanOps is version 1 with a client that advertised the
	// unstable plan capability (clientCapabilities.plan): a todo list is
	// plan_update {type "items", planId PlanID}.
	surfaceV1PlanOps
	// surfaceV2 is ACP version 2 (Draft).
	surfaceV2
)

func (s surface) String() string {
	switch s {
	case surfaceV1PlanOps:
		return "v1 (plan operations)"
	case surfaceV2:
		return "v2"
	}
	return "v1"
}

// PlanID is the planId of a session's todo list in plan_update: one id
// for every write of the list, the same after session/resume (it names the
// list, not a write or a connection). The todo list is the session's only
// plan, so no plan_removed is ever sent: an empty list is plan_update with
// no entries, as v1 sends plan with `entries: []`.
//
// No entry is ever "cancelled" (v2's fourth status): the todo contract has
// three statuses, the model's own, and the plan shows the list exactly as
// written; a cancelled turn leaves its last list as it was, which is what
// session/resume restores.
const PlanID = "todo"

// messageID is the messageId of a v2 message chunk or message: one id per
// message, the same live and on replay (it derives from the session log,
// never from the connection). kind is the update's discriminator; a user
// or steering message is named after its event's seq, the model's text and
// reasoning after their turn and step.
func messageID(kind string, turn, step int) string {
	switch kind {
	case kindThought:
		return fmt.Sprintf("thought-%d-%d", turn, step)
	case kindMessage:
		return fmt.Sprintf("agent-%d-%d", turn, step)
	}
	return fmt.Sprintf("user-%d", turn)
}

// text is the text chunk of a model step for m's surface.
func (m *Mapper) text(kind string, turn, step int, text string) Update {
	if m.surface != surfaceV2 {
		return textChunk(kind, text)
	}
	return textChunkID(kind, messageID(kind, turn, step), text)
}

// Kinds of the v2 updates the bridge sends.
const (
	kindUserMessageV2 = "user_message"
	kindStateUpdate   = "state_update"
	kindPlanUpdate    = "plan_update"
	kindToolCallV2    = "tool_call_update"
)

// userMessageV2 maps a user or steering message to v2's user_message
// (live and on replay: v2 acknowledges a prompt with it).
func userMessageV2(e session.Event) ([]Update, error) {
	var d session.UserMessage
	if err := e.Decode(&d); err != nil {
		return nil, err
	}
	type text struct {
		Text string `json:"text"`
		Type string `json:"type"`
	}
	content := make([]text, 0, len(d.Content))
	for _, p := range d.Content {
		if p.Type == llm.PartText {
			content = append(content, text{p.Text, "text"})
		}
	}
	return rawUpdate(struct {
		Content       []text `json:"content"`
		MessageID     string `json:"messageId"`
		SessionUpdate string `json:"sessionUpdate"`
	}{content, messageID(kindUser, e.Seq, 0), kindUserMessageV2})
}

// toolCallV2 maps a tool/call to the tool_call_update that creates it.
func (m *Mapper) toolCallV2(e session.Event) ([]Update, error) {
	d, p, kind, err := m.presentCall(e)
	if err != nil {
		return nil, err
	}
	input := p.RawInput
	if raw, ok := input.(json.RawMessage); ok { // the model's own order: sorted, as v1's SDK does
		var v any
		if json.Unmarshal(raw, &v) == nil {
			input = v
		}
	}
	return rawUpdate(struct {
		Kind          sdk.ToolKind `json:"kind"`
		RawInput      any          `json:"rawInput,omitempty"`
		SessionUpdate string       `json:"sessionUpdate"`
		Status        string       `json:"status"`
		Title         string       `json:"title"`
		ToolCallID    string       `json:"toolCallId"`
	}{kind, input, kindToolCallV2, string(sdk.ToolCallStatusInProgress), p.Title, d.CallID})
}

// planEntry is a plan entry of plan_update (v1's shape, unchanged in v2).
type planEntry struct {
	Content  string `json:"content"`
	Priority string `json:"priority"`
	Status   string `json:"status"`
}

// PlanItemsUpdate is the plan_update of a todo list under planID: one
// entry per item, in order, priority "medium", status as is, `[]` for an
// empty list.
func PlanItemsUpdate(planID string, todos []session.TodoItem) Update {
	entries := make([]planEntry, 0, len(todos))
	for _, t := range todos {
		entries = append(entries, planEntry{Content: t.Content, Priority: string(sdk.PlanEntryPriorityMedium), Status: t.Status})
	}
	type items struct {
		Entries []planEntry `json:"entries"`
		PlanID  string      `json:"planId"`
		Type    string      `json:"type"`
	}
	u, err := rawUpdate(struct {
		Plan          items  `json:"plan"`
		SessionUpdate string `json:"sessionUpdate"`
	}{items{entries, planID, "items"}, kindPlanUpdate})
	if err != nil { // strings and a slice always encode
		panic(err)
	}
	return u[0]
}

// Stop reasons of v2's idle state_update beyond ACP's own: a model error
// ends the turn with this extension value ('_'-prefixed, as v2 reserves
// for implementations), its reason in _meta.todoharness.error, where v1
// answered the prompt with a JSON-RPC error.
const stopReasonModelError = "_model_error"

// stateUpdate is v2's state_update: "running", or "idle" with the stop
// reason that ended foreground work (none when stopReason is empty) and,
// for a model error, its reason.
func stateUpdate(state, stopReason, errText string) Update {
	type meta struct {
		Todoharness struct {
			Error string `json:"error"`
		} `json:"todoharness"`
	}
	v := struct {
		Meta          *meta  `json:"_meta,omitempty"`
		SessionUpdate string `json:"sessionUpdate"`
		State         string `json:"state"`
		StopReason    string `json:"stopReason,omitempty"`
	}{SessionUpdate: kindStateUpdate, State: state, StopReason: stopReason}
	if errText != "" {
		v.Meta = &meta{}
		v.Meta.Todoharness.Error = errText
	}
	u, err := rawUpdate(v)
	if err != nil { // strings always encode
		panic(err)
	}
	return u[0]
}

// rawUpdate encodes v as one raw update. Its keys are sorted (the fields
// of the v2 updates are declared in order), as the SDK's v1 updates are
// (its map round trip sorts them): a transcript re-encoded with sorted
// keys (a scrubbed recording) is then the same bytes.
func rawUpdate(v any) ([]Update, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("encode update: %w", err)
	}
	return []Update{{Raw: b}}, nil
}
