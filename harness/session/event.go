package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/todolist"
)

// Event types written by the harness.
const (
	TypeTurnStart        = "turn/start"
	TypeTurnEnd          = "turn/end"
	TypeStepStart        = "step/start"
	TypeStepEnd          = "step/end"
	TypeUserMessage      = "user/message"
	TypeContextMessage   = "context/message"
	TypeSteeringMessage  = "steering/message"
	TypeAssistantChunk   = "assistant/chunk"
	TypeAssistantMessage = "assistant/message"
	TypeToolCall         = "tool/call"
	TypeToolResult       = "tool/result"
	TypeTodoWrite        = "todo/write"
)

// SurfaceOpAppend is the surface operation of every surface event the
// reference harness writes.
const SurfaceOpAppend = "append"

// knownTypes lists every event type this package understands. Any other type
// is kept and passed through untouched (forward compatibility).
var knownTypes = map[string]bool{
	TypeTurnStart: true, TypeTurnEnd: true, TypeStepStart: true, TypeStepEnd: true,
	TypeUserMessage: true, TypeContextMessage: true, TypeSteeringMessage: true,
	TypeAssistantChunk: true, TypeAssistantMessage: true, TypeToolCall: true,
	TypeToolResult: true, TypeTodoWrite: true,
}

// surfaceTypes are the events that form the surface list, the projection
// DeriveMessages turns into model history. todo/write is deliberately absent.
var surfaceTypes = map[string]bool{
	TypeUserMessage: true, TypeAssistantMessage: true, TypeToolResult: true,
	TypeContextMessage: true, TypeSteeringMessage: true,
}

// stepScoped events name the open turn and step in their data.
var stepScoped = map[string]bool{
	TypeAssistantChunk: true, TypeAssistantMessage: true,
	TypeToolCall: true, TypeToolResult: true,
}

// IsKnownType reports whether t is an event type this package understands.
func IsKnownType(t string) bool { return knownTypes[t] }

// IsSurfaceType reports whether events of type t belong to the surface.
func IsSurfaceType(t string) bool { return surfaceTypes[t] }

// Header is the first line of a session log file.
type Header struct {
	Type      string `json:"type"`
	Version   int    `json:"version"`
	ID        string `json:"id"`
	CreatedAt int64  `json:"createdAt"`
	Cwd       string `json:"cwd,omitempty"`
	// Fields the original's current release writes (read, kept, and written
	// back only when set: the reference harness never sets them).
	DelegationDepth *int            `json:"delegationDepth,omitempty"`
	Origin          json.RawMessage `json:"origin,omitempty"`
	ParentSession   string          `json:"parentSession,omitempty"`
}

// Event is one line of a session log after the header. Data is kept as raw
// JSON so that unknown event types and unknown fields survive a round trip.
type Event struct {
	Type            string          `json:"type"`
	Seq             int             `json:"seq"`
	Time            int64           `json:"time"`
	Data            json.RawMessage `json:"data"`
	SourceEventSeqs []int           `json:"sourceEventSeqs,omitempty"`
	SurfaceOp       string          `json:"surfaceOp,omitempty"`
}

// Clone returns a deep copy of e.
func (e Event) Clone() Event {
	c := e
	if e.Data != nil {
		c.Data = append(json.RawMessage(nil), e.Data...)
	}
	if e.SourceEventSeqs != nil {
		c.SourceEventSeqs = append([]int(nil), e.SourceEventSeqs...)
	}
	return c
}

// Decode unmarshals the event's data into v, naming the event on failure.
func (e Event) Decode(v any) error {
	if err := json.Unmarshal(e.Data, v); err != nil {
		return fmt.Errorf("event seq %d (%s): data: %w", e.Seq, e.Type, err)
	}
	return nil
}

// Todo statuses: exactly ACP's PlanEntryStatus triple (todolist's).
const (
	StatusPending    = todolist.StatusPending
	StatusInProgress = todolist.StatusInProgress
	StatusCompleted  = todolist.StatusCompleted
)

