package conformance

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/todoharness/todoharness/driver"
)

// A target with PrepareHome is started once per run in a home of its own;
// every process of every case then starts in a copy of that home (the
// restart of a load case in the same copy), with the target's ~/ files
// written over it for the case, and the prepared home is removed when the
// run ends. The agent here initialises its home at its first start, as
// opencode migrates its database: it does so once, not once per case.
func TestCasesStartFromThePreparedHome(t *testing.T) {
	t.Parallel()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	starts := filepath.Join(t.TempDir(), "starts.txt")
	target := driver.Target{
		Command: []string{"/bin/sh", "-c", `if [ -e "$HOME/.agent/db" ]; then echo "copied $(cat "$HOME/.agent/db") $(cat "$HOME/.agent/config")" >> "$STARTS"; ` +
			`else mkdir -p "$HOME/.agent/data" && echo "$HOME" > "$HOME/.agent/db" && echo "init $HOME" >> "$STARTS"; fi; exec "$0" -test.run='^$'`, exe},
		Env:         []string{fakeAgentEnv + "=1", fakeModeEnv + "=ok", "GORACE=atexit_sleep_ms=0", "STARTS=" + starts},
		Files:       []driver.File{{Dest: "~/.agent/config", Content: "home={{.Home}}", Src: "inline"}},
		Home:        true,
		PrepareHome: true,
	}
	cases := append(oneCase(t, "load-replay"), oneCase(t, "replace")...)
	rep, err := Run(context.Background(), Config{Agent: target, Cases: cases, Dialect: driver.DialectTodoWrite,
		Timeout: time.Minute, Grace: time.Second, TempDir: tmp, KeepDirs: true, Validator: Compiled(sharedValidator(t))})
	if err != nil {
		t.Fatal(err)
	}
	if got := rep.FailedIDs(); len(got) > 0 {
		dumpFailures(t, rep)
		t.Fatalf("the cases fail %v", got)
	}
	b, err := os.ReadFile(starts)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 4 || !strings.HasPrefix(lines[0], "init ") {
		t.Fatalf("want the home initialised once, then three processes (a load case restarts) in copies of it:\n%s", b)
	}
	prepared := strings.TrimPrefix(lines[0], "init ")
	if _, err := os.Stat(prepared); !os.IsNotExist(err) {
		t.Errorf("the prepared home %s is left behind: %v", prepared, err)
	}
	homes := map[string]bool{}
	for _, c := range rep.Cases {
		homes[c.Evidence().Home] = true
	}
	for _, l := range lines[1:] {
		f := strings.Fields(l)
		if len(f) != 3 || f[0] != "copied" || f[1] != prepared || !homes[strings.TrimPrefix(f[2], "home=")] {
			t.Errorf("a process saw %q, want \"copied %s home=<its case's home>\" (case homes %v)", l, prepared, homes)
		}
	}
	for h := range homes {
		if st, err := os.Stat(filepath.Join(h, ".agent", "data")); err != nil || !st.IsDir() {
			t.Errorf("%s: the prepared home's folder was not copied: %v", h, err)
		}
	}
}
