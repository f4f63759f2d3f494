package llm

import (
	"context"
	"encoding/json"
)

// Content part types, as stored in session events.
const (
	PartText      = "text"
	PartReasoning = "reasoning"
	PartToolCall  = "tool-call"
)

// Part is one block of message content: text, reasoning, or a tool call
// (ID, Name and Arguments, the raw JSON argument string the model produced).
type Part struct {
	Type      string `json:"type"`
	Text      string `json:"text,omitempty"`
	ID        string `json:"id,omitempty"`
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments,omitempty"`
}

// Roles of a Message.
const (
	RoleSystem    = "system"
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Message is one entry of the model history derived from the session surface.
// A RoleTool message answers the tool call ToolCallID; IsError marks a
// rejected call.
type Message struct {
	Role       string `json:"role"`
	Content    []Part `json:"content"`
	ToolCallID string `json:"toolCallId,omitempty"`
	IsError    bool   `json:"isError,omitempty"`
}

// Text returns the concatenated text parts of the message.
func (m Message) Text() string {
	s := ""
	for _, p := range m.Content {
		if p.Type == PartText {
			s += p.Text
		}
	}
	return s
}

// ToolCalls returns the tool-call parts of the message.
func (m Message) ToolCalls() []Part {
	var out []Part
	for _, p := range m.Content {
		if p.Type == PartToolCall {
			out = append(out, p)
		}
	}
	return out
}

// ToolSpec is a tool as offered to the model: the JSON Schema of its
// arguments is sent verbatim.
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Request is one model call.
type Request struct {
	Model    string     `json:"model,omitempty"`
	System   string     `json:"system,omitempty"`
	Messages []Message  `json:"messages"`
	Tools    []ToolSpec `json:"tools,omitempty"`
}

// Usage is the token accounting of one model call.
type Usage struct {
	InputTokens     int `json:"inputTokens"`
	OutputTokens    int `json:"outputTokens"`
	CacheReadTokens int `json:"cacheReadTokens"`
	ReasoningTokens int `json:"reasoningTokens"`
}

// Finish reason kinds.
const (
	FinishStop      = "stop"
	FinishToolCalls = "tool-calls"
	FinishLength    = "length"
	FinishError     = "error"
	// FinishContentFilter and FinishOther are what an OpenAI-compatible
	// server's content_filter and unknown finish reasons map to (same words
	// as the original harness's vocabulary).
	FinishContentFilter = "content-filter"
	FinishOther         = "other"
)

// FinishReason says why the model stopped.
type FinishReason struct {
	Kind string `json:"kind"`
}

// Chunk types.
const (
	ChunkBlockStart     = "block-start"
	ChunkReasoningDelta = "reasoning-delta"
	ChunkTextDelta      = "text-delta"
	ChunkToolCallDelta  = "tool-call-delta"
	ChunkBlockEnd       = "block-end"
	ChunkUsage          = "usage"
	ChunkFinish         = "finish"
)

// Chunk is one streamed piece of a model answer, in the original harness's
// vocabulary. Index is a pointer because usage and finish chunks carry none
// while block index 0 must still be written.
type Chunk struct {
	Type           string        `json:"type"`
	Index          *int          `json:"index,omitempty"`
	BlockType      string        `json:"blockType,omitempty"`
	Text           string        `json:"text,omitempty"`
	ID             string        `json:"id,omitempty"`
	Name           string        `json:"name,omitempty"`
	ArgumentsDelta *string       `json:"argumentsDelta,omitempty"`
	Block          *Part         `json:"block,omitempty"`
	Usage          *Usage        `json:"usage,omitempty"`
	Reason         *FinishReason `json:"reason,omitempty"`
}

// Response is the whole answer to one Request, assembled from its chunks.
type Response struct {
	Content []Part       `json:"content"`
	Usage   *Usage       `json:"usage,omitempty"`
	Finish  FinishReason `json:"finish"`
}

// ToolCalls returns the tool-call parts of the response.
func (r Response) ToolCalls() []Part {
	return Message{Content: r.Content}.ToolCalls()
}

// Model is anything that answers a Request with a stream of chunks.
// Stream calls onChunk for every chunk in order, then returns the assembled
// Response. An error from onChunk aborts the stream and is returned.
// Implementations must honour ctx cancellation.
type Model interface {
	Stream(ctx context.Context, req Request, onChunk func(Chunk) error) (Response, error)
}
