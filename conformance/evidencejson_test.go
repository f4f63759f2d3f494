package conformance

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// savedLines calls each with the lines of the captured run name
// (testdata/evidence/NAME.jsonl.gz), numbered from 1, until it returns
// false; the line is each's to keep.
func savedLines(t testing.TB, name string, each func(n int, line []byte) bool) {
	t.Helper()
	f, err := os.Open(filepath.Join(evidenceDir, name+".jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<28)
	for n := 1; sc.Scan(); n++ {
		if !each(n, append([]byte(nil), sc.Bytes()...)) {
			return
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
}

// Every saved case's evidence, read and written again, is the line it was
// saved as, byte for byte: the JSON form of Evidence (its keys, their
// order, the driver's record among the runner's fields) is the saved one.
func TestSavedEvidenceWritesAsSaved(t *testing.T) {
	t.Parallel()
	lines := 0
	for _, name := range savedRunNames(t) {
		savedLines(t, name, func(n int, saved []byte) bool {
			lines++
			ev, err := UnmarshalEvidence(saved, name)
			if err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(ev)
			if err != nil {
				t.Fatalf("%s: line %d: %v", name, n, err)
			}
			if !bytes.Equal(b, saved) {
				i := 0
				for i < min(len(b), len(saved)) && b[i] == saved[i] {
					i++
				}
				t.Errorf("%s: line %d (case %s) is written otherwise from byte %d:\n got %q\nsaved %q", name, n, ev.Case.ID, i,
					b[max(0, i-60):min(len(b), i+60)], saved[max(0, i-60):min(len(saved), i+60)])
			}
			return true
		})
	}
	if lines == 0 {
		t.Fatal("no saved evidence read")
	}
}
