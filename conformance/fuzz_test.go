package conformance

import (
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/todoharness/todoharness/driver"
	conformancefixtures "github.com/todoharness/todoharness/fixtures/conformance"
)

// FuzzLoadCase: any case file loads to a case the runner can use, or to an
// error naming the file; never a panic.
func FuzzLoadCase(f *testing.F) {
	_ = fs.WalkDir(conformancefixtures.FS, ".", func(path string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(path, "case.yaml") {
			if b, err := fs.ReadFile(conformancefixtures.FS, path); err == nil {
				f.Add(b)
			}
		}
		return nil
	})
	f.Add([]byte("steps: [{op: initialize}]\nscript: &a [*a]\n"))
	f.Add([]byte("id: x\nsteps:\n  - op: initialize\n  - op: prompt\n    text: hi\n"))
	canon, _ := driver.DialectByName(driver.DialectTodoWrite)
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := LoadCase(data, "fuzz/case.yaml", "fuzz")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz/case.yaml") {
				t.Fatalf("the error does not name the file: %v", err)
			}
			return
		}
		if c.ID == "" || len(c.Steps) == 0 || c.Steps[0].Op != driver.OpInitialize {
			t.Fatalf("a loaded case with id %q and steps %v", c.ID, c.Steps)
		}
		_ = c.Writes()
		if _, err := c.script(canon, nil); err != nil {
			t.Fatalf("a loaded case has a script the runner refuses: %v", err)
		}
		cs, err := LoadCases(fstest.MapFS{"x/case.yaml": {Data: data}}, ".")
		if err != nil || len(cs) != 1 {
			t.Fatalf("LoadCases refuses what LoadCase took: %v", err)
		}
	})
}
