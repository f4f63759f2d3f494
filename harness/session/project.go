package session

import (
	"encoding/json"

	"github.com/todoharness/todoharness/harness/llm"
)

// DeriveMessages projects the surface events of a log into model history, in
// order. Non-surface events (todo/write, chunks, tool/call, turn and step
// markers, unknown types) never reach it.
func DeriveMessages(events []Event) []llm.Message {
	var out []llm.Message
	for _, e := range events {
		if m, ok := surfaceMessage(e); ok {
			out = append(out, m)
		}
	}
	return out
}

func surfaceMessage(e Event) (llm.Message, bool) {
	if !surfaceTypes[e.Type] || e.SurfaceOp == "" {
		return llm.Message{}, false
	}
	switch e.Type {
	case TypeUserMessage, TypeContextMessage, TypeSteeringMessage:
		var d UserMessage
		if json.Unmarshal(e.Data, &d) != nil {
			return llm.Message{}, false
		}
		return llm.Message{Role: llm.RoleUser, Content: d.Content}, true
	case TypeAssistantMessage:
		var d struct {
			AssistantMessage
			Message *struct {
				Content []llm.Part `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(e.Data, &d) != nil {
			return llm.Message{}, false
		}
		if d.Content == nil && d.Message != nil {
			// The original's current shape: {turn, step, message: {role, content}}.
			d.Content = d.Message.Content
		}
		return llm.Message{Role: llm.RoleAssistant, Content: d.Content}, true
	case TypeToolResult:
		var d struct {
			ToolResult
			Message *struct {
				Content []struct {
					Type       string     `json:"type"`
					ToolCallID string     `json:"toolCallId"`
					Content    []llm.Part `json:"content"`
					IsError    bool       `json:"isError"`
				} `json:"content"`
			} `json:"message"`
		}
		if json.Unmarshal(e.Data, &d) != nil {
			return llm.Message{}, false
		}
		if d.CallID == "" && d.Message != nil {
			// The original's current shape: {turn, step, message: {content:
			// [{type: "tool-result", toolCallId, content, isError}]}}.
			for _, p := range d.Message.Content {
				if p.Type == "tool-result" {
					return llm.Message{Role: llm.RoleTool, Content: p.Content, ToolCallID: p.ToolCallID, IsError: p.IsError}, true
				}
			}
		}
		return llm.Message{Role: llm.RoleTool, Content: d.Content, ToolCallID: d.CallID, IsError: d.IsError}, true
	}
	return llm.Message{}, false
}

// CurrentTodos returns the list of the last todo/write event (last write
// wins) and whether there was one. An empty list written on purpose is
// returned as a non-nil empty slice with ok true.
func CurrentTodos(events []Event) (todos []TodoItem, ok bool) {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == TypeTodoWrite {
			var d TodoWrite
			if err := json.Unmarshal(events[i].Data, &d); err != nil {
				return nil, false
			}
			if d.Todos == nil {
				d.Todos = []TodoItem{}
			}
			return d.Todos, true
		}
	}
	return nil, false
}
