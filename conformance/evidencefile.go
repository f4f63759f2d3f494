package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

// EvidenceFormat is the version of the evidence.json format this package
// writes and reads.
const EvidenceFormat = 1

// EvidenceFile is the name of a case's evidence inside its folder under
// Config.Out.
const EvidenceFile = "evidence.json"

// MarshalEvidence encodes ev as indented JSON (the evidence.json format).
func MarshalEvidence(ev *Evidence) ([]byte, error) {
	b, err := json.MarshalIndent(ev, "", " ")
	if err != nil {
		return nil, fmt.Errorf("conformance: encode evidence of case %s: %w", ev.Case.ID, err)
	}
	return append(b, '\n'), nil
}

// UnmarshalEvidence decodes one evidence.json; name is used in errors.
// Numbers in the case's arguments stay json.Number, as LoadCase leaves them.
func UnmarshalEvidence(data []byte, name string) (*Evidence, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	ev := &Evidence{}
	if err := dec.Decode(ev); err != nil {
		return nil, fmt.Errorf("conformance: %s: %w", name, err)
	}
	switch {
	case ev.Format != EvidenceFormat:
		return nil, fmt.Errorf("conformance: %s: evidence format %d, this version reads %d", name, ev.Format, EvidenceFormat)
	case ev.Case == nil || ev.Case.ID == "":
		return nil, fmt.Errorf("conformance: %s: no case", name)
	}
	return ev, nil
}

// WriteEvidence writes ev to dir/evidence.json.
func WriteEvidence(dir string, ev *Evidence) error {
	b, err := MarshalEvidence(ev)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, EvidenceFile), b, 0o644); err != nil {
		return fmt.Errorf("conformance: write evidence: %w", err)
	}
	return nil
}

// ReadEvidenceDir reads the evidence of a run: every <case>/evidence.json
// directly under dir (what Config.Out holds after a run), in the order the
// cases ran.
func ReadEvidenceDir(dir string) ([]*Evidence, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("conformance: read evidence: %w", err)
	}
	var evs []*Evidence
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		p := filepath.Join(dir, e.Name(), EvidenceFile)
		data, err := os.ReadFile(p)
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
		return nil, fmt.Errorf("conformance: %s holds no <case>/%s (write one with --out DIR)", dir, EvidenceFile)
	}
	sort.SliceStable(evs, func(i, j int) bool { return evs[i].Index < evs[j].Index })
	return evs, nil
}
