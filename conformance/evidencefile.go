package conformance

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/internal/safefile"
	"github.com/todoharness/todoharness/mockmodel"
)

// EvidenceFormat is the version of the evidence.json format this package
// writes and reads.
const EvidenceFormat = 1

// EvidenceFile is the name of a case's evidence inside its folder under
// --out (report.WriteTranscripts).
const EvidenceFile = "evidence.json"

// MarshalEvidence encodes ev as indented JSON (the evidence.json format),
// without HTML escaping: a "<" the agent sent stays one byte (escaped as
// \u003c, a wire of 64 MiB of "<" took 384 MiB).
func MarshalEvidence(ev *Evidence) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(ev); err != nil {
		return nil, fmt.Errorf("conformance: encode evidence of case %s: %w", ev.Case.ID, err)
	}
	return buf.Bytes(), nil
}

// UnmarshalEvidence decodes one evidence.json; name is used in errors.
// Numbers in the case's arguments stay json.Number, as LoadCase leaves them.
func UnmarshalEvidence(data []byte, name string) (*Evidence, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	ev := &Evidence{memo: &judgeMemo{}}
	if err := dec.Decode(ev); err != nil {
		return nil, fmt.Errorf("conformance: %s: %w", name, err)
	}
	switch {
	case ev.Format != EvidenceFormat:
		return nil, fmt.Errorf("conformance: %s: evidence format %d, this version reads %d", name, ev.Format, EvidenceFormat)
	case ev.Case == nil || ev.Case.ID == "":
		return nil, fmt.Errorf("conformance: %s: no case", name)
	}
	if err := knownDialect(ev.Dialect); err != nil {
		return nil, fmt.Errorf("conformance: %s: case %s: field \"dialect\": %w", name, ev.Case.ID, err)
	}
	// The lists are judged as this version trims them: evidence saved by
	// a version that trimmed with Go's strings.TrimSpace (catalogue 3 and
	// before) kept U+FEFF and cut U+0085.
	for i, w := range ev.Writes {
		if todos, ok := canonicalTodos(w.Args); ok {
			ev.Writes[i].Todos, ev.Writes[i].Shaped = todos, true
		}
	}
	return ev, nil
}

// knownDialect refuses a dialect that is not one of Dialects() as this
// version defines it: the checks that apply to one dialect only would
// otherwise all be N/A for evidence that names another.
func knownDialect(d driver.Dialect) error {
	k, err := driver.DialectByName(d.Name)
	if err != nil || k.Name != d.Name {
		return fmt.Errorf("unknown dialect %q (known: %s)", d.Name, strings.Join(driver.DialectNames(), ", "))
	}
	if k.Tool != d.Tool || k.ListField != d.ListField || k.ContentField != d.ContentField ||
		k.StatusField != d.StatusField || !slices.Equal(k.Extra, d.Extra) {
		return fmt.Errorf("dialect %q is not the one this version defines (%+v, evidence has %+v)", d.Name, k, d)
	}
	return nil
}

// MaxEvidenceBytes is the largest evidence.json ReadEvidenceDir reads, and
// WriteEvidence writes: what --out writes, --judge reads. The wire it
// holds is capped at driver.MaxWireBytes as encoded here.
const MaxEvidenceBytes = 4 * driver.MaxWireBytes

// WriteEvidence writes ev to dir/evidence.json, of at most
// MaxEvidenceBytes: evidence that encodes longer is written without the
// model requests' bodies (JournalEntry.Raw: no check reads them, as in
// WriteEvidenceArchive); if it is still longer, it is an error naming the
// case and its size, and nothing is written.
func WriteEvidence(dir string, ev *Evidence) error {
	return writeEvidence(dir, ev, MaxEvidenceBytes)
}

func writeEvidence(dir string, ev *Evidence, limit int) error {
	b, err := MarshalEvidence(ev)
	if err != nil {
		return err
	}
	if len(b) > limit {
		whole := len(b)
		if b, err = MarshalEvidence(bodiless(ev)); err != nil {
			return err
		}
		if len(b) > limit {
			return fmt.Errorf("conformance: write evidence: case %s: %d bytes (%d without the model requests' bodies), over the %d bytes --judge reads: not written", ev.Case.ID, whole, len(b), limit)
		}
	}
	if err := safefile.WriteFile(filepath.Join(dir, EvidenceFile), b, 0o644); err != nil {
		return fmt.Errorf("conformance: write evidence: %w", err)
	}
	return nil
}

