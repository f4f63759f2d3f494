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
	"strings"
	"syscall"
	"time"

	"github.com/todoharness/todoharness/internal/textcut"
)

// FileStore appends a session's events to a JSONL file: the header on line 1,
// one event per line after it. The file is opened with O_APPEND (every write
// lands at the end, whatever anyone did to the file) and held under an
// exclusive advisory flock for as long as the store is open, so one process
// (one open store) owns a session at a time; a second opener gets a
// *LockedError naming the holder, read from the holder's sidecar file
// <log>.lock.
//
// Write buffers a line; Flush hands buffered lines to the kernel (they then
// survive the process being killed); Sync also fsyncs them (they then
// survive the machine going down). The Log calls these for you: see
// Log.Append for which events are synced before anyone is told about them.
// A FileStore is not safe for concurrent use (the Log serialises its writes).
type FileStore struct {
	path string
	f    *os.File
	w    *bufio.Writer
	buf  bytes.Buffer // one encoded line
	// noFsync: Sync writes to the kernel and does not fsync (Dir.NoFsync).
	noFsync bool
}

// ErrLocked is wrapped by *LockedError.
var ErrLocked = errors.New("session log is locked by another process")

// Holder describes the process holding a session log, as recorded in the
// sidecar file <log>.lock while it holds it.
type Holder struct {
	PID     int    `json:"pid"`
	Command string `json:"command,omitempty"`
	Since   int64  `json:"since,omitempty"` // Unix milliseconds
}

// LockedError is returned when another open store (in this process or
// another) holds the session log. Holder is nil when the holder recorded
// nothing (it is starting or stopping) for as long as the opener waited
// (unrecordedHolderWait).
type LockedError struct {
	Path   string
	Holder *Holder
}

func (e *LockedError) Error() string {
	if e.Holder == nil {
		return fmt.Sprintf("session log %s is in use by another process (holder unknown): %v", e.Path, ErrLocked)
	}
	who := fmt.Sprintf("pid %d", e.Holder.PID)
	if e.Holder.Command != "" {
		who += fmt.Sprintf(", command %q", e.Holder.Command)
	}
	if e.Holder.Since != 0 {
		who += ", since " + time.UnixMilli(e.Holder.Since).UTC().Format(time.RFC3339)
	}
	return fmt.Sprintf("session log %s is in use by another process (%s): %v", e.Path, who, ErrLocked)
}

func (e *LockedError) Unwrap() error { return ErrLocked }

// lockPath is the holder sidecar of a log.
func lockPath(path string) string { return path + ".lock" }

// unrecordedHolderWait bounds how long openLocked waits for a lock whose
// holder recorded nothing. Such a holder is starting (it has the lock, not
// yet the sidecar) or gone: a store closed in this process whose
// descriptor a child being started (between fork and exec) still shares
// holds the flock for that moment, with the sidecar already removed. The
// wait absorbs both; a recorded holder is reported at once.
const unrecordedHolderWait = time.Second

