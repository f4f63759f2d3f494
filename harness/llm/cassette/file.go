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

// ErrNotFound is returned (wrapped) by Load when the cassette file does not
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

// File is a cassette file as todoharness reads it: go-vcr's fields plus the
// provenance block.
type File struct {
	Provenance   *Provenance             `yaml:"provenance"`
	Version      int                     `yaml:"version"`
	Interactions []*cassette.Interaction `yaml:"interactions"`
}

// VCRName turns a cassette path into go-vcr's cassette name (go-vcr appends
// ".yaml" itself).
func VCRName(path string) (string, error) {
	if !strings.HasSuffix(path, ".yaml") {
		return "", fmt.Errorf("cassette path %q must end in .yaml", path)
	}
	return strings.TrimSuffix(path, ".yaml"), nil
}

// Load reads and validates a cassette file. A missing file wraps
// ErrNotFound; a file that does not parse or is incomplete is a
// *CorruptError.
func Load(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s (record it with DEEPSEEK_API_KEY=… make record, or todoharness record)", ErrNotFound, path)
	}
	if err != nil {
		return nil, fmt.Errorf("read cassette: %w", err)
	}
	return Parse(data, path)
}

// Parse validates the bytes of a cassette file (path names it in errors): a
// go-vcr version 2 cassette with a valid provenance block and at least one
// complete interaction. Anything else is a *CorruptError.
func Parse(data []byte, path string) (*File, error) {
	corrupt := func(reason string, err error) error {
		return &CorruptError{Path: path, Reason: reason, Err: err}
	}
	if len(strings.TrimSpace(string(data))) == 0 {
		return nil, corrupt("the file is empty", nil)
	}
	var f File
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
// (validated as Load validates it).
func Interactions(path string) ([]*cassette.Interaction, error) {
	f, err := Load(path)
	if err != nil {
		return nil, err
	}
	return f.Interactions, nil
}
