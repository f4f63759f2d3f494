package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/internal/jsonx"
)

// Log is one session's event log. It is safe for concurrent use. Append
// stores a deep copy of the data (it is marshalled on the way in), so later
// mutation by the caller changes nothing.
type Log struct {
	mu     sync.Mutex
	header Header
	// events are the events held in memory: all of them, or, for a log
	// opened from disk, those appended since (the ones before are read from
	// the file when asked for: see disk).
	events   []Event
	disk     *diskPrefix
	count    int // events in all (disk prefix + memory)
	lastSeq  int // seq of the last event, when count > 0
	checker  Checker
	check    bool
	lastTodo *Event // the last todo/write, nil when none
	clock    func() int64
	store    *FileStore
	subs     []subscriber // copy on write: Append reads it without copying
	nextSub  int
	// surface caches the messages DeriveMessages projected from the first
	// surfaceUpTo events, so each model step decodes only new events.
	surface     []llm.Message
	surfaceUpTo int
}

// Option configures a Log.
type Option func(*Log)

// WithInvariants turns invariant checking on Append on or off (on by
// default: the reference harness always runs in checked mode).
func WithInvariants(on bool) Option { return func(l *Log) { l.check = on } }

// WithClock sets the time source, in Unix milliseconds.
func WithClock(now func() int64) Option { return func(l *Log) { l.clock = now } }

// WithStore persists every appended event to s (see Append for when it is
// flushed and synced).
func WithStore(s *FileStore) Option { return func(l *Log) { l.store = s } }

// New returns an empty log for session id.
func New(id, cwd string, opts ...Option) *Log {
	l := newLog(opts)
	l.header = Header{Type: "session", Version: 0, ID: id, CreatedAt: l.clock(), Cwd: cwd}
	return l
}

func newLog(opts []Option) *Log {
	l := &Log{check: true, clock: func() int64 { return time.Now().UnixMilli() }}
	for _, o := range opts {
		o(l)
	}
	return l
}

// Restore rebuilds a log from a loaded header and events, checking the
// invariants (when enabled) so that appends can continue where the log ended.
// The log keeps deep copies: later changes to events change nothing.
func Restore(h Header, events []Event, opts ...Option) (*Log, error) {
	return restore(h, events, nil, true, opts...)
}

// restore is Restore. lines, when non-nil, are the file lines of events and
// name the line of an invariant violation. With clone false the log takes
// ownership of the events' memory (for callers, like Dir.Open, that hand over
// a freshly loaded slice nobody else sees).
func restore(h Header, events []Event, lines []int, clone bool, opts ...Option) (*Log, error) {
	l := newLog(opts)
	l.header = h
	l.events = make([]Event, 0, len(events))
	for i, e := range events {
		if err := l.checker.Check(e); err != nil && l.check {
			var ie *InvariantError
			if errors.As(err, &ie) && i < len(lines) {
				ie.Line = lines[i]
			}
			return nil, fmt.Errorf("restore session %s: %w", h.ID, err)
		}
		if clone {
			e = e.Clone()
		}
		l.events = append(l.events, e)
		l.noteAppended(&l.events[len(l.events)-1])
	}
	return l, nil
}

// noteAppended updates the counters after e became the last event.
func (l *Log) noteAppended(e *Event) {
	l.count++
	l.lastSeq = e.Seq
	if e.Type == TypeTodoWrite {
		c := *e
		l.lastTodo = &c
	}
}

// Header returns the session header.
func (l *Log) Header() Header {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.header
}

// ID returns the session id.
func (l *Log) ID() string { return l.Header().ID }

// Store returns the attached store, or nil.
func (l *Log) Store() *FileStore {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.store
}

// AppendOption sets surface metadata on an appended event.
type AppendOption func(*Event)

// WithSourceEventSeqs records which events a surface event was built from.
func WithSourceEventSeqs(seqs ...int) AppendOption {
	return func(e *Event) { e.SourceEventSeqs = append([]int(nil), seqs...) }
}

