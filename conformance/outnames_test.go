package conformance_test

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	. "github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/report"
)

// Case IDs whose folder names under --out would be the same (issue 42,
// 11: a.b and a_b; also A and a, on a file system that ignores case, and
// x-run1 beside run 1 of x) get a folder each: --judge reads every case
// back, none overwritten by another.
func TestCasesThatShareAFolderNameGetOneEach(t *testing.T) {
	evs := SavedRun(t, "fake-no-plan")
	var run []*Evidence
	for k, id := range []string{"a.b", "a_b", "A_B", "a b"} {
		c := *evs[k%len(evs)].Case
		c.ID = id
		e := *evs[k%len(evs)]
		e.Case, e.Index = &c, k
		run = append(run, &e)
	}
	rep, err := Judge(run, JudgeConfig{Checks: CapturedChecks(t), Validator: SharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	names := report.FolderNames(rep)
	if names[0] != "a_b" {
		t.Errorf("the first case keeps its plain name: %q", names[0])
	}
	out := t.TempDir()
	if err := report.WriteTranscripts(out, rep); err != nil {
		t.Fatal(err)
	}
	back, err := ReadEvidenceDir(out)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range back {
		got = append(got, ev.Case.ID)
	}
	sort.Strings(got)
	if want := []string{"A_B", "a b", "a.b", "a_b"}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("read back %q from %v, want %q", got, names, want)
	}
	if _, err := os.Stat(filepath.Join(out, IncompleteFile)); err == nil {
		t.Error("a whole --out keeps the incomplete marker")
	}
}
