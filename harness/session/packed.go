package session

import (
	"bytes"
	"encoding/json"
	"errors"
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

// MaxPackedChunks caps the entries of one packed chunk row (its texts or
// args, and its dt): a row with more is refused, naming the file, line and
// field, before more than that many are decoded. Together with the line
// limit and the row's lazy expansion (one event made per Next) it keeps a
// Reader's memory bounded by the longest line, whatever a row claims.
const MaxPackedChunks = 1 << 20

// MaxChunkGap is the largest dt a packed row's entry may have without a
// warning (one hour, in milliseconds); a negative dt is warned about too.
const MaxChunkGap = 3_600_000

// The arrays of a packed row, decoded entry by entry up to
// MaxPackedChunks: the error of an entry names its field.
type (
	textsField []string
	argsField  []string
	dtField    []int64
)

func (c *textsField) UnmarshalJSON(b []byte) error {
	return decodeCapped(b, "data.texts", (*[]string)(c))
}
func (c *argsField) UnmarshalJSON(b []byte) error {
	return decodeCapped(b, "data.args", (*[]string)(c))
}
func (c *dtField) UnmarshalJSON(b []byte) error { return decodeCapped(b, "data.dt", (*[]int64)(c)) }

// ErrTooManyChunks is wrapped by the error of a packed row with more than
// MaxPackedChunks entries in a field.
var ErrTooManyChunks = fmt.Errorf("more entries than the limit of a packed row (%d)", MaxPackedChunks)

// rowFieldError is an error in one field of a packed row.
type rowFieldError struct {
	field string
	err   error
}

func (e *rowFieldError) Error() string { return fmt.Sprintf("field %q: %v", e.field, e.err) }
func (e *rowFieldError) Unwrap() error { return e.err }

// decodeCapped decodes the JSON array b into out entry by entry, refusing
// the entry after the MaxPackedChunks-th before decoding it.
func decodeCapped[T any](b []byte, field string, out *[]T) error {
	if string(bytes.TrimSpace(b)) == "null" {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil {
		return &rowFieldError{field, err}
	} else if d, ok := t.(json.Delim); !ok || d != '[' {
		return &rowFieldError{field, errors.New("not an array")}
	}
	for n := 0; dec.More(); n++ {
		if n == MaxPackedChunks {
			return &rowFieldError{field, ErrTooManyChunks}
		}
		var v T
		if err := dec.Decode(&v); err != nil {
			return &rowFieldError{fmt.Sprintf("%s[%d]", field, n), err}
		}
		*out = append(*out, v)
	}
	if _, err := dec.Token(); err != nil {
		return &rowFieldError{field, err}
	}
	return nil
}

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
		Turn  int         `json:"turn"`
		Step  int         `json:"step"`
		Index *int        `json:"index"`
		DT    dtField     `json:"dt"`
		Texts *textsField `json:"texts"`
		Args  *argsField  `json:"args"`
		ID    string      `json:"id"`
		Name  string      `json:"name"`
	} `json:"data"`
}

// packedRun is a packed row being expanded: next makes its events one at
// a time, so a long row costs its decoded entries, not an event each.
type packedRun struct {
	row    packedRow
	chunks []string
	seq    int
	t      int64
	i      int
	buf    bytes.Buffer
}

// left reports whether the run has events to give.
func (p *packedRun) left() bool { return p != nil && p.i < len(p.chunks) }

// next makes the run's next event.
func (p *packedRun) next() (Event, error) {
	i, d := p.i, &p.row.Data
	p.i++
	switch {
	case len(d.DT) == len(p.chunks):
		p.t += d.DT[i]
	case i > 0 && len(d.DT) > 0:
		p.t += d.DT[i-1]
	}
	text := p.chunks[i]
	p.chunks[i] = "" // given out: let it go
	c := llm.Chunk{Index: llm.IntPtr(*d.Index)}
	switch p.row.Type {
	case TypeTextChunks:
		c.Type, c.Text = llm.ChunkTextDelta, text
	case TypeReasoningChunks:
		c.Type, c.Text = llm.ChunkReasoningDelta, text
	case TypeToolCallChunks:
		arg := text
		c.Type, c.ID, c.Name, c.ArgumentsDelta = llm.ChunkToolCallDelta, d.ID, d.Name, &arg
	}
	p.buf.Reset()
	if err := encodeJSON(&p.buf, AssistantChunk{Turn: d.Turn, Step: d.Step, Chunk: c}); err != nil {
		return Event{}, fmt.Errorf("%s row: %w", p.row.Type, err)
	}
	return Event{Type: TypeAssistantChunk, Seq: p.seq + i, Time: p.t, Data: append(json.RawMessage(nil), p.buf.Bytes()...)}, nil
}

// lastSeq is the seq of the run's last event.
func (p *packedRun) lastSeq() int { return p.seq + len(p.chunks) - 1 }

// warnings says what in the row's dt is implausible: a negative gap, or
// one over MaxChunkGap (the first of each, with how many).
func (p *packedRun) warnings() []string {
	var out []string
	for _, w := range []struct {
		what string
		bad  func(int64) bool
	}{
		{"negative", func(n int64) bool { return n < 0 }},
		{fmt.Sprintf("over %d ms (an hour) between two chunks", MaxChunkGap), func(n int64) bool { return n > MaxChunkGap }},
	} {
		first, n := -1, 0
		for i, x := range p.row.Data.DT {
			if w.bad(x) {
				if first < 0 {
					first = i
				}
				n++
			}
		}
		if first >= 0 {
			out = append(out, fmt.Sprintf("%s row: field \"data.dt[%d]\" is %d: %s (%d such entries; the chunks' times are kept as written)",
				p.row.Type, first, p.row.Data.DT[first], w.what, n))
		}
	}
	return out
}

// expandPacked reads a packed row into the run of assistant/chunk events
// it stands for. seq is the seq of the first chunk when the row has no
// seq0. format is the log's format so far ("" before its first event);
// the format the row implies is returned.
func expandPacked(body []byte, seq int, format string) (*packedRun, string, error) {
	p := &packedRun{}
	row := &p.row
	// Unmarshal, not a Decoder: no copy of a long line.
	if err := json.Unmarshal(body, row); err != nil {
		var fe *rowFieldError
		if errors.As(err, &fe) {
			return nil, format, fmt.Errorf("%s row: %w", typeOf(body), fe)
		}
		return nil, format, fmt.Errorf("%s row: %w", typeOf(body), describeJSONError(err))
	}
	d := &row.Data
	switch row.Type {
	case TypeToolCallChunks:
		if d.Args == nil {
			return nil, format, fmt.Errorf("%s row: missing field \"data.args\"", row.Type)
		}
		p.chunks = *d.Args
	default:
		if d.Texts == nil {
			return nil, format, fmt.Errorf("%s row: missing field \"data.texts\"", row.Type)
		}
		p.chunks = *d.Texts
	}
	d.Texts, d.Args = nil, nil
	if d.Index == nil {
		return nil, format, fmt.Errorf("%s row: missing field \"data.index\"", row.Type)
	}
	if len(p.chunks) == 0 {
		return nil, format, fmt.Errorf("%s row: no chunks", row.Type)
	}
	if n := len(d.DT); n != 0 && n != len(p.chunks)-1 && n != len(p.chunks) {
		return nil, format, fmt.Errorf("%s row: field \"data.dt\" has %d entries for %d chunks (want %d or %d)", row.Type, n, len(p.chunks), len(p.chunks)-1, len(p.chunks))
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
	p.seq, p.t = seq, row.Time0
	return p, format, nil
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
