package conformance

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestSplitCommand(t *testing.T) {
	for in, want := range map[string][]string{
		`agent --acp`:                      {"agent", "--acp"},
		`  my-agent   "a b"  'c d' e\ f  `: {"my-agent", "a b", "c d", "e f"},
		`sh -c 'echo "$X"; exit 0'`:        {"sh", "-c", `echo "$X"; exit 0`},
		`x "say \"hi\"" ''`:                {"x", `say "hi"`, ""},
		`agent --url {{.BaseURL}}/chat`:    {"agent", "--url", "{{.BaseURL}}/chat"},
	} {
		got, err := SplitCommand(in)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: %q %v, want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{``, `   `, `a 'b`, `a "b`} {
		if _, err := SplitCommand(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestResolve(t *testing.T) {
	cwd := t.TempDir()
	v := Vars{BaseURL: "http://127.0.0.1:4242/v1", URL: "http://127.0.0.1:4242", Host: "127.0.0.1", Port: "4242", Cwd: cwd, Case: "c", Model: "mock"}
	tg := Target{
		Command: []string{"agent", "--base", "{{.BaseURL}}", "--port={{.Port}}"},
		Env:     []string{"A={{.URL}}/x", "B=plain=value"},
		Files:   []File{{Dest: "cfg/{{.Case}}.toml", Content: "model = \"{{.Model}}\"\nurl = \"{{.BaseURL}}\"\n", Src: "t"}},
	}
	r, err := tg.resolve(v)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(r.argv, []string{"agent", "--base", "http://127.0.0.1:4242/v1", "--port=4242"}) {
		t.Errorf("argv %q", r.argv)
	}
	env := strings.Join(r.env, "\n")
	for _, s := range []string{"A=http://127.0.0.1:4242/x", "B=plain=value", ModelURLEnv + "=http://127.0.0.1:4242/v1"} {
		if !strings.Contains(env, s) {
			t.Errorf("env lacks %s", s)
		}
	}
	b, err := os.ReadFile(filepath.Join(cwd, "cfg", "c.toml"))
	if err != nil || string(b) != "model = \"mock\"\nurl = \"http://127.0.0.1:4242/v1\"\n" {
		t.Errorf("file %q %v", b, err)
	}
	for name, bad := range map[string]Target{
		"unknown var":   {Command: []string{"a", "{{.Nope}}"}},
		"bad env":       {Command: []string{"a"}, Env: []string{"NOEQUALS"}},
		"escaping file": {Command: []string{"a"}, Files: []File{{Dest: "../x", Content: ""}}},
		"absolute file": {Command: []string{"a"}, Files: []File{{Dest: "/tmp/x", Content: ""}}},
		"no command":    {},
	} {
		if _, err := bad.resolve(v); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	clean, err := Target{Command: []string{"a"}, CleanEnv: true, Env: []string{"K=v"}}.resolve(v)
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range clean.env {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", "HOME", "TMPDIR", "K", ModelURLEnv:
		default:
			t.Errorf("clean env leaks %s", k)
		}
	}
}

func TestParseFileFlag(t *testing.T) {
	src := filepath.Join(t.TempDir(), "a.toml")
	os.WriteFile(src, []byte("x={{.Port}}"), 0o644)
	f, err := ParseFileFlag(src + ":conf/a.toml")
	if err != nil || f.Dest != "conf/a.toml" || f.Content != "x={{.Port}}" {
		t.Errorf("%+v %v", f, err)
	}
	for _, bad := range []string{"nocolon", src + ":", ":dest", "/nonexistent/file:dest"} {
		if _, err := ParseFileFlag(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestExpectedFailuresParse(t *testing.T) {
	es, err := ParseExpectedFailures([]byte("- id: TW-COUNTS-1\n  reason: we word it differently\n"), "b.yaml")
	if err != nil || len(es) != 1 || es[0].ID != "TW-COUNTS-1" {
		t.Fatalf("%v %v", es, err)
	}
	if es, err := ParseExpectedFailures(nil, "empty.yaml"); err != nil || len(es) != 0 {
		t.Errorf("empty file: %v %v", es, err)
	}
	for _, bad := range []string{"- id: X\n", "- reason: r\n", "- {id: X, reason: r, extra: 1}\n", "id: X\n"} {
		if _, err := ParseExpectedFailures([]byte(bad), "b.yaml"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if err := validateExpected([]ExpectedFailure{{ID: "TW-PLAN-1", Reason: "r"}, {ID: "TW-PLAN-1", Reason: "r"}}, Catalogue()); err == nil {
		t.Error("duplicate entry accepted")
	}
}
