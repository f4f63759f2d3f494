package session_test

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
)

// Benchmarks for `make bench`. Each event-count sub-benchmark reports
// ns/event and allocs/event, so linear growth shows as a flat per-event cost
// from 10k to 1M events.

var sizes = []int{10_000, 100_000, 1_000_000}

func sizeName(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return fmt.Sprintf("events=%dM", n/1_000_000)
	case n >= 1_000 && n%1_000 == 0:
		return fmt.Sprintf("events=%dk", n/1_000)
	}
	return fmt.Sprintf("events=%d", n)
}

// fileID is the session id of the generated n-event log.
func fileID(n int) string { return strings.ReplaceAll(sizeName(n), "=", "-") }

func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// turnEvents is one realistic turn, shaped like the interop fixture: the
// user's message, a step with streamed chunks, an assistant message with a
// todo_write call, the todo/write event and the tool result (31 events).
func turnEvents(turn int) []session.Event {
	idx := llm.IntPtr(0)
	todos := []session.TodoItem{
		{Content: "read the code", Status: "completed"},
		{Content: fmt.Sprintf("write the fix %d", turn), Status: "in_progress"},
		{Content: "run the tests", Status: "pending"},
	}
	args := string(mustJSON(map[string]any{"todos": todos}))
	evs := []session.Event{
		{Type: session.TypeTurnStart, Data: mustJSON(session.TurnStart{Turn: turn, Trigger: session.Trigger{Kind: "message", Source: &session.Source{Kind: "user"}}})},
		{Type: session.TypeUserMessage, SurfaceOp: "append", Data: mustJSON(session.UserMessage{Content: []llm.Part{{Type: llm.PartText, Text: "Plan the fix and start on it."}}, Source: &session.Source{Kind: "user"}})},
		{Type: session.TypeStepStart, Data: mustJSON(session.Step{Turn: turn, Step: 1})},
		{Type: session.TypeAssistantChunk, Data: mustJSON(session.AssistantChunk{Turn: turn, Step: 1, Chunk: llm.Chunk{Type: llm.ChunkBlockStart, Index: idx, BlockType: llm.PartText}})},
	}
	for i := 0; i < 20; i++ {
		evs = append(evs, session.Event{Type: session.TypeAssistantChunk, Data: mustJSON(session.AssistantChunk{Turn: turn, Step: 1, Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Index: idx, Text: " word"}})})
	}
	evs = append(evs,
		session.Event{Type: session.TypeAssistantChunk, Data: mustJSON(session.AssistantChunk{Turn: turn, Step: 1, Chunk: llm.Chunk{Type: llm.ChunkBlockEnd, Index: idx}})},
		session.Event{Type: session.TypeAssistantMessage, SurfaceOp: "append", Data: mustJSON(session.AssistantMessage{Turn: turn, Step: 1, Content: []llm.Part{
			{Type: llm.PartText, Text: strings.Repeat(" word", 20)},
			{Type: llm.PartToolCall, ID: "call_1", Name: "todo_write", Arguments: args},
		}})},
		session.Event{Type: session.TypeToolCall, Data: mustJSON(session.ToolCall{Turn: turn, Step: 1, CallID: "call_1", Name: "todo_write", Arguments: args})},
		session.Event{Type: session.TypeTodoWrite, Data: mustJSON(session.TodoWrite{Todos: todos})},
		session.Event{Type: session.TypeToolResult, SurfaceOp: "append", Data: mustJSON(session.ToolResult{Turn: turn, Step: 1, CallID: "call_1", Content: []llm.Part{{Type: llm.PartText, Text: "Updated todo list: 1 pending, 1 in progress, 1 completed."}}})},
		session.Event{Type: session.TypeStepEnd, Data: mustJSON(session.Step{Turn: turn, Step: 1})},
		session.Event{Type: session.TypeTurnEnd, Data: mustJSON(session.TurnEnd{Turn: turn, Reason: session.TurnEndReason{Kind: session.TurnCompleted}})},
	)
	return evs
}

