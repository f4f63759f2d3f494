package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fakeNPM writes an npm stand-in: script is its body; it is run as
// `npm install --prefix DIR ... PKG@latest...`.
func fakeNPM(t *testing.T, script string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "npm")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+script), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPeersRows(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test starts fake npm and agent processes")
	}
	// The gemini preset's package "installs" a gemini command that exits at
	// once; the codex preset's install fails.
	npm := fakeNPM(t, `dir="$3"
case "$*" in
*@google/gemini-cli@latest*)
  mkdir -p "$dir/node_modules/.bin" "$dir/node_modules/@google/gemini-cli"
  echo '{"name":"@google/gemini-cli","version":"9.9.9"}' > "$dir/node_modules/@google/gemini-cli/package.json"
  printf '#!/bin/sh\necho "gemini: cannot reach its server" >&2\nexit 3\n' > "$dir/node_modules/.bin/gemini"
  chmod +x "$dir/node_modules/.bin/gemini" ;;
*@zed-industries/claude-code-acp@latest*)
  mkdir -p "$dir/node_modules" ;;
*) echo "npm error 404 Not Found - GET https://registry/codex" >&2; exit 1 ;;
esac
`)
	cache := t.TempDir()
	var out, errw bytes.Buffer
	page := filepath.Join(cache, "peers.html")
	err := runPeers(context.Background(), &out, &errw, &peersOptions{cache: cache, npm: npm, only: []string{"codex", "gemini", "claude"},
		run: runFlags{timeout: 3 * time.Second, parallel: 4}, installTime: time.Minute, html: page})
	var ec exitCode
	if !errors.As(err, &ec) || ec != 1 {
		t.Errorf("exit %v, want 1 (an agent could not be run)", err)
	}
	table := out.String()
	rows := map[string]string{}
	for _, l := range strings.Split(table, "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			rows[f[0]] = l
		}
	}
	for preset, want := range map[string][]string{
		"codex":  {"install failed", "404 Not Found"},
		"gemini": {"9.9.9", "did not start", "cannot reach its server"},
		"claude": {"not installed: no claude-code-acp command"},
	} {
		for _, s := range want {
			if !strings.Contains(rows[preset], s) {
				t.Errorf("%s row lacks %q:\n%s\nstderr:\n%s", preset, s, table, errw.String())
			}
		}
	}
	md, err := os.ReadFile(filepath.Join(cache, "summary.md"))
	if err != nil || !strings.Contains(string(md), "| gemini | Gemini CLI | 9.9.9 |") {
		t.Errorf("summary.md: %v\n%s", err, md)
	}
	// --html: a matrix row per agent, the one that did not install saying so.
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(html), `<tr><td class="name">`); n != 3 || !strings.Contains(string(html), "404 Not Found") {
		t.Errorf("peers.html: %d matrix rows, want 3, with the failed install's reason", n)
	}
	if _, err := os.Stat(filepath.Join(cache, "gemini", "report.json")); err != nil {
		t.Errorf("no report for the agent that ran: %v", err)
	}
	if err := runPeers(context.Background(), &out, &errw, &peersOptions{cache: cache, npm: npm, only: []string{"nope"}}); err == nil {
		t.Error("an unknown preset was accepted")
	}
}

// An agent's package version and npm's failure text are the agents' and
// the registry's words: the table shows them as text (no escape sequence
// reaches the terminal), and summary.md keeps each in its cell, loading
// nothing (no remote image, no HTML, no forged column).
func TestPeersEscapeAgentText(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test starts fake npm and agent processes")
	}
	const version = `1.0 \u001b]52;c;ZXZpbA==\u0007 | ![x](https://evil.example/p.png) <img src=x> \n::error title=forged::x`
	npm := fakeNPM(t, `dir="$3"
case "$*" in
*@google/gemini-cli@latest*)
  mkdir -p "$dir/node_modules/.bin" "$dir/node_modules/@google/gemini-cli"
  printf '%s' '{"name":"@google/gemini-cli","version":"`+version+`"}' > "$dir/node_modules/@google/gemini-cli/package.json"
  printf '#!/bin/sh\nexit 3\n' > "$dir/node_modules/.bin/gemini"
  chmod +x "$dir/node_modules/.bin/gemini" ;;
*) printf 'npm error \033]0;title\007 | ![y](https://evil.example/q.png)\n' >&2; exit 1 ;;
esac
`)
	cache := t.TempDir()
	var out, errw bytes.Buffer
	_ = runPeers(context.Background(), &out, &errw, &peersOptions{cache: cache, npm: npm, only: []string{"codex", "gemini"},
		run: runFlags{timeout: 3 * time.Second, parallel: 2}, installTime: time.Minute})
	if strings.ContainsAny(out.String(), "\x1b\a") {
		t.Errorf("the table holds an escape sequence:\n%q", out.String())
	}
	for _, want := range []string{`1.0 \x1b]52;c;ZXZpbA==\x07 | ![x](https://evil.example/p.png) <img src=x> \n::error title=forged::x`, `npm error \x1b]0;title\x07`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the table does not show %q:\n%s", want, out.String())
		}
	}
	md, err := os.ReadFile(filepath.Join(cache, "summary.md"))
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range strings.Split(strings.TrimSpace(string(md)), "\n") {
		if n := strings.Count(l, "|") - strings.Count(l, `\|`); n != 11 {
			t.Errorf("summary.md line %d has %d cell borders, want 11: %q", i+1, n, l)
		}
		for _, bad := range []string{"\x1b", "\a", "![", " <img", "](http"} {
			if strings.Contains(l, bad) {
				t.Errorf("summary.md line %d holds %q unescaped: %q", i+1, bad, l)
			}
		}
	}
}