// openLocked opens path for appending (creating it when create is set) and
// takes the exclusive flock: at once when another holder is recorded (a
// *LockedError naming it), else waiting up to unrecordedHolderWait.
func openLocked(path string, create bool) (*os.File, error) {
	flags := os.O_RDWR | os.O_APPEND
	if create {
		flags |= os.O_CREATE
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(unrecordedHolderWait)
	for {
		err := flock(f)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			f.Close()
			return nil, fmt.Errorf("lock %s: %w", path, err)
		}
		le := &LockedError{Path: path, Holder: recordedHolder(path)}
		if le.Holder != nil || !time.Now().Before(deadline) {
			f.Close()
			return nil, le
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := writeHolder(path); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// recordedHolder reads the holder's sidecar of path: nil when it records
// none.
func recordedHolder(path string) *Holder {
	b, err := os.ReadFile(lockPath(path))
	if err != nil {
		return nil
	}
	var h Holder
	if json.Unmarshal(b, &h) != nil || h.PID == 0 {
		return nil
	}
	return &h
}

func writeHolder(path string) error {
	cmd := strings.Join(os.Args, " ")
	cmd = textcut.Truncate(cmd, 300)
	b, err := json.Marshal(Holder{PID: os.Getpid(), Command: cmd, Since: time.Now().UnixMilli()})
	if err != nil {
		return fmt.Errorf("lock %s: %w", path, err)
	}
	if err := os.WriteFile(lockPath(path), append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("lock %s: record holder: %w", path, err)
	}
	return nil
}

// CreateFile creates (or empties) path, locks it and writes the header line,
// synced to disk. It fails with a *LockedError when another store holds it.
func CreateFile(path string, h Header) (*FileStore, error) {
	return createFile(path, h, false)
}

// createFile is CreateFile; with noFsync the store never fsyncs (Dir.NoFsync).
func createFile(path string, h Header, noFsync bool) (*FileStore, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("create session log %s: %w", path, err)
	}
	f, err := openLocked(path, true)
	if err != nil {
		return nil, fmt.Errorf("create session log: %w", err)
	}
	s := &FileStore{path: path, f: f, w: bufio.NewWriterSize(f, 64<<10), noFsync: noFsync}
	if err := f.Truncate(0); err != nil {
		s.abandon()
		return nil, fmt.Errorf("create session log %s: %w", path, err)
	}
	if err := encodeJSON(&s.buf, h); err != nil {
		s.abandon()
		return nil, fmt.Errorf("create session log %s: header: %w", path, err)
	}
	s.buf.WriteByte('\n')
	if _, err := s.w.Write(s.buf.Bytes()); err != nil {
		s.abandon()
		return nil, fmt.Errorf("create session log %s: %w", path, err)
	}
	if err := s.Sync(); err != nil {
		s.abandon()
		return nil, err
	}
	if !noFsync {
		syncDir(filepath.Dir(path))
	}
	return s, nil
}

// syncDir makes a new directory entry durable (best effort).
func syncDir(dir string) {
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}

// OpenFileStore locks an existing log for appending; it does not read it.
// Read it through Reader (which reads from the start whatever the append
// position), then call Repair with what the reader found before the first
// Write. It fails with a *LockedError when another store holds the log.
func OpenFileStore(path string) (*FileStore, error) {
	f, err := openLocked(path, false)
	if err != nil {
		return nil, fmt.Errorf("open session log for append: %w", err)
	}
	return &FileStore{path: path, f: f, w: bufio.NewWriterSize(f, 64<<10)}, nil
}

// Reader returns a reader of the whole file, from its first byte, that
// does not move the append position.
func (s *FileStore) Reader(opts ReadOptions) *Reader {
	size := int64(-1)
	if fi, err := s.f.Stat(); err == nil {
		size = fi.Size() // its buffer's size (it is read to its end all the same)
	}
	return newReader(io.NewSectionReader(s.f, 0, 1<<62), s.path, opts, size)
}

// Repair prepares a log read by r (to io.EOF) for appending: a torn last
// line (never complete, so never acknowledged to anyone) is moved to the
// sidecar file <log>.torn-<offset> and cut off, and a last line without
// its newline gets one, so that new events start on a line of their own.
// It returns a warning for each change it made. Nothing complete is ever
// removed or rewritten.
func (s *FileStore) Repair(r *Reader) ([]string, error) {
	var warnings []string
	if r.Torn() {
		size := r.ValidSize()
		torn := make([]byte, r.tornSize)
		if _, err := s.f.ReadAt(torn, size); err != nil && !errors.Is(err, io.EOF) {
			return nil, fmt.Errorf("repair %s: read torn tail: %w", s.path, err)
		}
		side := fmt.Sprintf("%s.torn-%d", s.path, size)
		if err := os.WriteFile(side, torn, 0o644); err != nil {
			return nil, fmt.Errorf("repair %s: save torn tail: %w", s.path, err)
		}
		if err := s.f.Truncate(size); err != nil {
			return nil, fmt.Errorf("repair %s: cut torn tail: %w", s.path, err)
		}
		warnings = append(warnings, fmt.Sprintf("%s: moved the torn last line (%d bytes at offset %d) to %s", s.path, len(torn), size, side))
	}
	if r.NeedsNewline() {
		if err := s.w.WriteByte('\n'); err != nil {
			return nil, fmt.Errorf("repair %s: %w", s.path, err)
		}
	}
	return warnings, nil
}

// Path returns the file path.
func (s *FileStore) Path() string { return s.path }

// Write buffers one event line.
func (s *FileStore) Write(e Event) error { return s.writeEvent(e, false) }

// writeEvent is Write; compactData says e.Data is known to be valid,
// compact JSON (Log.Append's own encoding), so the line is framed around it
// (appendEventLine) instead of encoding the event and its data again.
func (s *FileStore) writeEvent(e Event, compactData bool) error {
	s.buf.Reset()
	if !compactData || !appendEventLine(&s.buf, e) {
		s.buf.Reset()
		if err := encodeJSON(&s.buf, e); err != nil {
			return fmt.Errorf("write %s: event seq %d: %w", s.path, e.Seq, err)
		}
	}
	s.buf.WriteByte('\n')
	if _, err := s.w.Write(s.buf.Bytes()); err != nil {
		return fmt.Errorf("write %s: %w", s.path, err)
	}
	return nil
}

// Flush writes buffered lines to the file (to the kernel: they survive the
// process being killed, not the machine going down).
func (s *FileStore) Flush() error {
	if err := s.w.Flush(); err != nil {
		return fmt.Errorf("flush %s: %w", s.path, err)
	}
	return nil
}

// Sync writes buffered lines to the file and fsyncs it (only writes them,
// for a store of a Dir with NoFsync).
func (s *FileStore) Sync() error {
	if err := s.Flush(); err != nil {
		return err
	}
	if s.noFsync {
		return nil
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("sync %s: %w", s.path, err)
	}
	return nil
}

// Close syncs, drops the holder record, and closes the file (which releases
// the lock).
func (s *FileStore) Close() error {
	serr := s.Sync()
	rerr := os.Remove(lockPath(s.path))
	if errors.Is(rerr, os.ErrNotExist) {
		rerr = nil
	}
	cerr := s.f.Close()
	return errors.Join(serr, rerr, cerr)
}

// abandon releases the lock without syncing (a failed open).
func (s *FileStore) abandon() {
	_ = os.Remove(lockPath(s.path))
	s.f.Close()
}
