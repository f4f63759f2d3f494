package agent

import (
	"context"
	"testing"

	"github.com/todoharness/todoharness/harness/agent"
	"github.com/todoharness/todoharness/harness/builtin"
	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
)

// benchModel answers every even request with one todo_write call and every
// odd one with text, each as a handful of chunks: the loop's own cost (log
// appends with invariant checks, history derivation, tool execution) without
// a script player or a wire.
type benchModel struct{ n int }

func (m *benchModel) Stream(ctx context.Context, req llm.Request, onChunk func(llm.Chunk) error) (llm.Response, error) {
	m.n++
	if m.n%2 == 1 {
		return answer(llm.FinishToolCalls, llm.Part{Type: llm.PartToolCall, ID: "c1", Name: "todo_write",
			Arguments: `{"todos":[{"content":"read the code","status":"in_progress"},{"content":"write the fix","status":"pending"},{"content":"run the tests","status":"pending"}]}`,
		})(ctx, req, onChunk)
	}
	return answer(llm.FinishStop, text("Planned: reading the code now."))(ctx, req, onChunk)
}

// BenchmarkPrompt is one turn (model -> todo_write -> result -> text) on a
// fresh in-memory session, with a model that costs next to nothing.
func BenchmarkPrompt(b *testing.B) {
	reg, err := builtin.Compose("")
	if err != nil {
		b.Fatal(err)
	}
	m := &benchModel{}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		log := session.New("bench", "/bench")
		reason, err := agent.New(log, agent.Config{Model: m, Tools: reg}).Prompt(ctx, prompt("go"))
		if err != nil || reason.Kind != session.TurnCompleted {
			b.Fatalf("turn %d: %+v, %v", i, reason, err)
		}
	}
}
