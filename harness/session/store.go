package session

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// FileStore appends a session's events to a JSONL file: the header on line 1,
// one event per line after it. It is not safe for concurrent use (the Log
// serialises its writes). Writes are buffered; Flush writes them out and
// syncs the file (the Log flushes at every turn end).
type FileStore struct {
	path string
	f    *os.File
	w    *bufio.Writer
	buf  bytes.Buffer // one encoded line
}

// CreateFile creates (or truncates) path and writes the header line.
func CreateFile(path string, h Header) (*FileStore, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create session log %s: %w", path, err)
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("create session log: %w", err)
	}
	s := &FileStore{path: path, f: f, w: bufio.NewWriterSize(f, 64<<10)}
	if err := encodeJSON(&s.buf, h); err != nil {
		f.Close()
		return nil, fmt.Errorf("create session log %s: header: %w", path, err)
	}
	s.buf.WriteByte('\n')
	if _, err := s.w.Write(s.buf.Bytes()); err != nil {
		f.Close()
		return nil, fmt.Errorf("create session log %s: %w", path, err)
	}
	if err := s.Flush(); err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

// AppendFile opens an existing log, as loaded by LoadFile, for appending.
// Anything after its well-formed prefix, such as a torn last line, is cut off
// so that new events start on a line of their own.
func AppendFile(path string, l *Loaded) (*FileStore, error) {
	validSize := l.ValidSize
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("open session log for append: %w", err)
	}
	if err := f.Truncate(validSize); err != nil {
		f.Close()
		return nil, fmt.Errorf("open session log %s: truncate torn tail: %w", path, err)
	}
	if _, err := f.Seek(validSize, io.SeekStart); err != nil {
		f.Close()
		return nil, fmt.Errorf("open session log %s: %w", path, err)
	}
	s := &FileStore{path: path, f: f, w: bufio.NewWriterSize(f, 64<<10)}
	if l.NeedsNewline {
		if err := s.w.WriteByte('\n'); err != nil {
			f.Close()
			return nil, fmt.Errorf("open session log %s: %w", path, err)
		}
	}
	return s, nil
}

// Path returns the file path.
func (s *FileStore) Path() string { return s.path }

// Write buffers one event line.
func (s *FileStore) Write(e Event) error {
	s.buf.Reset()
	if err := encodeJSON(&s.buf, e); err != nil {
		return fmt.Errorf("write %s: event seq %d: %w", s.path, e.Seq, err)
	}
	s.buf.WriteByte('\n')
	if _, err := s.w.Write(s.buf.Bytes()); err != nil {
		return fmt.Errorf("write %s: %w", s.path, err)
	}
	return nil
}

// Flush writes buffered lines to the file and syncs it.
func (s *FileStore) Flush() error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("flush %s: %w", s.path, err)
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", s.path, err)
	}
	return nil
}

// Close flushes and closes the file.
func (s *FileStore) Close() error {
	ferr := s.Flush()
	cerr := s.f.Close()
	return errors.Join(ferr, cerr)
}

// Loaded is a session log read from disk.
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
}

func (e *LineError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *LineError) Unwrap() error { return e.Err }

// LoadFile reads a session log file. See Read.
func LoadFile(path string) (*Loaded, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load session log: %w", err)
	}
	defer f.Close()
	return Read(f, path)
}

// Read parses a session log. name is used in error messages. A torn last
// line (one that does not parse, at the end of the input) is dropped with a
// warning; a malformed line anywhere else is a *LineError naming the line.
// Read does not check the invariants: see CheckEvents and Restore.
func Read(r io.Reader, name string) (*Loaded, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	out := &Loaded{}
	lineNo := 0
	var pendingErr *LineError // a bad line: fatal unless it is the last one
	var long []byte           // holds a line longer than br's buffer
	for {
		line, err := br.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long = append(long[:0], line...)
			for err == bufio.ErrBufferFull {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("read %s: %w", name, err)
		}
		if len(line) == 0 {
			break
		}
		lineNo++
		if pendingErr != nil {
			return nil, pendingErr
		}
		complete := line[len(line)-1] == '\n'
		body := bytes.TrimSpace(line)
		if len(body) > 0 {
			if perr := parseLine(out, body, lineNo); perr != nil {
				pendingErr = &LineError{File: name, Line: lineNo, Err: perr}
				continue
			}
		}
		out.ValidSize += int64(len(line))
		out.NeedsNewline = !complete
		if err == io.EOF {
			break
		}
	}
	if pendingErr != nil {
		if pendingErr.Line == 1 {
			return nil, pendingErr
		}
		out.Warnings = append(out.Warnings, fmt.Sprintf("%s:%d: dropped torn last line: %v", name, pendingErr.Line, pendingErr.Err))
	}
	if out.Header.Type == "" {
		return nil, &LineError{File: name, Line: 1, Err: errors.New("missing session header (empty file)")}
	}
	if out.NeedsNewline {
		out.Warnings = append(out.Warnings, fmt.Sprintf("%s:%d: last line has no trailing newline", name, lineNo))
	}
	return out, nil
}

// rawEvent is an event line as parsed. An absent seq keeps noNum; the line
// buffer is reused, so every field must copy what it keeps (RawMessage does).
type rawEvent struct {
	Type            internedName    `json:"type"`
	Seq             int             `json:"seq"`
	Time            int64           `json:"time"`
	Data            json.RawMessage `json:"data"`
	SourceEventSeqs []int           `json:"sourceEventSeqs"`
	SurfaceOp       internedName    `json:"surfaceOp"`
}

func parseLine(out *Loaded, body []byte, lineNo int) error {
	if out.Header.Type == "" {
		var h Header
		if err := json.Unmarshal(body, &h); err != nil {
			return fmt.Errorf("session header: invalid JSON: %w", err)
		}
		if h.Type != "session" {
			return fmt.Errorf("session header: type is %q, want \"session\"", h.Type)
		}
		if h.ID == "" {
			return errors.New("session header: missing field \"id\"")
		}
		out.Header = h
		return nil
	}
	re := rawEvent{Seq: noNum}
	if !fastRawEvent(body, &re) {
		re = rawEvent{Seq: noNum}
		if err := json.Unmarshal(body, &re); err != nil {
			return fmt.Errorf("invalid JSON: %w", err)
		}
	}
	if re.Type == "" {
		return errors.New("event: missing field \"type\"")
	}
	if re.Seq == noNum {
		return errors.New("event: missing field \"seq\"")
	}
	if len(re.Data) == 0 {
		re.Data = json.RawMessage("{}")
	}
	out.Events = append(out.Events, Event{
		Type: string(re.Type), Seq: re.Seq, Time: re.Time, Data: re.Data,
		SourceEventSeqs: re.SourceEventSeqs, SurfaceOp: string(re.SurfaceOp),
	})
	out.Lines = append(out.Lines, lineNo)
	return nil
}
