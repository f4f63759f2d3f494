package conformance

import (
	"context"
	"os"
	"path/filepath"
	"slices"
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

// A Node agent (Target.NodeCompileCache) gets one compile cache folder for
// the run, named in NODE_COMPILE_CACHE of every start, removed when the
// run ends; an agent that is no Node program, or whose environment names a
// cache already, gets none. The Node presets say they are.
func TestNodeAgentsShareACompileCacheForTheRun(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	got, drop := NodeCompileCache(Config{Agent: driver.Target{NodeCompileCache: true, Env: []string{"A=1"}}, TempDir: tmp})
	if len(got.Env) != 2 || !strings.HasPrefix(got.Env[1], NodeCompileCacheEnv+"="+filepath.Join(tmp, "conform-node-cache-")) {
		t.Fatalf("env %q: want A=1 and the cache under %s", got.Env, tmp)
	}
	dir := strings.TrimPrefix(got.Env[1], NodeCompileCacheEnv+"=")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("the cache folder: %v", err)
	}
	drop()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("the cache folder outlived the run: %v", err)
	}
	for _, a := range []driver.Target{{Env: []string{"A=1"}}, {NodeCompileCache: true, Env: []string{NodeCompileCacheEnv + "=/mine"}}} {
		if got, _ := NodeCompileCache(Config{Agent: a, TempDir: tmp}); !slices.Equal(got.Env, a.Env) {
			t.Errorf("%+v: env %q, want it unchanged", a, got.Env)
		}
	}
	// A run gives the agent the variable (its evidence names it).
	rep := runFake(t, "ok", func(c *Config) {
		c.Agent.NodeCompileCache, c.Cases, c.TempDir = true, oneCase(t, "plan-basic"), tmp
	})
	if ev := rep.Cases[0].Evidence(); !slices.Contains(ev.Run.Env, NodeCompileCacheEnv) {
		t.Errorf("the run's agent environment %q has no %s", ev.Run.Env, NodeCompileCacheEnv)
	}
	if left, _ := filepath.Glob(filepath.Join(tmp, "conform-node-cache-*")); len(left) > 0 {
		t.Errorf("left after the run: %q", left)
	}
	for _, p := range driver.Presets() {
		if want := p.Name == "gemini" || p.Name == "qwen" || strings.HasPrefix(p.Name, "claude"); p.Target().NodeCompileCache != want {
			t.Errorf("preset %s: NodeCompileCache %v, want %v", p.Name, !want, want)
		}
	}
}