// TodoItem is one entry of the model's task list (todolist.Item).
type TodoItem = todolist.Item

// TodoWrite is the data of a todo/write event: the whole list.
type TodoWrite struct {
	Todos []TodoItem `json:"todos"`
}

// Source says who produced a message or triggered a turn.
type Source struct {
	Kind string `json:"kind"`
}

// Trigger is why a turn started.
type Trigger struct {
	Kind   string  `json:"kind"`
	Source *Source `json:"source,omitempty"`
}

// TurnStart is the data of a turn/start event.
type TurnStart struct {
	Turn    int     `json:"turn"`
	Trigger Trigger `json:"trigger"`
}

// Turn end reason kinds.
const (
	TurnCompleted = "completed"
	TurnError     = "error"
	TurnCancelled = "cancelled"
	TurnMaxSteps  = "max-steps"
	// TurnInterrupted closes, on reopen, a turn whose agent was killed
	// before it ended (see Dir.Open).
	TurnInterrupted = "interrupted"
)

// TurnEndReason says how a turn ended; Message carries the error text.
type TurnEndReason struct {
	Kind    string `json:"kind"`
	Message string `json:"message,omitempty"`
}

// TurnEnd is the data of a turn/end event.
type TurnEnd struct {
	Turn   int           `json:"turn"`
	Reason TurnEndReason `json:"reason"`
}

// Step is the data of step/start and step/end events.
type Step struct {
	Turn int `json:"turn"`
	Step int `json:"step"`
}

// UserMessage is the data of user/message (and of context/message and
// steering/message, which share its shape).
type UserMessage struct {
	Content []llm.Part `json:"content"`
	Source  *Source    `json:"source,omitempty"`
}

// AssistantChunk is the data of an assistant/chunk event.
type AssistantChunk struct {
	Turn  int       `json:"turn"`
	Step  int       `json:"step"`
	Chunk llm.Chunk `json:"chunk"`
}

// AssistantMessage is the data of an assistant/message event.
type AssistantMessage struct {
	Turn    int        `json:"turn"`
	Step    int        `json:"step"`
	Content []llm.Part `json:"content"`
	Usage   *llm.Usage `json:"usage,omitempty"`
}

// ToolCall is the data of a tool/call event. Arguments is the raw JSON string
// the model produced.
type ToolCall struct {
	Turn      int    `json:"turn"`
	Step      int    `json:"step"`
	CallID    string `json:"callId"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// ToolResult is the data of a tool/result event.
type ToolResult struct {
	Turn    int        `json:"turn"`
	Step    int        `json:"step"`
	CallID  string     `json:"callId"`
	Content []llm.Part `json:"content"`
	IsError bool       `json:"isError"`
}

// scope is the turn/step fields every step-scoped payload carries. An
// absent (or null) number keeps the value noNum.
type scope struct {
	Turn   int    `json:"turn"`
	Step   int    `json:"step"`
	CallID string `json:"callId"`
}

// noNum marks a number absent from an event's data.
const noNum = math.MinInt

// internedName is a string field of an event line (type, surfaceOp) decoded
// without allocating when it is one of the names this package knows: a
// million-event log holds a dozen distinct names.
type internedName string

var interned = func() map[string]string {
	m := map[string]string{SurfaceOpAppend: SurfaceOpAppend}
	for t := range knownTypes {
		m[t] = t
	}
	return m
}()

// UnmarshalJSON implements json.Unmarshaler.
func (n *internedName) UnmarshalJSON(b []byte) error {
	if len(b) >= 2 && b[0] == '"' && b[len(b)-1] == '"' && bytes.IndexByte(b, '\\') < 0 {
		if s, ok := interned[string(b[1:len(b)-1])]; ok {
			*n = internedName(s)
			return nil
		}
	}
	if string(b) == "null" {
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*n = internedName(s)
	return nil
}
