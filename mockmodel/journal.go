package mockmodel

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/internal/textcut"
)

// JournalEntry is one request the mock model received, in canonical form.
type JournalEntry struct {
	// Index is the 0-based position of the request in the journal.
	Index int       `json:"index"`
	Time  time.Time `json:"time"`
	// Path is the HTTP path ("/v1/chat/completions"); empty for the
	// in-process model.
	Path string `json:"path,omitempty"`
	// Wire is the API the request came on: the Name of one of Wires
	// (WireOpenAIChat, ...), or WireInProcess.
	// It is empty only for a request on an unknown endpoint.
	Wire   string `json:"wire,omitempty"`
	Stream bool   `json:"stream"`
	Model  string `json:"model,omitempty"`
	// System is the leading system text of the request.
	System string `json:"system,omitempty"`
	// Messages is the history in canonical form, whatever the wire: tool
	// calls are assistant tool-call parts (Arguments the JSON the agent sent
	// back), tool results are RoleTool messages with ToolCallID and IsError.
	Messages []llm.Message `json:"messages"`
	// ToolErrors says where the IsError of the tool results comes from:
	// ToolErrorsFlag or ToolErrorsPrefix. Empty when the request could not
	// be read.
	ToolErrors string `json:"toolErrors,omitempty"`
	// Tools are the function tools offered, with their JSON Schemas as sent.
	Tools []llm.ToolSpec `json:"tools,omitempty"`
	// Raw is the request body as received; a body that is not JSON is kept
	// as a JSON string. For the in-process model it is the llm.Request as
	// JSON. A body over MaxJournalBody bytes is not kept whole: RawCapped
	// is set and Raw holds its first JournalBodyPrefix bytes as a JSON
	// string.
	Raw json.RawMessage `json:"raw,omitempty"`
	// RawBytes is the size of the body as received, RawSHA256 its SHA-256
	// (hex): they identify a capped body.
	RawBytes  int    `json:"rawBytes,omitempty"`
	RawSHA256 string `json:"rawSha256,omitempty"`
	RawCapped bool   `json:"rawCapped,omitempty"`
	// Capped lists the message texts and arguments cut to MaxJournalText
	// bytes ("messages[2].content[0].text: 20000000 bytes, sha256 …"): a
	// check reading them sees only their beginning.
	Capped []string `json:"capped,omitempty"`
	// TurnIndex is the 0-based script turn that answered, or -1 if none
	// (malformed request, past the end of the script, unknown path, a side
	// request).
	TurnIndex int `json:"turnIndex"`
	// Side marks a side request (no tools offered, Script.SideText set),
	// answered with the side text outside the script.
	Side bool `json:"side,omitempty"`
	// Error says why the request was refused; empty on success.
	Error string `json:"error,omitempty"`
	// Status is the HTTP status answered (for the in-process model: the
	// status the server would have answered).
	Status int `json:"status"`
}

// WireInProcess is the JournalEntry.Wire of the in-process model's
// requests (Model.Stream); each HTTP wire declares its own beside it
// (WireOpenAIChat, ...).
const WireInProcess = "in-process"

// Sources of a tool result's IsError, the values of JournalEntry.ToolErrors.
const (
	// ToolErrorsFlag: the wire carries an explicit error marker, and IsError
	// is that marker: Anthropic tool_result is_error, Gemini a
	// functionResponse whose response has an "error" field, the in-process
	// model's llm.Message.IsError.
	ToolErrorsFlag = "flag"
	// ToolErrorsPrefix: the wire has no error marker (OpenAI chat
	// completions and Responses); IsError means the result text starts with
	// "Error:", which is how the harness words every failed tool result.
	ToolErrorsPrefix = "prefix"
	// ToolErrorPrefix is the text that starts a tool result taken as an
	// error on a wire with no error flag (ToolErrorsPrefix).
	ToolErrorPrefix = errorResultPrefix
)