// Append adds an event of type typ with data (marshalled to JSON; a
// json.RawMessage is copied as is). Surface types get surfaceOp "append".
// When invariants are on, a violating event is rejected with an
// *InvariantError and nothing is stored.
//
// With a store attached, no subscriber hears of an event before it is on
// disk: events of the durable types (IsDurableType: turn boundaries, user
// and assistant messages, tool/call, tool/result, todo/write) are written
// and fsynced, the others (chunks, step markers) written to the kernel,
// before the subscribers are called (outside the lock). A client that is
// told through a subscription can therefore not be told about an event a
// crash loses; when persisting fails, Append returns the error and tells
// nobody.
func (l *Log) Append(typ string, data any, opts ...AppendOption) (Event, error) {
	raw, compact, err := marshalData(data)
	if err != nil {
		return Event{}, fmt.Errorf("append %s: %w", typ, err)
	}
	l.mu.Lock()
	e := Event{Type: typ, Seq: l.count, Time: l.clock(), Data: raw}
	if surfaceTypes[typ] {
		e.SurfaceOp = SurfaceOpAppend
	}
	for _, o := range opts {
		o(&e)
	}
	if l.count > 0 && e.Seq <= l.lastSeq {
		e.Seq = l.lastSeq + 1
	}
	// raw is valid JSON (marshalData): neither the checker nor the store
	// validates it again.
	if err := l.checker.check(e, true); err != nil && l.check {
		l.mu.Unlock()
		return Event{}, err
	}
	l.events = append(l.events, e)
	l.noteAppended(&l.events[len(l.events)-1])
	var storeErr error
	if l.store != nil {
		storeErr = l.store.writeEvent(e, compact)
		if storeErr == nil {
			switch {
			case durableTypes[typ]:
				storeErr = l.store.Sync()
			case len(l.subs) > 0:
				storeErr = l.store.Flush()
			}
		}
	}
	subs := l.subs
	l.mu.Unlock()
	if storeErr != nil {
		// Nobody is told about an event that is not on disk.
		return e.Clone(), fmt.Errorf("persist %s seq %d: %w", typ, e.Seq, storeErr)
	}
	for _, sub := range subs {
		sub.fn(e.Clone())
	}
	return e.Clone(), nil
}

// durableTypes are the events Append fsyncs before it returns and before
// any subscriber sees them: everything a client is shown as a fact (a tool
// call, its result, the plan) and the turn boundaries.
var durableTypes = map[string]bool{
	TypeTurnStart: true, TypeTurnEnd: true, TypeUserMessage: true,
	TypeAssistantMessage: true, TypeToolCall: true, TypeToolResult: true,
	TypeTodoWrite: true,
}

// IsDurableType reports whether Append fsyncs events of type t before
// notifying subscribers (the others are flushed to the kernel first).
func IsDurableType(t string) bool { return durableTypes[t] }

// Sync flushes and fsyncs the attached store, if any.
func (l *Log) Sync() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.store == nil {
		return nil
	}
	return l.store.Sync()
}

// closeInterrupted closes a turn left open (a killed agent): an error
// tool/result for each unanswered call of the open step, step/end, then
// turn/end {"kind":"interrupted"}. Append only.
func (l *Log) closeInterrupted() ([]string, error) {
	l.mu.Lock()
	turn, step := l.checker.State()
	pending := l.checker.PendingCalls()
	l.mu.Unlock()
	if turn == 0 {
		return nil, nil
	}
	const why = "interrupted: the agent stopped before this turn ended"
	if step != 0 {
		for _, id := range pending {
			if _, err := l.Append(TypeToolResult, ToolResult{Turn: turn, Step: step, CallID: id,
				Content: []llm.Part{{Type: llm.PartText, Text: why}}, IsError: true}); err != nil {
				return nil, fmt.Errorf("close interrupted turn %d: %w", turn, err)
			}
		}
		if _, err := l.Append(TypeStepEnd, Step{Turn: turn, Step: step}); err != nil {
			return nil, fmt.Errorf("close interrupted turn %d: %w", turn, err)
		}
	}
	if _, err := l.Append(TypeTurnEnd, TurnEnd{Turn: turn, Reason: TurnEndReason{Kind: TurnInterrupted, Message: why}}); err != nil {
		return nil, fmt.Errorf("close interrupted turn %d: %w", turn, err)
	}
	return []string{fmt.Sprintf("%s: turn %d was left open (the agent stopped mid-turn): closed it as interrupted", l.header.ID, turn)}, nil
}

// marshalData encodes an event's data: valid JSON, and compact unless it
// was given as a json.RawMessage (kept as it is).
func marshalData(data any) (raw json.RawMessage, compact bool, err error) {
	switch d := data.(type) {
	case nil:
		return json.RawMessage("{}"), true, nil
	case json.RawMessage:
		if !json.Valid(d) {
			return nil, false, fmt.Errorf("data is not valid JSON")
		}
		return append(json.RawMessage(nil), d...), false, nil
	default:
		var buf bytes.Buffer
		if err := encodeJSON(&buf, d); err != nil {
			return nil, false, err
		}
		return json.RawMessage(buf.Bytes()), true, nil
	}
}

// encodeJSON appends the JSON of v to buf the way the original harness's
// JSON.stringify writes it: compact, and without Go's escaping of <, > and &
// (so a todo "fix a < b & c" reads the same in logs from either side).
func encodeJSON(buf *bytes.Buffer, v any) error {
	return jsonx.Write(buf, v)
}

