package cli

import (
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/internal/termtext"
)

// Colour on a terminal; none when piped, into a file or /dev/null, or
// under NO_COLOR.
func TestUseColor(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	var b strings.Builder
	if useColor(&b, env()) {
		t.Error("colour into a buffer")
	}
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer null.Close()
	if useColor(null, env()) {
		t.Error("colour into /dev/null")
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	defer w.Close()
	if useColor(w, env()) {
		t.Error("colour into a pipe")
	}
	if runtime.GOOS != "linux" {
		t.Skip("a terminal is only recognised on Linux")
	}
	tty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal to try colour on: %v", err)
	}
	defer tty.Close()
	if !useColor(tty, env()) {
		t.Error("no colour on a terminal")
	}
	if useColor(tty, env("NO_COLOR", "1")) {
		t.Error("colour on a terminal under NO_COLOR")
	}
	// conform's escaping writer (escapeStreams) over a terminal is still
	// one: the summary keeps its colours, explore its line in place.
	if tw := termtext.NewWriter(tty, true); !useColor(tw, env()) || !onTerminal(tw) {
		t.Error("no colour on a terminal behind the escaping writer")
	}
	if onTerminal(termtext.NewWriter(w, false)) {
		t.Error("a pipe behind the escaping writer is a terminal")
	}
}