// Memory bounds of the journal: a long-running `mock serve` fed big
// bodies must not keep them all.
const (
	// MaxJournalBody is the largest request body kept whole in Raw;
	// JournalBodyPrefix is how much of a larger one is kept.
	MaxJournalBody    = 1 << 20
	JournalBodyPrefix = 64 << 10
	// MaxJournalText is the largest message text (or tool-call arguments)
	// kept whole; a longer one keeps its first MaxJournalText bytes.
	MaxJournalText = 1 << 20
	// JournalRingEntries and JournalRingBytes bound the journal: it is a
	// ring that drops its oldest entries beyond either (the newest entry
	// is always kept). Entry sizes are estimated from Raw, the texts and
	// the tool schemas.
	JournalRingEntries = 4096
	JournalRingBytes   = 256 << 20
)

// Journal records requests, the newest JournalRingEntries (and
// JournalRingBytes) of them. It is safe for concurrent use.
type Journal struct {
	mu      sync.Mutex
	entries []JournalEntry
	sizes   []int
	bytes   int
	total   int // entries ever added: the next Index
	failed  int // entries ever added with an Error (dropped ones too)
	tee     io.Writer
	teeErr  error
	// changed is closed at the next add (Changed).
	changed chan struct{}
}

// NewJournal returns an empty journal.
func NewJournal() *Journal { return &Journal{} }

// Tee makes the journal also write every entry added from now on as one
// JSON line to w (for `mock serve --journal`). A write error stops the tee
// and is reported by TeeErr.
func (j *Journal) Tee(w io.Writer) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.tee = w
	j.teeErr = nil
}

// TeeErr returns the first error writing to the Tee writer.
func (j *Journal) TeeErr() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.teeErr
}

// Changed returns a channel closed when the next entry is added: take it,
// then read Entries, then wait on it, and no entry is missed.
func (j *Journal) Changed() <-chan struct{} {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.changed == nil {
		j.changed = make(chan struct{})
	}
	return j.changed
}

// add records e, assigning its Index, and returns the stored copy.
func (j *Journal) add(e JournalEntry) JournalEntry {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.changed != nil {
		close(j.changed)
		j.changed = nil
	}
	e.Index = j.total
	j.total++
	if e.Error != "" {
		j.failed++
	}
	e = capTexts(copyEntry(e))
	size := entrySize(e)
	j.entries = append(j.entries, e)
	j.sizes = append(j.sizes, size)
	j.bytes += size
	drop := 0
	for len(j.entries)-drop > 1 && (len(j.entries)-drop > JournalRingEntries || j.bytes > JournalRingBytes) {
		j.bytes -= j.sizes[drop]
		drop++
	}
	if drop > 0 {
		j.entries = append(j.entries[:0:0], j.entries[drop:]...)
		j.sizes = append(j.sizes[:0:0], j.sizes[drop:]...)
	}
	if j.tee != nil && j.teeErr == nil {
		if err := writeLine(j.tee, e); err != nil {
			j.teeErr = fmt.Errorf("mockmodel: journal tee: %w", err)
		}
	}
	return e
}

// Entries returns a deep copy of the recorded entries, in arrival order.
func (j *Journal) Entries() []JournalEntry {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := make([]JournalEntry, len(j.entries))
	for i, e := range j.entries {
		out[i] = copyEntry(e)
	}
	return out
}

// Len returns the number of requests recorded, those the ring dropped
// included (the Index of the next one).
func (j *Journal) Len() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.total
}

// Dropped returns how many of the oldest entries the ring dropped.
func (j *Journal) Dropped() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.total - len(j.entries)
}

// Last returns the last entry, if any.
func (j *Journal) Last() (JournalEntry, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if len(j.entries) == 0 {
		return JournalEntry{}, false
	}
	return copyEntry(j.entries[len(j.entries)-1]), true
}