// Subscribe calls fn with a copy of every event appended from now on, in
// order. It returns a function that unsubscribes.
func (l *Log) Subscribe(fn func(Event)) (unsubscribe func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	id := l.nextSub
	l.nextSub++
	l.subs = append(l.subs[:len(l.subs):len(l.subs)], subscriber{id: id, fn: fn})
	return func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		for i, s := range l.subs {
			if s.id == id {
				next := make([]subscriber, 0, len(l.subs)-1)
				next = append(next, l.subs[:i]...)
				l.subs = append(next, l.subs[i+1:]...)
				return
			}
		}
	}
}

type subscriber struct {
	id int
	fn func(Event)
}

// Len returns the number of events.
func (l *Log) Len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.count
}

// Events returns deep copies of all events, in order. For a log opened
// from disk (Dir.Open) that reads the file: use Replay to stream instead,
// and to see a read error (Events returns what it read up to one).
func (l *Log) Events() []Event {
	out := make([]Event, 0, l.Len())
	_ = l.Replay(context.Background(), func(e Event) error {
		out = append(out, e.Clone())
		return nil
	})
	return out
}

// Range calls fn with each event in order until fn returns false. The event
// passed is a shallow view: fn must not modify or retain e.Data. It is
// Replay without a context or an error: a read error of a log opened from
// disk ends the range early.
func (l *Log) Range(fn func(e Event) bool) {
	_ = l.Replay(context.Background(), func(e Event) error {
		if !fn(e) {
			return errStopRange
		}
		return nil
	})
}

var errStopRange = errors.New("stop")

// Replay calls fn with each event in order, streaming: the events a log
// opened from disk (Dir.Open) was loaded with are read back from its file
// one at a time, never all held in memory, then the events appended since
// follow from memory. It stops at the first error fn returns (and returns
// it), on a read error, or when ctx is done. The event passed is a shallow
// view: fn must not modify or retain e.Data. Events appended while Replay
// runs are not included.
func (l *Log) Replay(ctx context.Context, fn func(e Event) error) error {
	l.mu.Lock()
	disk, events := l.disk, l.events
	l.mu.Unlock()
	if disk != nil {
		if err := disk.replay(ctx, fn); err != nil {
			if errors.Is(err, errStopRange) {
				return nil
			}
			return err
		}
	}
	for _, e := range events {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(e); err != nil {
			if errors.Is(err, errStopRange) {
				return nil
			}
			return err
		}
	}
	return nil
}

// diskPrefix is the part of a log opened from disk that is not held in
// memory: the first count events of the file's first size bytes.
type diskPrefix struct {
	path  string
	size  int64
	count int
}

func (d *diskPrefix) replay(ctx context.Context, fn func(Event) error) error {
	f, err := OpenForRead(ctx, d.path)
	if err != nil {
		return fmt.Errorf("replay: %w", err)
	}
	defer f.Close()
	rd := NewReader(io.LimitReader(f.r, d.size), d.path, ReadOptions{})
	for i := 0; i < d.count; i++ {
		e, err := rd.Next(ctx)
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("replay %s: the file ends after %d of the %d events it was opened with", d.path, i, d.count)
		}
		if err != nil {
			return fmt.Errorf("replay: %w", err)
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// CurrentTodos returns the list written by the last todo/write event (last
// write wins) in constant time, and whether there was one.
func (l *Log) CurrentTodos() ([]TodoItem, bool) {
	l.mu.Lock()
	e := l.lastTodo
	l.mu.Unlock()
	if e == nil {
		return nil, false
	}
	return CurrentTodos([]Event{*e})
}

// DeriveMessages returns the model history projected from the surface. The
// projection is cached and extended incrementally, so calling it once per
// model step costs a copy of the history, not a decode of the whole log.
// The returned messages are the caller's to modify.
func (l *Log) DeriveMessages() []llm.Message {
	l.mu.Lock()
	defer l.mu.Unlock()
	base := 0
	if l.disk != nil {
		base = l.disk.count
	}
	for _, e := range l.events[l.surfaceUpTo-base:] {
		if m, ok := surfaceMessage(e); ok {
			l.surface = append(l.surface, m)
		}
	}
	l.surfaceUpTo = l.count
	out := make([]llm.Message, len(l.surface))
	for i, m := range l.surface {
		m.Content = append([]llm.Part(nil), m.Content...)
		out[i] = m
	}
	return out
}

// OpenTurn returns the open turn and step numbers (0 when none) and the
// number of the last turn started.
func (l *Log) OpenTurn() (turn, step, lastTurn int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t, s := l.checker.State()
	return t, s, l.checker.LastTurn()
}

// Close flushes and closes the attached store, if any.
func (l *Log) Close() error {
	l.mu.Lock()
	s := l.store
	l.store = nil
	l.mu.Unlock()
	if s == nil {
		return nil
	}
	return s.Close()
}
