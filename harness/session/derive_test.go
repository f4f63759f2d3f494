package session

import (
	"reflect"
	"testing"

	"github.com/todoharness/todoharness/harness/llm"
)

// The cached projection must equal a fresh projection after every append, and
// what a caller does to a returned history must not reach the next one.
func TestDeriveMessagesCacheMatchesFreshProjection(t *testing.T) {
	l := New("s", "/tmp")
	mustAppend := func(typ string, data any, opts ...AppendOption) {
		t.Helper()
		if _, err := l.Append(typ, data, opts...); err != nil {
			t.Fatalf("append %s: %v", typ, err)
		}
	}
	text := func(s string) []llm.Part { return []llm.Part{{Type: llm.PartText, Text: s}} }
	check := func(when string) {
		t.Helper()
		got, want := l.DeriveMessages(), DeriveMessages(l.Events())
		if (len(got) != 0 || len(want) != 0) && !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: cached history\n%+v\nwant\n%+v", when, got, want)
		}
	}
	check("empty log")
	mustAppend(TypeTurnStart, TurnStart{Turn: 1})
	mustAppend(TypeUserMessage, UserMessage{Content: text("hi")})
	check("after user message")
	first := l.DeriveMessages()
	first[0].Content[0].Text = "mutated by caller"
	check("after caller mutation")
	mustAppend(TypeStepStart, Step{Turn: 1, Step: 1})
	mustAppend(TypeAssistantMessage, AssistantMessage{Turn: 1, Step: 1, Content: []llm.Part{{Type: llm.PartToolCall, ID: "c1", Name: "todo_write", Arguments: `{"todos":[]}`}}})
	mustAppend(TypeToolCall, ToolCall{Turn: 1, Step: 1, CallID: "c1", Name: "todo_write", Arguments: `{"todos":[]}`})
	mustAppend(TypeTodoWrite, TodoWrite{Todos: []TodoItem{}})
	mustAppend(TypeToolResult, ToolResult{Turn: 1, Step: 1, CallID: "c1", Content: text("ok")}, WithSourceEventSeqs(4))
	mustAppend(TypeStepEnd, Step{Turn: 1, Step: 1})
	check("after a tool round trip")
	if n := len(l.DeriveMessages()); n != 3 {
		t.Fatalf("history has %d messages, want 3 (user, assistant, tool): todo/write must not be one", n)
	}
}