// genEvents returns n events of consecutive realistic turns (the last one
// possibly cut short, which the invariants allow).
func genEvents(n int) []session.Event {
	out := make([]session.Event, 0, n)
	for turn := 1; len(out) < n; turn++ {
		for _, e := range turnEvents(turn) {
			if len(out) == n {
				break
			}
			e.Seq = len(out)
			e.Time = 1782701599722 + int64(len(out))
			out = append(out, e)
		}
	}
	return out
}

// genLog returns a restored in-memory log of n events.
func genLog(b *testing.B, n int) *session.Log {
	b.Helper()
	l, err := session.Restore(session.Header{Type: "session", ID: "bench"}, genEvents(n))
	if err != nil {
		b.Fatal(err)
	}
	return l
}

// perEvent reports ns/event and allocs/event for a loop over n events per op.
type perEvent struct {
	b       *testing.B
	n       int
	mallocs uint64
}

func startPerEvent(b *testing.B, n int) *perEvent {
	b.ReportAllocs()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	p := &perEvent{b: b, n: n, mallocs: ms.Mallocs}
	b.ResetTimer()
	return p
}

func (p *perEvent) stop() {
	p.b.StopTimer()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	events := float64(p.b.N) * float64(p.n)
	p.b.ReportMetric(float64(p.b.Elapsed().Nanoseconds())/events, "ns/event")
	p.b.ReportMetric(float64(ms.Mallocs-p.mallocs)/events, "allocs/event")
}

// BenchmarkAppend appends realistic events one at a time (invariants on),
// to memory and to a file store (which flushes and fsyncs at every turn end,
// i.e. every 31 events); one op is one event.
func BenchmarkAppend(b *testing.B) {
	tmpl := turnEvents(1)
	run := func(b *testing.B, l *session.Log) {
		b.ReportAllocs()
		turn, i := 1, 0
		data := tmpl
		for b.Loop() {
			e := data[i]
			if _, err := l.Append(e.Type, e.Data); err != nil {
				b.Fatal(err)
			}
			i++
			if i == len(data) {
				i = 0
				turn++
				data = turnEvents(turn)
			}
		}
	}
	b.Run("memory", func(b *testing.B) {
		run(b, session.New("bench", "", session.WithClock(func() int64 { return 1 })))
	})
	b.Run("memory-after-100k-subscriptions", func(b *testing.B) {
		// A bridge subscribes once per prompt: past subscriptions must not
		// slow down later appends.
		l := session.New("bench", "", session.WithClock(func() int64 { return 1 }))
		for i := 0; i < 100_000; i++ {
			l.Subscribe(func(session.Event) {})()
		}
		run(b, l)
	})
	b.Run("file", func(b *testing.B) {
		l, err := session.Dir{Path: b.TempDir()}.Create("bench", "", session.WithClock(func() int64 { return 1 }))
		if err != nil {
			b.Fatal(err)
		}
		defer l.Close()
		run(b, l)
	})
}

// BenchmarkCurrentTodos looks up the current plan: Log.CurrentTodos is
// constant time whatever the log's length; the event-slice projection
// session.CurrentTodos scans back from the end (worst case: no todo/write).
func BenchmarkCurrentTodos(b *testing.B) {
	for _, n := range sizes {
		l := genLog(b, n)
		b.Run("log/"+sizeName(n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if todos, ok := l.CurrentTodos(); !ok || len(todos) != 3 {
					b.Fatal("no plan")
				}
			}
		})
		evs := l.Events()
		for i := range evs {
			if evs[i].Type == session.TypeTodoWrite {
				evs[i].Type = "todo/other"
			}
		}
		b.Run("scan-worst/"+sizeName(n), func(b *testing.B) {
			p := startPerEvent(b, n)
			for b.Loop() {
				if _, ok := session.CurrentTodos(evs); ok {
					b.Fatal("found a plan")
				}
			}
			p.stop()
		})
	}
}

// BenchmarkDeriveMessages projects the model history from logs of growing
// length.
func BenchmarkDeriveMessages(b *testing.B) {
	for _, n := range sizes {
		l := genLog(b, n)
		b.Run(sizeName(n), func(b *testing.B) {
			p := startPerEvent(b, n)
			for b.Loop() {
				if msgs := l.DeriveMessages(); len(msgs) == 0 {
					b.Fatal("no messages")
				}
			}
			p.stop()
		})
	}
}
