package session

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/todoharness/todoharness/harness/llm"
)

// eventLineSeeds are events as Log.Append makes them: data encoded by
// encodeJSON, every type, with and without surface metadata.
func eventLineSeeds(t testing.TB) []Event {
	t.Helper()
	datas := []any{
		nil, TurnStart{Turn: 1}, Step{Turn: 1, Step: 2},
		AssistantChunk{Turn: 1, Step: 1, Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Index: llm.IntPtr(1), Text: "a < b & \"c\" \\ é\u2028\n"}},
		ToolCall{Turn: 1, Step: 1, CallID: "call_1", Name: "todo_write", Arguments: `{"todos": [ {"content":"x"} ]}`},
		TodoWrite{Todos: []TodoItem{{Content: "<b>", Status: StatusPending}}},
		map[string]any{"k": []any{1.5, nil, true, "\x00"}},
	}
	var out []Event
	for _, typ := range []string{TypeAssistantChunk, TypeToolResult, "x/tomorrow", ""} {
		for _, d := range datas {
			raw, compact, err := marshalData(d)
			if err != nil || !compact {
				t.Fatalf("marshalData(%v) = %v, %v", d, compact, err)
			}
			for _, e := range []Event{
				{Type: typ, Seq: 0, Time: 0, Data: raw},
				{Type: typ, Seq: 7, Time: 1733577600123, Data: raw, SurfaceOp: SurfaceOpAppend},
				{Type: typ, Seq: -3, Time: -1, Data: raw, SourceEventSeqs: []int{}, SurfaceOp: "x"},
				{Type: typ, Seq: 12, Time: 5, Data: raw, SourceEventSeqs: []int{3, -4, 11}, SurfaceOp: SurfaceOpAppend},
			} {
				out = append(out, e)
			}
		}
	}
	return out
}

// The store frames an event line around data it knows to be compact: the
// line must be byte for byte what encoding the whole event writes.
func TestEventLineIsTheEncodersLine(t *testing.T) {
	for _, e := range eventLineSeeds(t) {
		checkEventLine(t, e)
	}
}

func checkEventLine(t *testing.T, e Event) {
	t.Helper()
	var want bytes.Buffer
	if err := encodeJSON(&want, e); err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	if appendEventLine(&got, e) {
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Errorf("event line\n got  %s\n want %s", got.Bytes(), want.Bytes())
		}
	} else if plainASCII(e.Type) && plainASCII(e.SurfaceOp) && len(e.Data) > 0 {
		t.Errorf("appendEventLine refused %s", want.Bytes())
	}
}

// Types and surface operations of every byte: the framed line is the
// encoder's, or appendEventLine leaves it to the encoder.
func FuzzEventLine(f *testing.F) {
	for _, s := range []string{"tool/call", "a\"b", `a\b`, "<&>", "é", "\u2028", "\x7f", "\x1f", "\xff"} {
		f.Add(s, "append", 3, int64(5))
	}
	f.Fuzz(func(t *testing.T, typ, op string, seq int, ts int64) {
		checkEventLine(t, Event{Type: typ, Seq: seq, Time: ts, Data: json.RawMessage(`{"turn":1}`), SurfaceOp: op, SourceEventSeqs: []int{seq}})
	})
}

// Appending an event to a log with a store encodes its data once: the
// store frames the line around it (it was encoding the event again, its
// data compacted again: one more allocation, and the checker validated the
// data again).
func TestAppendEncodesTheDataOnce(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation count not checked: the race detector allocates")
	}
	l, err := Dir{Path: t.TempDir(), NoFsync: true}.Create("s", "/")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = l.Close() })
	if _, err := l.Append(TypeTurnStart, TurnStart{Turn: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(TypeStepStart, Step{Turn: 1, Step: 1}); err != nil {
		t.Fatal(err)
	}
	c := AssistantChunk{Turn: 1, Step: 1, Chunk: llm.Chunk{Type: llm.ChunkToolCallDelta, Index: llm.IntPtr(1), ID: "call_1", Name: "todo_write", ArgumentsDelta: llm.StrPtr(`{"todos":[`)}}
	allocs := testing.AllocsPerRun(200, func() {
		if _, err := l.Append(TypeAssistantChunk, c); err != nil {
			t.Fatal(err)
		}
	})
	t.Logf("Append of a chunk: %.0f allocations", allocs)
	if allocs > 5 {
		t.Errorf("Append of a chunk with a store: %.0f allocations, want at most 5", allocs)
	}
}
