package session

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/todoharness/todoharness/harness/llm"
)

// Log formats a Reader recognises.
const (
	// FormatRuntime is what the reference harness (and the original at
	// runtime) writes: every event has its seq and time.
	FormatRuntime = "runtime"
	// FormatFixture is the original's committed-fixture format: events
	// without seq/time envelopes (seq is synthesised in file order, time is
	// zero) and packed chunk rows.
	FormatFixture = "committed-fixture"
)

// Packed chunk rows: one line standing for a run of assistant/chunk events
// of one content block. The Reader expands them.
const (
	TypeTextChunks      = "text-chunks"
	TypeReasoningChunks = "reasoning-chunks"
	TypeToolCallChunks  = "tool-call-chunks"
)

var packedTypes = map[string]bool{TypeTextChunks: true, TypeReasoningChunks: true, TypeToolCallChunks: true}

// packedRow is a packed chunk row: texts (or args for tool calls) are the
// chunks in order; dt[i] is the milliseconds between chunk i and chunk i+1
// (len(texts)-1 entries), or between the previous chunk (time0 for the
// first) and chunk i (len(texts) entries). seq0/time0 are the envelope of
// the first chunk, where the row has one.
type packedRow struct {
	Type  string `json:"type"`
	Seq0  *int   `json:"seq0"`
	Time0 int64  `json:"time0"`
	Data  struct {
		Turn  int       `json:"turn"`
		Step  int       `json:"step"`
		Index *int      `json:"index"`
		DT    []int64   `json:"dt"`
		Texts *[]string `json:"texts"`
		Args  *[]string `json:"args"`
		ID    string    `json:"id"`
		Name  string    `json:"name"`
	} `json:"data"`
}

// expandPacked turns a packed row into the assistant/chunk events it
// stands for. seq is the seq of the first chunk when the row has no seq0.
// format is the log's format so far ("" before its first event); the
// format the row implies is returned.
func expandPacked(body []byte, seq int, format string) ([]Event, string, error) {
	var row packedRow
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&row); err != nil {
		return nil, format, fmt.Errorf("%s row: %w", typeOf(body), describeJSONError(err))
	}
	d := row.Data
	var chunks []string
	switch row.Type {
	case TypeToolCallChunks:
		if d.Args == nil {
			return nil, format, fmt.Errorf("%s row: missing field \"data.args\"", row.Type)
		}
		chunks = *d.Args
	default:
		if d.Texts == nil {
			return nil, format, fmt.Errorf("%s row: missing field \"data.texts\"", row.Type)
		}
		chunks = *d.Texts
	}
	if d.Index == nil {
		return nil, format, fmt.Errorf("%s row: missing field \"data.index\"", row.Type)
	}
	if len(chunks) == 0 {
		return nil, format, fmt.Errorf("%s row: no chunks", row.Type)
	}
	if n := len(d.DT); n != 0 && n != len(chunks)-1 && n != len(chunks) {
		return nil, format, fmt.Errorf("%s row: field \"data.dt\" has %d entries for %d chunks (want %d or %d)", row.Type, n, len(chunks), len(chunks)-1, len(chunks))
	}
	if format == "" {
		format = FormatFixture
		if row.Seq0 != nil {
			format = FormatRuntime
		}
	}
	if row.Seq0 != nil {
		if format != FormatRuntime {
			return nil, format, fmt.Errorf("%s row: seq0 in a log whose events have no seq", row.Type)
		}
		seq = *row.Seq0
	} else if format == FormatRuntime {
		return nil, format, fmt.Errorf("%s row: missing field \"seq0\" (the log's events have seq)", row.Type)
	}
	out := make([]Event, len(chunks))
	t := row.Time0
	var buf bytes.Buffer
	for i, text := range chunks {
		switch {
		case len(d.DT) == len(chunks):
			t += d.DT[i]
		case i > 0 && len(d.DT) > 0:
			t += d.DT[i-1]
		}
		c := llm.Chunk{Index: llm.IntPtr(*d.Index)}
		switch row.Type {
		case TypeTextChunks:
			c.Type, c.Text = llm.ChunkTextDelta, text
		case TypeReasoningChunks:
			c.Type, c.Text = llm.ChunkReasoningDelta, text
		case TypeToolCallChunks:
			arg := text
			c.Type, c.ID, c.Name, c.ArgumentsDelta = llm.ChunkToolCallDelta, d.ID, d.Name, &arg
		}
		buf.Reset()
		if err := encodeJSON(&buf, AssistantChunk{Turn: d.Turn, Step: d.Step, Chunk: c}); err != nil {
			return nil, format, fmt.Errorf("%s row: %w", row.Type, err)
		}
		out[i] = Event{Type: TypeAssistantChunk, Seq: seq + i, Time: t, Data: append(json.RawMessage(nil), buf.Bytes()...)}
	}
	return out, format, nil
}

// typeOf returns the "type" of an event line, or "" (cheap, for messages).
func typeOf(body []byte) string {
	it := fields{data: body}
	for {
		key, val, ok := it.next()
		if !ok {
			return ""
		}
		if string(key) == "type" {
			if s, ok := plainString(val); ok {
				return string(s)
			}
			return ""
		}
	}
}
