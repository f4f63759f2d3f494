package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/internal/buildinfo"
)

// `todoharness --version` prints buildinfo.Version on one line (the module
// version, and the VCS revision when the build recorded one: not under
// GOFLAGS=-buildvcs=false), and exits 0.
func TestVersionFlag(t *testing.T) {
	var out, errw strings.Builder
	code := Run(context.Background(), []string{"--version"}, strings.NewReader(""), &out, &errw)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errw.String())
	}
	if want := "todoharness " + buildinfo.Version() + "\n"; out.String() != want {
		t.Errorf("--version printed %q, want %q", out.String(), want)
	}
}