// With --node auto and a system node older than 22, the Node agents run on
// the Node npm installs under the cache (first on their PATH), and the
// output says so; with --node system, or a system node of 22 or later, on
// the system's.
func TestPeersNodeAgentsRunOnASupportedNode(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: this test starts fake npm, node and agent processes")
	}
	pkg := nodePackage(runtime.GOOS, runtime.GOARCH)
	if pkg == "" {
		t.Skip("no npm package of Node for " + runtime.GOOS + "/" + runtime.GOARCH)
	}
	seen := filepath.Join(t.TempDir(), "seen")
	// The fake npm installs the platform's Node package (its node prints
	// v24.1.0) and a gemini that records which node it found, then exits.
	npm := fakeNPM(t, `dir="$3"
echo "$*" >> "`+seen+`.npm"
case "$*" in
*`+pkg+`@24*)
  mkdir -p "$dir/node_modules/`+pkg+`/bin"
  printf '#!/bin/sh\necho v24.1.0\n' > "$dir/node_modules/`+pkg+`/bin/node"
  chmod +x "$dir/node_modules/`+pkg+`/bin/node" ;;
*@google/gemini-cli@latest*)
  mkdir -p "$dir/node_modules/.bin" "$dir/node_modules/@google/gemini-cli"
  echo '{"name":"@google/gemini-cli","version":"9.9.9"}' > "$dir/node_modules/@google/gemini-cli/package.json"
  printf '#!/bin/sh\nnode --version >> "`+seen+`"\nexit 3\n' > "$dir/node_modules/.bin/gemini"
  chmod +x "$dir/node_modules/.bin/gemini" ;;
esac
`)
	sysNode := func(version string) {
		d := t.TempDir()
		if err := os.WriteFile(filepath.Join(d, "node"), []byte("#!/bin/sh\necho "+version+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", d+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	run := func(node string) (string, string, string) {
		t.Helper()
		_ = os.Remove(seen)
		_ = os.Remove(seen + ".npm")
		cache := t.TempDir()
		var out, errw bytes.Buffer
		_ = runPeers(context.Background(), &out, &errw, &peersOptions{cache: cache, npm: npm, only: []string{"gemini"}, node: node,
			run: runFlags{timeout: 3 * time.Second, parallel: 1}, installTime: time.Minute})
		b, _ := os.ReadFile(seen)
		md, _ := os.ReadFile(filepath.Join(cache, "summary.md"))
		return string(b), out.String(), string(md)
	}
	sysNode("v20.20.2")
	seenBy, out, md := run(peersNodeAuto)
	if strings.Contains(seenBy, "v20.20.2") || !strings.Contains(seenBy, "v24.1.0") {
		t.Errorf("--node auto, system node v20.20.2: the agent ran on %q, want the npm Node v24.1.0", seenBy)
	}
	if want := "run on Node v24.1.0 from npm " + pkg; !strings.Contains(out, want) || !strings.Contains(out, "v20.20.2 is older than 22") {
		t.Errorf("the output does not say which Node ran the agents (want %q):\n%s", want, out)
	}
	if !strings.Contains(md, "run on Node v24.1.0 from npm") {
		t.Errorf("summary.md does not say which Node ran the agents:\n%s", md)
	}
	seenBy, out, _ = run(peersNodeSystem)
	if !strings.Contains(seenBy, "v20.20.2") || strings.Contains(out, "node:") {
		t.Errorf("--node system: the agent ran on %q (want v20.20.2), output:\n%s", seenBy, out)
	}
	if b, _ := os.ReadFile(seen + ".npm"); strings.Contains(string(b), pkg) {
		t.Errorf("--node system installed Node: %s", b)
	}
	sysNode("v22.1.0")
	seenBy, out, _ = run(peersNodeAuto)
	if !strings.Contains(seenBy, "v22.1.0") || strings.Contains(out, "node:") {
		t.Errorf("--node auto, system node v22.1.0: the agent ran on %q (want it), output:\n%s", seenBy, out)
	}
}
