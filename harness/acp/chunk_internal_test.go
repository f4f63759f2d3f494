package acp

import (
	"reflect"
	"testing"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
)

// liveChunks are assistant/chunk events as the agent appends them (the
// session log encodes the data), one of every chunk kind, with texts and
// names that need escaping.
func liveChunks(t testing.TB) []session.Event {
	t.Helper()
	idx := llm.IntPtr(1)
	chunks := []llm.Chunk{
		{Type: llm.ChunkBlockStart, Index: idx, BlockType: llm.PartToolCall},
		{Type: llm.ChunkReasoningDelta, Index: llm.IntPtr(0), Text: `think "hard" \ <b>`},
		{Type: llm.ChunkTextDelta, Index: idx, Text: "plain"},
		{Type: llm.ChunkTextDelta, Index: idx, Text: "é😀\u2028\n"},
		{Type: llm.ChunkTextDelta, Index: idx},
		{Type: llm.ChunkToolCallDelta, Index: idx, ID: "call_1", Name: "todo_write", ArgumentsDelta: llm.StrPtr(`{"todos":[{"content":"a \"b\"`)},
		{Type: llm.ChunkBlockEnd, Index: idx, Block: &llm.Part{Type: llm.PartToolCall, ID: "call_1", Name: "todo_write", Arguments: `{"todos":[]}`}},
		{Type: llm.ChunkUsage, Usage: &llm.Usage{InputTokens: 3, OutputTokens: 4}},
		{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: llm.FinishToolCalls}},
		{Type: "a-kind-of-tomorrow", Text: "shown by none"},
	}
	l := session.New("s", "/")
	if _, err := l.Append(session.TypeTurnStart, session.TurnStart{Turn: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(session.TypeStepStart, session.Step{Turn: 1, Step: 1}); err != nil {
		t.Fatal(err)
	}
	var out []session.Event
	for _, c := range chunks {
		e, err := l.Append(session.TypeAssistantChunk, session.AssistantChunk{Turn: 1, Step: 1, Chunk: c})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// A live mapper skips the decoding of a chunk it shows nothing of: what it
// maps is what decoding every chunk whole maps, and liveChunkType reads the
// kind of every chunk the log encodes.
func TestLiveChunksMapAsDecodedWhole(t *testing.T) {
	for _, s := range []surface{surfaceV1, surfaceV2} {
		live, whole := newMapper(nil, false, s), newMapper(nil, false, s)
		for _, e := range liveChunks(t) {
			var d session.AssistantChunk
			if err := e.Decode(&d); err != nil {
				t.Fatal(err)
			}
			if typ, ok := liveChunkType(e.Data); !ok || string(typ) != d.Chunk.Type {
				t.Errorf("liveChunkType(%s) = %q, %v; want %q, true", e.Data, typ, ok, d.Chunk.Type)
			}
			got, err := live.Map(e)
			if err != nil {
				t.Fatal(err)
			}
			want, err := whole.chunkDecoded(e)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: live %v, decoded whole %v", e.Data, got, want)
			}
		}
		if !reflect.DeepEqual(live.streamed, whole.streamed) {
			t.Errorf("streamed: live %v, decoded whole %v", live.streamed, whole.streamed)
		}
	}
}

// What liveChunkType does not recognise is decoded whole.
func TestLiveChunkTypeRefusesOtherData(t *testing.T) {
	for _, data := range []string{
		``, `{}`, `{"step":1,"turn":1,"chunk":{"type":"usage"}}`, `{"turn":1,"step":1,"chunk":{"index":1,"type":"usage"}}`,
		`{"turn":x,"step":1,"chunk":{"type":"usage"}}`, `{"turn":1,"step":,"chunk":{"type":"usage"}}`,
		`{"turn":1,"step":1,"chunk":{"type":"us\u0061ge"}}`, `{"turn":1,"step":1,"chunk":{"type":"usage`,
		`{"turn": 1,"step":1,"chunk":{"type":"usage"}}`,
	} {
		if typ, ok := liveChunkType([]byte(data)); ok {
			t.Errorf("liveChunkType(%s) = %q, true; want false", data, typ)
		}
	}
}

// A live tool-call delta, most of a turn's chunks, costs the mapper no
// allocation (it was decoded whole: 14 allocations).
func TestLiveToolCallDeltaIsNotDecoded(t *testing.T) {
	var delta session.Event
	for _, e := range liveChunks(t) {
		var d session.AssistantChunk
		if err := e.Decode(&d); err != nil {
			t.Fatal(err)
		}
		if d.Chunk.Type == llm.ChunkToolCallDelta {
			delta = e
		}
	}
	m := newMapper(nil, false, surfaceV1)
	if n := testing.AllocsPerRun(100, func() {
		if ups, err := m.Map(delta); err != nil || ups != nil {
			t.Fatalf("Map = %v, %v", ups, err)
		}
	}); n != 0 {
		t.Errorf("mapping a live tool-call delta: %v allocations, want 0", n)
	}
}
