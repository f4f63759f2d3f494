package session

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
)

// Dir is a folder of session logs, one <id>.jsonl file per session.
type Dir struct {
	Path string
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
	s, err := CreateFile(path, l.header)
	if err != nil {
		return nil, err
	}
	l.store = s
	return l, nil
}

// Open loads session id, checks its invariants and reopens it for appending.
// Warnings (such as a dropped torn last line) are returned alongside.
func (d Dir) Open(id string, opts ...Option) (*Log, []string, error) {
	path, err := d.File(id)
	if err != nil {
		return nil, nil, err
	}
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("session %q: %w (no %s)", id, ErrNotFound, path)
	}
	ld, err := LoadFile(path)
	if err != nil {
		return nil, nil, err
	}
	l, err := restore(ld.Header, ld.Events, ld.Lines, false, opts...)
	if err != nil {
		return nil, ld.Warnings, fmt.Errorf("%s: %w", path, err)
	}
	s, err := AppendFile(path, ld)
	if err != nil {
		return nil, ld.Warnings, err
	}
	l.store = s
	return l, ld.Warnings, nil
}
