package mock

import (
	"context"
	"encoding/json"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/llm"
)

// ctx is a per-spec context that times out, so a bug shows as a failure,
// never as a hung suite.
func ctx() context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	DeferCleanup(cancel)
	return c
}

var todoTool = llm.ToolSpec{
	Name:        "todo_write",
	Description: "Write the COMPLETE task list.",
	Parameters:  json.RawMessage(`{"type":"object","required":["todos"],"properties":{"todos":{"type":"array"}}}`),
}

// toolResultRequest is a history ending with the result of call id.
func toolResultRequest(id, text string, isError bool) llm.Request {
	return llm.Request{
		System: "You are a test.",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartText, Text: "plan it"}}},
			{Role: llm.RoleAssistant, Content: []llm.Part{
				{Type: llm.PartReasoning, Text: "thinking"},
				{Type: llm.PartToolCall, ID: id, Name: "todo_write", Arguments: `{"todos":[]}`},
			}},
			{Role: llm.RoleTool, ToolCallID: id, IsError: isError, Content: []llm.Part{{Type: llm.PartText, Text: text}}},
		},
		Tools: []llm.ToolSpec{todoTool},
	}
}

func userRequest(text string) llm.Request {
	return llm.Request{
		Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartText, Text: text}}}},
		Tools:    []llm.ToolSpec{todoTool},
	}
}

// collect returns an onChunk that appends to *dst.
func collect(dst *[]llm.Chunk) func(llm.Chunk) error {
	return func(c llm.Chunk) error {
		*dst = append(*dst, c)
		return nil
	}
}

// chunkJSON renders chunks one JSON object per element, as they appear in
// assistant/chunk events.
func chunkJSON(chunks []llm.Chunk) []string {
	out := make([]string, len(chunks))
	for i, c := range chunks {
		b, err := json.Marshal(c)
		Expect(err).NotTo(HaveOccurred())
		out[i] = string(b)
	}
	return out
}
