package fullloop

import (
	"context"
	"testing"

	"github.com/todoharness/todoharness/harness/agent"
	"github.com/todoharness/todoharness/harness/builtin"
	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/llm/openaichat"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/mockmodel"
)

// benchScript answers n turns of the agent, each two model requests: a
// todo_write of three items (arguments streamed in 8-byte deltas), then a
// short text once the model has seen the counts.
func benchScript(n int) *mockmodel.Script {
	turns := make([]mockmodel.Turn, 0, 2*n)
	for i := 0; i < n; i++ {
		turns = append(turns,
			mockmodel.Turn{
				Reasoning: "Three steps; start with reading.",
				Text:      "I'll plan this first.",
				ToolCalls: []mockmodel.ToolCall{{Name: "todo_write", Arguments: map[string]any{"todos": []map[string]string{
					{"content": "read the code", "status": "in_progress"},
					{"content": "write the fix", "status": "pending"},
					{"content": "run the tests", "status": "pending"},
				}}}},
				Usage: &llm.Usage{InputTokens: 120, OutputTokens: 40},
			},
			mockmodel.Turn{Text: "Planned: reading the code now.", Usage: &llm.Usage{InputTokens: 180, OutputTokens: 8}},
		)
	}
	return &mockmodel.Script{Name: "bench", Turns: turns}
}

var benchPrompt = []llm.Part{{Type: llm.PartText, Text: "Please fix the parser."}}

// benchTurns runs b.N full turns (model -> todo_write -> result -> text),
// each on a fresh in-memory session with invariant checks on, as the
// harness runs.
func benchTurns(b *testing.B, model llm.Model) {
	reg, err := builtin.Compose("")
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		log := session.New("bench", "/bench")
		a := agent.New(log, agent.Config{Model: model, Tools: reg, ModelName: "mock-model"})
		reason, err := a.Prompt(ctx, benchPrompt)
		if err != nil {
			b.Fatal(err)
		}
		if reason.Kind != session.TurnCompleted {
			b.Fatalf("turn %d ended %+v", i, reason)
		}
		if todos, ok := log.CurrentTodos(); !ok || len(todos) != 3 {
			b.Fatalf("turn %d: current todos %v, %v", i, todos, ok)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "turns/s")
}

// BenchmarkTurnInProcess is one full scripted turn against the in-process
// mock model.
func BenchmarkTurnInProcess(b *testing.B) {
	benchTurns(b, mockmodel.NewModel(benchScript(b.N)))
}

// BenchmarkTurnHTTP is one full scripted turn through the mock server on
// 127.0.0.1 and the real streaming llm client (two requests per turn).
func BenchmarkTurnHTTP(b *testing.B) {
	srv := mockmodel.NewServer(benchScript(b.N))
	defer srv.Close()
	c, err := openaichat.NewClient(openaichat.ClientConfig{BaseURL: srv.BaseURL(), APIKey: "bench", Model: "mock-model", HTTPClient: srv.Client()})
	if err != nil {
		b.Fatal(err)
	}
	benchTurns(b, c)
}

// BenchmarkTurnHTTPNoStream is BenchmarkTurnHTTP with stream:false.
func BenchmarkTurnHTTPNoStream(b *testing.B) {
	srv := mockmodel.NewServer(benchScript(b.N))
	defer srv.Close()
	c, err := openaichat.NewClient(openaichat.ClientConfig{BaseURL: srv.BaseURL(), APIKey: "bench", Model: "mock-model", HTTPClient: srv.Client(), DisableStreaming: true})
	if err != nil {
		b.Fatal(err)
	}
	benchTurns(b, c)
}
