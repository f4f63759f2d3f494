package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// What the README says make demo's --out folder holds is what --out
// writes: a folder per case with evidence.json, and the transcript files
// for a failing case only.
func TestReadmeSaysWhatOutWrites(t *testing.T) {
	readme := readDoc(t, "README.md")
	files := []string{"transcript.txt", "wire.jsonl", "journal.jsonl", "stderr-1.txt"}
	for _, f := range append([]string{"evidence.json", "stderr-N.txt"}, files[:3]...) {
		if !strings.Contains(readme, "`"+f+"`") {
			t.Errorf("README.md does not name %s", f)
		}
	}
	dir := t.TempDir()
	var out strings.Builder
	args := []string{"conform", "-q", "--in-process", "--env", "TODOHARNESS_FAULT=accept-duplicates", "--case", "reject-duplicate", "--case", "plan-basic", "--settle", "50ms", "--out", dir}
	if code := Run(context.Background(), args, strings.NewReader(""), &out, &out); code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out.String())
	}
	for c, failing := range map[string]bool{"reject-duplicate": true, "plan-basic": false} {
		if _, err := os.Stat(filepath.Join(dir, c, "evidence.json")); err != nil {
			t.Errorf("%s: %v", c, err)
		}
		for _, f := range files {
			_, err := os.Stat(filepath.Join(dir, c, f))
			if failing != (err == nil) {
				t.Errorf("%s/%s: written %v, want %v", c, f, err == nil, failing)
			}
		}
	}
}
