package session

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
	"unicode/utf8"
)

// DefaultMaxLineBytes is the longest line a session log reader accepts
// (64 MiB, newline excluded). A longer line is a *LineError wrapping
// ErrLineTooLong that names the limit; the reader never holds more than the
// limit of one line in memory, so a log with no newline at all (a FIFO fed
// from /dev/zero) fails instead of growing without bound.
const DefaultMaxLineBytes = 64 << 20

// ErrLineTooLong is wrapped by the *LineError of a line over the limit.
var ErrLineTooLong = errors.New("line too long")

// utf8BOM is the byte order mark some editors put at the start of a file.
const utf8BOM = "\xef\xbb\xbf"

// ReadOptions configures a Reader. The zero value uses the defaults.
type ReadOptions struct {
	// MaxLineBytes caps one line (0: DefaultMaxLineBytes).
	MaxLineBytes int
}

// Reader streams a session log: the header, then one event at a time, in
// memory bounded by the longest line (plus what the caller keeps). The
// rules, which every reader of this package shares:
//
//   - line 1 is the session header; a UTF-8 byte order mark before it is
//     skipped with a warning;
//   - blank lines are skipped (they still count as lines);
//   - a line must be valid UTF-8 and decode as an event ({type, seq, time,
//     data, ...}); otherwise it is a *LineError naming file:line;
//   - the only exception is a torn line: the last line of the input, with no
//     trailing newline, that does not decode. It is what a crash mid-write
//     leaves behind; it is dropped with a warning (and Torn reports it);
//   - a line longer than the limit is a *LineError wrapping ErrLineTooLong;
//   - reading stops with the context's error when it is cancelled.
//
// A Reader never writes: reading a log does not modify it.
type Reader struct {
	br       *bufio.Reader
	name     string
	max      int
	long     []byte
	lineNo   int
	header   *Header
	warnings []string
	err      error // sticky
	// lastLine is the line of the last event returned.
	lastLine  int
	validSize int64
	needsNL   bool
	torn      bool
	tornSize  int64
	// format is decided by the first event; nextSeq is the seq the next
	// event of a committed-fixture log gets.
	format     string
	formatLine int
	nextSeq    int
	switched   bool       // a committed-fixture log went on with seq envelopes
	run        *packedRun // the rest of a packed row being expanded
	runLine    int
}

// Format returns the log's format (FormatRuntime or FormatFixture), decided
// by its first event ("" before it). A committed-fixture log that this
// package appended to (its later events carry seq, continuing the
// synthesised numbering) reports FormatFixture.
func (r *Reader) Format() string {
	if r.switched {
		return FormatFixture
	}
	return r.format
}

// NewReader returns a Reader of r; name is the file name used in errors.
func NewReader(r io.Reader, name string, opts ReadOptions) *Reader {
	size := int64(-1)
	if lr, ok := r.(*io.LimitedReader); ok {
		size = lr.N // a log's replay reads the file's valid size
	}
	return newReader(r, name, opts, size)
}

// newReader is NewReader of a log of size bytes (-1: unknown).
func newReader(r io.Reader, name string, opts ReadOptions, size int64) *Reader {
	max := opts.MaxLineBytes
	if max <= 0 {
		max = DefaultMaxLineBytes
	}
	return &Reader{br: bufio.NewReaderSize(r, readBufSize(size)), name: name, max: max}
}

// readBufSize is the buffer of a Reader of a log of size bytes (-1:
// unknown): 256 KiB (a log of a million events reads fastest so), or less
// for a smaller log (most are a few KiB, and a case's agent reads its own
// once or twice).
func readBufSize(size int64) int {
	const most = 256 << 10
	if size >= 0 && size < most {
		return max(int(size)+1, 4<<10)
	}
	return most
}

// Name returns the file name used in errors.
func (r *Reader) Name() string { return r.name }

// Warnings returns what was noticed so far that lost nothing fully written
// (a skipped byte order mark, a dropped torn last line, a last line without
// its newline).
func (r *Reader) Warnings() []string { return r.warnings }

// Line returns the 1-based file line of the event Next returned last.
func (r *Reader) Line() int { return r.lastLine }

// ValidSize is the byte length of the well-formed prefix read so far: after
// Next returned io.EOF, the size of the file without a torn last line.
func (r *Reader) ValidSize() int64 { return r.validSize }

// NeedsNewline reports, after io.EOF, that the last kept line has no
// trailing newline.
func (r *Reader) NeedsNewline() bool { return r.needsNL }

// Torn reports, after io.EOF, whether a torn last line was dropped.
func (r *Reader) Torn() bool { return r.torn }

