package conformance

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/internal/safefile"
)

// evidenceDirWith makes a --judge folder whose case "a" has evidence.json
// made by mk (which gets the path to create).
func evidenceDirWith(t *testing.T, mk func(path string) error) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "a"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := mk(filepath.Join(dir, "a", EvidenceFile)); err != nil {
		t.Skipf("cannot lay out the evidence here: %v", err)
	}
	return dir
}

// readEvidenceDirSoon runs ReadEvidenceDir and fails the test when it has
// not returned 10 s later (it would then be waiting on the file for good).
func readEvidenceDirSoon(t *testing.T, dir string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := ReadEvidenceDir(dir)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(10 * time.Second):
		t.Fatalf("ReadEvidenceDir(%s) still waiting on the evidence 10 s later", dir)
		return nil
	}
}

// An evidence.json that is a FIFO, or a link to a device, is refused with
// an error naming it: never waited on (a FIFO's open waits for a writer),
// never read without end (/dev/zero).
func TestReadEvidenceDirRefusesWhatIsNotARegularFile(t *testing.T) {
	for name, mk := range map[string]func(string) error{
		"FIFO":              func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"link to /dev/zero": func(p string) error { return os.Symlink("/dev/zero", p) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := evidenceDirWith(t, mk)
			err := readEvidenceDirSoon(t, dir)
			if !errors.Is(err, safefile.ErrNotRegular) || !strings.Contains(err.Error(), filepath.Join(dir, "a", EvidenceFile)) {
				t.Fatalf("ReadEvidenceDir = %v, want a refusal naming the file", err)
			}
		})
	}
}

// Evidence naming a dialect this version does not define is refused (its
// dialect-specific checks would all be N/A), naming the file and field.
func TestUnmarshalEvidenceRefusesAnUnknownDialect(t *testing.T) {
	ev := savedCase(t, "reference", savedRun(t, "reference")[0].Case.ID)
	for name, edit := range map[string]func(*driver.Dialect){
		"unknown name":      func(d *driver.Dialect) { d.Name = "todo_write_v9" },
		"known name, other": func(d *driver.Dialect) { d.Tool = "other_tool" },
	} {
		t.Run(name, func(t *testing.T) {
			e := *ev
			edit(&e.Dialect)
			b, err := MarshalEvidence(&e)
			if err != nil {
				t.Fatal(err)
			}
			_, err = UnmarshalEvidence(b, "x/evidence.json")
			if err == nil || !strings.Contains(err.Error(), "x/evidence.json") || !strings.Contains(err.Error(), `"dialect"`) {
				t.Fatalf("UnmarshalEvidence = %v, want a refusal naming the file and the dialect field", err)
			}
		})
	}
	b, err := MarshalEvidence(ev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := UnmarshalEvidence(b, "ok/evidence.json"); err != nil {
		t.Fatalf("the saved evidence itself: %v", err)
	}
}

// A baseline entry with `cases: []` names no case: it is refused, saying
// to leave the key out for every case (a missing key still means every
// case).
func TestBaselineEmptyCasesIsRefused(t *testing.T) {
	_, err := ParseExpectedFailures([]byte("- id: TW-X\n  reason: known\n  cases: []\n"), "base.yaml")
	if err == nil || !strings.Contains(err.Error(), "base.yaml") || !strings.Contains(err.Error(), `"cases"`) {
		t.Fatalf("cases: [] = %v, want a refusal naming the file and field", err)
	}
	es, err := ParseExpectedFailures([]byte("- id: TW-X\n  reason: known\n"), "base.yaml")
	if err != nil || len(es) != 1 || !es[0].matchesCase("any-case") {
		t.Fatalf("no cases key: %v %v, want an entry for every case", es, err)
	}
}

// A baseline that is a FIFO is refused, not waited on.
func TestReadExpectedFailuresRefusesAFIFO(t *testing.T) {
	p := filepath.Join(t.TempDir(), "base.yaml")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	done := make(chan error, 1)
	go func() { _, err := ReadExpectedFailures(p); done <- err }()
	select {
	case err := <-done:
		if !errors.Is(err, safefile.ErrNotRegular) {
			t.Fatalf("ReadExpectedFailures(FIFO) = %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("ReadExpectedFailures still waiting on the FIFO 10 s later")
	}
}

// Evidence saved by a version that trimmed with Go's strings.TrimSpace
// (catalogue 3) is judged as this version trims: the lists are trimmed
// again from the scripted arguments.
func TestUnmarshalEvidenceTrimsAsTheContract(t *testing.T) {
	ev := savedCase(t, "fake-go-trim", "trim-edge-characters")
	e := *ev
	e.Writes = slices.Clone(ev.Writes)
	old := slices.Clone(e.Writes[0].Todos)
	old[0].Content, old[1].Content = "\ufeffread the parser code\ufeff", "write the failing test" // as strings.TrimSpace left them
	e.Writes[0].Todos = old
	b, err := MarshalEvidence(&e)
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnmarshalEvidence(b, "old/evidence.json")
	if err != nil {
		t.Fatal(err)
	}
	if c := got.Writes[0].Todos; c[0].Content != "read the parser code" || c[1].Content != "write the failing test\u0085" {
		t.Errorf("read back %q, want the contract's trim", c)
	}
}
