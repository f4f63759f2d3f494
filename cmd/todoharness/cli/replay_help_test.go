package cli

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
)

// replay --model says what the name is for and what changing it does;
// replay --all with no scenarios says where it looked and for what.
func TestReplayHelpAndAllOutsideAClone(t *testing.T) {
	var out, errw strings.Builder
	if code := Run(context.Background(), []string{"replay", "--help"}, strings.NewReader(""), &out, &errw); code != 0 {
		t.Fatalf("exit %d: %s", code, errw.String())
	}
	if !strings.Contains(out.String(), "default: the model the cassette was recorded with") {
		t.Errorf("replay --help does not say what --model defaults to:\n%s", out.String())
	}
	empty := t.TempDir()
	out.Reset()
	errw.Reset()
	code := Run(context.Background(), []string{"replay", "--all", "--dir", empty}, strings.NewReader(""), &out, &errw)
	if code != 2 {
		t.Errorf("exit %d, want 2", code)
	}
	for _, want := range []string{"replay --all: looked for scenario folders (each holding input.json) in --dir " + empty, filepath.Clean(empty), "run it in a clone of todoharness, or give --dir"} {
		if !strings.Contains(errw.String(), want) {
			t.Errorf("the error lacks %q: %s", want, errw.String())
		}
	}
}