// IncompleteFile is the file a run leaves in its --out folder while it
// writes the folders of the cases, and keeps there when it could not write
// them all (a full disk): ReadEvidenceDir refuses a folder that has one,
// which would otherwise be judged as a run of fewer cases.
const IncompleteFile = "INCOMPLETE"

// ErrNoEvidence is the error of ReadEvidenceDir on a folder that holds no
// <case>/evidence.json (an exploration's --out has none).
var ErrNoEvidence = errors.New("holds no <case>/" + EvidenceFile + " (write one with --out DIR)")

// ErrIncomplete is the error of ReadEvidenceDir on a folder a run could
// not write whole (IncompleteFile).
var ErrIncomplete = errors.New("was not written whole by its run")

// ReadEvidenceDir reads the evidence of a run: every <case>/evidence.json
// directly under dir (what --out holds after a run), in the order the
// cases ran. An evidence.json must be a regular file (a link to one is
// followed) of at most MaxEvidenceBytes: a FIFO, a device or a longer file
// is refused, never waited on or read to its end. A folder with
// IncompleteFile is refused (ErrIncomplete), one with no evidence too
// (ErrNoEvidence).
func ReadEvidenceDir(dir string) ([]*Evidence, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("conformance: read evidence: %w", err)
	}
	if _, err := os.Lstat(filepath.Join(dir, IncompleteFile)); err == nil {
		return nil, fmt.Errorf("conformance: %s %w (%s says why): judge a folder a run wrote whole", dir, ErrIncomplete, filepath.Join(dir, IncompleteFile))
	}
	var evs []*Evidence
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(dir, e.Name(), EvidenceFile)
		data, err := safefile.ReadRegular(p, MaxEvidenceBytes)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("conformance: read evidence: %w", err)
		}
		ev, err := UnmarshalEvidence(data, p)
		if err != nil {
			return nil, err
		}
		evs = append(evs, ev)
	}
	if len(evs) == 0 {
		return nil, fmt.Errorf("conformance: %s %w", dir, ErrNoEvidence)
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Index < evs[j].Index })
	return evs, nil
}

// WriteEvidenceArchive writes a run's evidence to one file: gzip'd JSON
// Lines, one case's evidence a line, in run order. The journal's request
// bodies (JournalEntry.Raw) are left out, as no check reads them: this is
// the compact form of conformance/testdata/evidence.
func WriteEvidenceArchive(path string, evs []*Evidence) error {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	for _, ev := range evs {
		b, err := json.Marshal(bodiless(ev))
		if err != nil {
			return fmt.Errorf("conformance: encode evidence of case %s: %w", ev.Case.ID, err)
		}
		zw.Write(append(b, '\n'))
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("conformance: %s: %w", path, err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("conformance: write evidence: %w", err)
	}
	return nil
}

// bodiless is ev without its model requests' bodies, nor those of the
// evidence of its pooled run (PooledFailure.Evidence).
func bodiless(ev *Evidence) *Evidence {
	e := *ev
	e.Journal, e.SideRequests = withoutBodies(e.Journal), withoutBodies(e.SideRequests)
	if pf := e.PooledFailure; pf != nil && pf.Evidence != nil {
		p := *pf
		p.Evidence = bodiless(pf.Evidence)
		e.PooledFailure = &p
	}
	return &e
}

func withoutBodies(es []mockmodel.JournalEntry) []mockmodel.JournalEntry {
	out := slices.Clone(es)
	for i := range out {
		out[i].Raw = nil
	}
	return out
}

// ReadEvidenceArchive reads a file written by WriteEvidenceArchive.
func ReadEvidenceArchive(path string) ([]*Evidence, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("conformance: read evidence: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("conformance: %s: %w", path, err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 1<<20), driver.MaxWireBytes+driver.MaxWireLine)
	var evs []*Evidence
	for n := 1; sc.Scan(); n++ {
		ev, err := UnmarshalEvidence(sc.Bytes(), fmt.Sprintf("%s: line %d", path, n))
		if err != nil {
			return nil, err
		}
		evs = append(evs, ev)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("conformance: %s: %w", path, err)
	}
	if len(evs) == 0 {
		return nil, fmt.Errorf("conformance: %s: no evidence", path)
	}
	return evs, nil
}