// Header reads (once) and returns the session header on line 1.
func (r *Reader) Header(ctx context.Context) (Header, error) {
	if r.header != nil {
		return *r.header, nil
	}
	if r.err != nil {
		return Header{}, r.err
	}
	for {
		line, complete, err := r.readLine(ctx)
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = &LineError{File: r.name, Line: 1, Err: errors.New("missing session header (empty file)"), ID: "LOG-HEADER"}
			}
			r.err = err
			return Header{}, err
		}
		raw := len(line)
		if r.lineNo == 1 && bytes.HasPrefix(line, []byte(utf8BOM)) {
			r.warnings = append(r.warnings, fmt.Sprintf("%s:1: skipped a UTF-8 byte order mark before the session header", r.name))
			line = line[len(utf8BOM):]
		}
		body := bytes.TrimSpace(line)
		if len(body) == 0 {
			r.keep(raw, complete)
			continue
		}
		h, perr := parseHeader(body)
		if perr != nil {
			r.err = &LineError{File: r.name, Line: r.lineNo, Err: perr, ID: "LOG-HEADER"}
			return Header{}, r.err
		}
		r.keep(raw, complete)
		r.header = &h
		return h, nil
	}
}

// Next returns the next event, or io.EOF after the last one. It reads the
// header first if Header was not called.
func (r *Reader) Next(ctx context.Context) (Event, error) {
	if r.header == nil {
		if _, err := r.Header(ctx); err != nil {
			return Event{}, err
		}
	}
	if r.err != nil {
		return Event{}, r.err
	}
	if r.run.left() {
		e, err := r.run.next()
		if err != nil {
			r.err = &LineError{File: r.name, Line: r.runLine, Err: err, ID: "LOG-FORMAT"}
			return Event{}, r.err
		}
		r.lastLine = r.runLine
		return e, nil
	}
	r.run = nil
	for {
		line, complete, err := r.readLine(ctx)
		if err != nil {
			r.err = err
			return Event{}, err
		}
		body := bytes.TrimSpace(line)
		if len(body) == 0 {
			r.keep(len(line), complete)
			continue
		}
		ev, perr := r.parse(body)
		if perr != nil {
			if !complete {
				// The last line, cut off mid-write: torn.
				r.torn, r.tornSize = true, int64(len(line))
				r.warnings = append(r.warnings, fmt.Sprintf("%s:%d: dropped torn last line (no trailing newline): %v", r.name, r.lineNo, perr))
				r.err = io.EOF
				return Event{}, io.EOF
			}
			r.err = &LineError{File: r.name, Line: r.lineNo, Err: perr, ID: ruleOf(perr)}
			return Event{}, r.err
		}
		r.keep(len(line), complete)
		if !complete {
			r.warnings = append(r.warnings, fmt.Sprintf("%s:%d: last line has no trailing newline", r.name, r.lineNo))
		}
		r.lastLine = r.lineNo
		if r.run != nil {
			r.runLine = r.lineNo
			for _, w := range r.run.warnings() {
				r.warnings = append(r.warnings, fmt.Sprintf("%s:%d: %s", r.name, r.lineNo, w))
			}
			return r.Next(ctx)
		}
		return ev, nil
	}
}

// parse decodes one event line, deciding the log's format on its first
// event and synthesising seq in a committed-fixture log. A packed chunk row
// becomes r.run, whose events Next gives one at a time (the Event returned
// is then empty).
func (r *Reader) parse(body []byte) (Event, error) {
	e, err := parseEvent(body)
	if err != nil {
		return Event{}, err
	}
	if packedTypes[e.Type] {
		run, format, err := expandPacked(body, r.nextSeq, r.format)
		if err != nil {
			return Event{}, ruleError{"LOG-FORMAT", err}
		}
		r.setFormat(format)
		r.nextSeq = run.lastSeq() + 1
		r.run = run
		return Event{}, nil
	}
	hasSeq := e.Seq != noNum
	if r.format == "" {
		if hasSeq {
			r.setFormat(FormatRuntime)
		} else {
			r.setFormat(FormatFixture)
		}
	}
	switch {
	case r.format == FormatRuntime && !hasSeq:
		return Event{}, ruleError{"LOG-FORMAT", fmt.Errorf("event: missing field \"seq\" (the log's first event, line %d, has one)", r.formatLine)}
	case r.format == FormatFixture && hasSeq && e.Seq == r.nextSeq && !r.switched:
		// Events appended to a committed-fixture log by this package's
		// writer: they carry seq, continuing the synthesised numbering. From
		// here on every event must have one.
		r.format, r.formatLine, r.switched = FormatRuntime, r.lineNo, true
	case r.format == FormatFixture && hasSeq:
		return Event{}, ruleError{"LOG-FORMAT", fmt.Errorf("event: field \"seq\" %d in a log whose first event (line %d) has none (only seq %d, continuing its numbering, may start seq envelopes)", e.Seq, r.formatLine, r.nextSeq)}
	case r.format == FormatFixture:
		e.Seq = r.nextSeq
	}
	r.nextSeq = e.Seq + 1
	return e, nil
}

