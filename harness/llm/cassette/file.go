package cassette

import (
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"

	"gopkg.in/dnaeon/go-vcr.v3/cassette"

	"github.com/todoharness/todoharness/internal/yamlx"
)

// ErrNotFound is returned (wrapped) by Replay when the cassette file does not
// exist.
var ErrNotFound = errors.New("cassette not found")

// CorruptError is a cassette file that cannot be replayed: it does not
// parse, or it parses but is not a complete todoharness cassette.
type CorruptError struct {
	Path   string
	Reason string
	Err    error
}

func (e *CorruptError) Error() string {
	s := fmt.Sprintf("cassette %s is corrupt: %s", e.Path, e.Reason)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s + " (re-record it, or restore it from version control)"
}

func (e *CorruptError) Unwrap() error { return e.Err }

// file is a cassette file as this package reads it: go-vcr's fields plus the
// provenance block.
type file struct {
	Provenance   *Provenance             `yaml:"provenance"`
	Version      int                     `yaml:"version"`
	Interactions []*cassette.Interaction `yaml:"interactions"`
}

// vcrName turns a cassette path into go-vcr's cassette name (go-vcr appends
// ".yaml" itself).
func vcrName(path string) (string, error) {
	if !strings.HasSuffix(path, ".yaml") {
		return "", fmt.Errorf("cassette path %q must end in .yaml", path)
	}
	return strings.TrimSuffix(path, ".yaml"), nil
}

// loadFile reads and validates a cassette file.
func loadFile(path string) (*file, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s (record it with DEEPSEEK_API_KEY=… make record, or todoharness record)", ErrNotFound, path)
	}
	if err != nil {
		return nil, fmt.Errorf("read cassette: %w", err)
	}
	return parseFile(data, path)
}

func parseFile(data []byte, path string) (*file, error) {
	corrupt := func(reason string, err error) error {
		return &CorruptError{Path: path, Reason: reason, Err: err}
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, corrupt("the file is empty", nil)
	}
	var f file
	if err := yamlx.Unmarshal(data, &f, false); err != nil {
		return nil, corrupt("not valid cassette YAML", err)
	}
	if f.Version != cassette.CassetteFormatV2 {
		return nil, corrupt(fmt.Sprintf("format version is %d, want %d (go-vcr v3 cassette)", f.Version, cassette.CassetteFormatV2), nil)
	}
	if f.Provenance == nil {
		return nil, corrupt("no provenance block (every cassette must say where it came from)", nil)
	}
	if err := f.Provenance.Validate(); err != nil {
		return nil, corrupt("bad provenance block", err)
	}
	if len(f.Interactions) == 0 {
		return nil, corrupt("no interactions", nil)
	}
	for n, i := range f.Interactions {
		if i == nil {
			return nil, corrupt(fmt.Sprintf("interaction %d is empty", n), nil)
		}
		if i.Request.Method == "" {
			return nil, corrupt(fmt.Sprintf("interaction %d: request has no method", n), nil)
		}
		u, err := url.Parse(i.Request.URL)
		if err != nil || u.Path == "" {
			return nil, corrupt(fmt.Sprintf("interaction %d: request URL %q is not a URL with a path", n, i.Request.URL), err)
		}
		if i.Response.Code < 100 || i.Response.Code > 599 {
			return nil, corrupt(fmt.Sprintf("interaction %d: response status code %d", n, i.Response.Code), nil)
		}
	}
	return &f, nil
}

// Interactions returns the recorded interactions of the cassette at path
// (validated as Replay validates it).
func Interactions(path string) ([]*cassette.Interaction, error) {
	f, err := loadFile(path)
	if err != nil {
		return nil, err
	}
	return f.Interactions, nil
}