// Failed counts the requests ever answered with an error, including any
// the ring has dropped since.
func (j *Journal) Failed() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.failed
}

// Errors returns the entries that were refused (copies of them alone: the
// runner asks after every case, and most entries are answers).
func (j *Journal) Errors() []JournalEntry {
	j.mu.Lock()
	defer j.mu.Unlock()
	var out []JournalEntry
	for _, e := range j.entries {
		if e.Error != "" {
			out = append(out, copyEntry(e))
		}
	}
	return out
}

// WriteJSONL writes every entry as one JSON object per line.
func (j *Journal) WriteJSONL(w io.Writer) error {
	for _, e := range j.Entries() {
		if err := writeLine(w, e); err != nil {
			return fmt.Errorf("mockmodel: write journal: %w", err)
		}
	}
	return nil
}

func writeLine(w io.Writer, e JournalEntry) error {
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func copyEntry(e JournalEntry) JournalEntry {
	e.Raw = append(json.RawMessage(nil), e.Raw...)
	if e.Messages != nil {
		msgs := make([]llm.Message, len(e.Messages))
		for i, m := range e.Messages {
			m.Content = append([]llm.Part(nil), m.Content...)
			msgs[i] = m
		}
		e.Messages = msgs
	}
	if e.Tools != nil {
		tools := make([]llm.ToolSpec, len(e.Tools))
		for i, t := range e.Tools {
			t.Parameters = append(json.RawMessage(nil), t.Parameters...)
			tools[i] = t
		}
		e.Tools = tools
	}
	return e
}

// keptBody is a request body as journaled (see JournalEntry.Raw).
type keptBody struct {
	raw    json.RawMessage
	size   int
	sum    string
	capped bool
}

// rawJSON keeps body as JSON: itself if valid, else as a JSON string; a
// body over MaxJournalBody keeps its first JournalBodyPrefix bytes as a
// JSON string, its size and its hash.
func rawJSON(body []byte) keptBody {
	if len(body) == 0 {
		return keptBody{}
	}
	sum := sha256.Sum256(body)
	k := keptBody{size: len(body), sum: hex.EncodeToString(sum[:])}
	switch {
	case len(body) > MaxJournalBody:
		k.capped = true
		k.raw, _ = json.Marshal(string(textcut.Prefix(body, JournalBodyPrefix)))
	case json.Valid(body):
		k.raw = append(json.RawMessage(nil), body...)
	default:
		k.raw, _ = json.Marshal(string(body))
	}
	return k
}

// capTexts cuts the message texts and arguments of e over MaxJournalText
// bytes, listing each in e.Capped. It changes e's messages in place: pass
// it a copy.
func capTexts(e JournalEntry) JournalEntry {
	cut := func(where string, s *string) {
		if len(*s) <= MaxJournalText {
			return
		}
		sum := sha256.Sum256([]byte(*s))
		e.Capped = append(e.Capped, fmt.Sprintf("%s: %d bytes, sha256 %s, first %d kept", where, len(*s), hex.EncodeToString(sum[:]), MaxJournalText))
		*s = textcut.Prefix(*s, MaxJournalText)
	}
	for i, m := range e.Messages {
		for k := range m.Content {
			where := fmt.Sprintf("messages[%d].content[%d]", i, k)
			cut(where+".text", &m.Content[k].Text)
			cut(where+".arguments", &m.Content[k].Arguments)
		}
	}
	cut("system", &e.System)
	return e
}

// entrySize estimates the memory an entry holds.
func entrySize(e JournalEntry) int {
	n := 256 + len(e.Raw) + len(e.System) + len(e.Error)
	for _, m := range e.Messages {
		for _, p := range m.Content {
			n += 64 + len(p.Text) + len(p.Arguments) + len(p.ID) + len(p.Name)
		}
	}
	for _, t := range e.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	for _, c := range e.Capped {
		n += len(c)
	}
	return n
}