func (r *Reader) setFormat(f string) {
	if r.format == "" {
		r.format, r.formatLine = f, r.lineNo
	}
}

func (r *Reader) keep(n int, complete bool) {
	r.validSize += int64(n)
	r.needsNL = !complete
}

// readLine returns the next line (with its newline, if any) and whether it
// had one. The slice is valid until the next call. At the end of the input
// it returns io.EOF.
func (r *Reader) readLine(ctx context.Context) ([]byte, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, fmt.Errorf("read %s: %w", r.name, err)
	}
	line, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		r.long = append(r.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(r.long) > r.max+1 {
				return nil, false, &LineError{File: r.name, Line: r.lineNo + 1, ID: "LOG-LINE",
					Err: fmt.Errorf("%w: longer than the limit of %d bytes (session.ReadOptions.MaxLineBytes)", ErrLineTooLong, r.max)}
			}
			if cerr := ctx.Err(); cerr != nil {
				return nil, false, fmt.Errorf("read %s: %w", r.name, cerr)
			}
			line, err = r.br.ReadSlice('\n')
			r.long = append(r.long, line...)
		}
		line = r.long
	}
	if err != nil && !errors.Is(err, io.EOF) {
		if cerr := ctx.Err(); cerr != nil {
			return nil, false, fmt.Errorf("read %s: %w", r.name, cerr)
		}
		return nil, false, fmt.Errorf("read %s: %w", r.name, err)
	}
	if len(line) == 0 {
		return nil, false, io.EOF
	}
	r.lineNo++
	complete := line[len(line)-1] == '\n'
	n := len(line)
	if complete {
		n--
	}
	if n > r.max {
		return nil, false, &LineError{File: r.name, Line: r.lineNo, ID: "LOG-LINE",
			Err: fmt.Errorf("%w: %d bytes, over the limit of %d bytes (session.ReadOptions.MaxLineBytes)", ErrLineTooLong, n, r.max)}
	}
	return line, complete, nil
}

// ctxReader makes a blocking read stop when ctx is done: for a file the
// poller handles (a pipe, a FIFO), an expired read deadline wakes it.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := c.r.Read(p)
	if err != nil && errors.Is(err, os.ErrDeadlineExceeded) && c.ctx.Err() != nil {
		return n, c.ctx.Err()
	}
	return n, err
}

// ReadFile is a session log file opened for reading only (OpenForRead).
type ReadFile struct {
	f    *os.File
	r    io.Reader
	stop func() bool
	path string
}

// OpenForRead opens a session log for reading only. It does not wait for a
// writer when path is a FIFO, and reads through it stop with ctx's error
// once ctx is done, even a read blocked on a silent pipe. Close it when done.
func OpenForRead(ctx context.Context, path string) (*ReadFile, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, fmt.Errorf("open session log: %w", err)
	}
	stop := context.AfterFunc(ctx, func() { _ = f.SetReadDeadline(time.Unix(1, 0)) })
	return &ReadFile{f: f, r: ctxReader{ctx: ctx, r: f}, stop: stop, path: path}, nil
}

// Reader returns a streaming reader of the file, named by its path.
func (f *ReadFile) Reader(opts ReadOptions) *Reader { return NewReader(f.r, f.path, opts) }

// Close closes the file.
func (f *ReadFile) Close() error {
	f.stop()
	return f.f.Close()
}

// Loaded is a session log read from disk into memory.
type Loaded struct {
	Header Header
	Events []Event
	// Lines[i] is the 1-based file line of Events[i].
	Lines []int
	// Warnings are problems that lost nothing that was fully written, such
	// as a torn last line that was dropped.
	Warnings []string
	// ValidSize is the byte length of the well-formed prefix of the file.
	ValidSize int64
	// NeedsNewline is set when the last kept line has no trailing newline.
	NeedsNewline bool
}

