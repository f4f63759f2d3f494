package snapshot_test

import (
	"os"
	"path/filepath"
	"testing"

	. "github.com/todoharness/todoharness/snapshot"
)

// --update never writes through a link: an expected file that is a link
// to a file outside the folder, or a dangling one, is replaced by the file
// itself; the target is neither overwritten nor created.
func TestUpdateReplacesALinkNeverWritesThroughIt(t *testing.T) {
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim.jsonl")
	if err := os.WriteFile(victim, []byte("keep\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"to a file outside": victim, "dangling": filepath.Join(outside, "created.jsonl")} {
		t.Run(name, func(t *testing.T) {
			dir := copyScenario(t, "todo-plan")
			link := filepath.Join(dir, ExpectedFile)
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			res := run(t, dir, referenceAgent(t), true)
			if res.Status != Updated {
				t.Fatalf("update: %s (%s)", res.Status, res.Reason)
			}
			if fi, err := os.Lstat(link); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("%s after --update: %v, %v; want a regular file", link, fi, err)
			}
		})
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep\n" {
		t.Fatalf("the file outside the folder was overwritten: %.80q", b)
	}
	if _, err := os.Lstat(filepath.Join(outside, "created.jsonl")); err == nil {
		t.Fatal("the dangling link's target was created outside the folder")
	}
}
