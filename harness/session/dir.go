package session

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
)

// Dir is a folder of session logs, one <id>.jsonl file per session.
type Dir struct {
	Path string
	// NoFsync makes the logs of Create and Open never fsync: every event
	// is still written to the kernel before anyone is told of it (it is
	// in the file for any reader, and survives the process), but not
	// forced to the disk, so a power loss can lose it. It is for sessions
	// thrown away after the run, such as a conformance run's, whose
	// agents otherwise spend most of their wall time waiting for the disk.
	NoFsync bool
}

// ErrNotFound is returned by Dir.Open for an unknown session id.
var ErrNotFound = errors.New("session not found")

var validID = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

// File returns the log path of session id.
func (d Dir) File(id string) (string, error) {
	if !validID.MatchString(id) || id == "." || id == ".." {
		return "", fmt.Errorf("invalid session id %q: want letters, digits, '.', '_' or '-'", id)
	}
	return filepath.Join(d.Path, id+".jsonl"), nil
}

// Create starts a new persisted session.
func (d Dir) Create(id, cwd string, opts ...Option) (*Log, error) {
	path, err := d.File(id)
	if err != nil {
		return nil, err
	}
	l := New(id, cwd, opts...)
	s, err := createFile(path, l.header, d.NoFsync)
	if err != nil {
		return nil, err
	}
	l.store = s
	return l, nil
}

// Open locks session id's log, loads it, checks its invariants and makes
// it ready for appending; Warnings (a skipped byte order mark, a torn last
// line moved aside, a turn closed as interrupted) are returned alongside.
//
// Open is the path of an agent that continues a session, so it appends
// (never rewrites) what recovery needs: a torn last line is moved to a
// sidecar file and cut off (see FileStore.Repair), and a turn left open by
// a killed agent is closed: an error tool/result for each tool call of the
// open step that has none, step/end, then turn/end with reason
// {"kind":"interrupted"}. Reading a log anywhere else (LoadFile, Reader,
// `log check`, `log show`) never modifies it.
//
// Another process (or another open Log in this one) holding the session
// makes Open fail with a *LockedError naming the holder.
func (d Dir) Open(id string, opts ...Option) (*Log, []string, error) {
	return d.OpenContext(context.Background(), id, opts...)
}

// OpenContext is Open, stopping the read when ctx is done.
func (d Dir) OpenContext(ctx context.Context, id string, opts ...Option) (*Log, []string, error) {
	path, err := d.File(id)
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("session %q: %w (no %s)", id, ErrNotFound, path)
	}
	s, err := OpenFileStore(path)
	if err != nil {
		return nil, nil, err
	}
	s.noFsync = d.NoFsync
	l, warnings, err := openStore(ctx, s, opts)
	if err != nil {
		s.abandon()
		return nil, warnings, err
	}
	return l, warnings, nil
}

// openStore loads the log s holds, streaming: each event is checked and
// projected (surface messages, current plan, open turn) as it is read, and
// none is kept in memory; the Log reads them back from the file when asked
// (Log.Replay).
func openStore(ctx context.Context, s *FileStore, opts []Option) (*Log, []string, error) {
	rd := s.Reader(ReadOptions{})
	h, err := rd.Header(ctx)
	if err != nil {
		return nil, rd.Warnings(), err
	}
	l := newLog(opts)
	l.header = h
	for {
		e, err := rd.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, rd.Warnings(), err
		}
		if err := l.checker.Check(e); err != nil && l.check {
			var ie *InvariantError
			if errors.As(err, &ie) {
				ie.Line = rd.Line()
			}
			return nil, rd.Warnings(), fmt.Errorf("%s: restore session %s: %w", s.path, h.ID, err)
		}
		l.noteAppended(&e)
		if m, ok := surfaceMessage(e); ok {
			l.surface = append(l.surface, m)
		}
	}
	l.surfaceUpTo = l.count
	l.disk = &diskPrefix{path: s.path, size: rd.ValidSize(), count: l.count}
	warnings := rd.Warnings()
	rw, err := s.Repair(rd)
	warnings = append(warnings, rw...)
	if err != nil {
		return nil, warnings, err
	}
	l.store = s
	cw, err := l.closeInterrupted()
	warnings = append(warnings, cw...)
	if err != nil {
		l.store = nil
		return nil, warnings, fmt.Errorf("%s: %w", s.path, err)
	}
	return l, warnings, nil
}
