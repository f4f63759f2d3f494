package wire

import (
	"context"
	"testing"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/mockmodel"
)

// benchScript has n identical turns shaped like a todo_write step:
// reasoning, text and one tool call whose ~150 bytes of arguments stream
// in 8-byte pieces (as mockmodel's benchmarks).
func benchScript(n int) *mockmodel.Script {
	turns := make([]mockmodel.Turn, n)
	for i := range turns {
		turns[i] = mockmodel.Turn{
			Reasoning: "The user wants a plan with three todos, then DONE.",
			Text:      "Recording the plan now.",
			ToolCalls: []mockmodel.ToolCall{{Name: toolName, Arguments: map[string]any{"todos": []map[string]string{
				{"content": "read the code", "status": "in_progress"},
				{"content": "write the fix", "status": "pending"},
				{"content": "run the tests", "status": "pending"},
			}}}},
			Usage: &llm.Usage{InputTokens: 1706, OutputTokens: 113, ReasoningTokens: 23},
		}
	}
	return &mockmodel.Script{Name: "bench", Turns: turns}
}

// BenchmarkWireSDK measures streaming requests per second per wire format
// on loopback, each through its official SDK (request building, SSE
// parsing, accumulation included).
func BenchmarkWireSDK(b *testing.B) {
	for _, wc := range cases {
		b.Run(wc.wire, func(b *testing.B) {
			srv := mockmodel.NewServer(benchScript(b.N))
			defer srv.Close()
			d, err := wc.newDriver(srv)
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				r, err := d.send(ctx, true, nil, false)
				if err != nil {
					b.Fatal(err)
				}
				if len(r.calls) != 1 {
					b.Fatalf("want one tool call, got %+v", r.calls)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "req/s")
		})
	}
}