// LineError is a malformed line in a session log.
type LineError struct {
	File string
	Line int
	Err  error
	// ID names the invariant the line breaks (see Invariants).
	ID string
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// LoadFile reads a whole session log file; it is LoadFileContext without
// cancellation.
func LoadFile(path string) (*Loaded, error) {
	return LoadFileContext(context.Background(), path)
}

// LoadFileContext reads a whole session log file into memory (see Reader
// for the rules; ReadFileEvents streams instead). It never modifies the file.
func LoadFileContext(ctx context.Context, path string) (*Loaded, error) {
	f, err := OpenForRead(ctx, path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadContext(ctx, f.r, path)
}

// Read parses a whole session log; it is ReadContext without cancellation.
func Read(r io.Reader, name string) (*Loaded, error) {
	return ReadContext(context.Background(), r, name)
}

// ReadContext parses a whole session log into memory. name is used in error
// messages. See Reader for the rules. It does not check the invariants: see
// CheckEvents and Restore.
func ReadContext(ctx context.Context, r io.Reader, name string) (*Loaded, error) {
	rd := NewReader(r, name, ReadOptions{})
	h, err := rd.Header(ctx)
	if err != nil {
		return nil, err
	}
	out := &Loaded{Header: h}
	for {
		e, err := rd.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		out.Events = append(out.Events, e)
		out.Lines = append(out.Lines, rd.Line())
	}
	out.Warnings = rd.Warnings()
	out.ValidSize = rd.ValidSize()
	out.NeedsNewline = rd.NeedsNewline()
	return out, nil
}

func parseHeader(body []byte) (Header, error) {
	var h Header
	if !utf8.Valid(body) {
		return h, fmt.Errorf("session header: %s", invalidUTF8(body))
	}
	if err := json.Unmarshal(body, &h); err != nil {
		return h, fmt.Errorf("session header: %w", describeJSONError(err))
	}
	if h.Type != "session" {
		return h, fmt.Errorf("session header: type is %q, want \"session\"", h.Type)
	}
	if h.ID == "" {
		return h, errors.New("session header: missing field \"id\"")
	}
	return h, nil
}

// rawEvent is an event line as parsed. An absent seq keeps noNum (and
// parseEvent returns it so: Reader.parse decides); the line
// buffer is reused, so every field must copy what it keeps (RawMessage does).
type rawEvent struct {
	Type            internedName    `json:"type"`
	Seq             int             `json:"seq"`
	Time            int64           `json:"time"`
	Data            json.RawMessage `json:"data"`
	SourceEventSeqs []int           `json:"sourceEventSeqs"`
	SurfaceOp       internedName    `json:"surfaceOp"`
}

func parseEvent(body []byte) (Event, error) {
	if !utf8.Valid(body) {
		return Event{}, errors.New(invalidUTF8(body))
	}
	re := rawEvent{Seq: noNum}
	if !fastRawEvent(body, &re) {
		re = rawEvent{Seq: noNum}
		if err := json.Unmarshal(body, &re); err != nil {
			return Event{}, describeJSONError(err)
		}
	}
	if re.Type == "" {
		return Event{}, ruleError{"LOG-TYPE", errors.New("event: missing field \"type\"")}
	}
	if len(re.Data) == 0 {
		re.Data = json.RawMessage("{}")
	}
	return Event{
		Type: string(re.Type), Seq: re.Seq, Time: re.Time, Data: re.Data,
		SourceEventSeqs: re.SourceEventSeqs, SurfaceOp: string(re.SurfaceOp),
	}, nil
}

// ruleError is a line error that breaks a rule other than LOG-LINE.
type ruleError struct {
	id  string
	err error
}

func (e ruleError) Error() string { return e.err.Error() }
func (e ruleError) Unwrap() error { return e.err }

func ruleOf(err error) string {
	var re ruleError
	if errors.As(err, &re) {
		return re.id
	}
	return "LOG-LINE"
}

func invalidUTF8(b []byte) string {
	off := 0
	for off < len(b) {
		r, n := utf8.DecodeRune(b[off:])
		if r == utf8.RuneError && n <= 1 {
			break
		}
		off += n
	}
	return fmt.Sprintf("invalid UTF-8 at byte %d of the line (the log must be UTF-8; nothing was replaced)", off+1)
}

// describeJSONError names the field of a type mismatch ("field time:
// number 1796113208218.5 is not a int64") instead of encoding/json's Go
// struct names.
func describeJSONError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("field %q: %s (at byte %d) is not a valid %s", te.Field, te.Value, te.Offset, te.Type)
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return fmt.Errorf("invalid JSON: %w (at byte %d)", err, se.Offset)
	}
	return fmt.Errorf("invalid JSON: %w", err)
}
