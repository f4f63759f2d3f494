package driver

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

func TestResolveHome(t *testing.T) {
	v := Vars{BaseURL: "http://127.0.0.1:1/v1", Cwd: t.TempDir(), Home: t.TempDir()}
	tg := Target{Command: []string{"a"}, Home: true, Files: []File{
		{Dest: "~/.cfg/agent.json", Content: `{"home": "{{.Home}}"}`, Src: "h"},
		{Dest: "local.txt", Content: "cwd", Src: "c"},
	}}
	r, err := tg.resolve(v)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(v.Home, ".cfg", "agent.json")); err != nil || string(b) != `{"home": "`+v.Home+`"}` {
		t.Errorf("home file %q %v", b, err)
	}
	if b, err := os.ReadFile(filepath.Join(v.Cwd, "local.txt")); err != nil || string(b) != "cwd" {
		t.Errorf("cwd file %q %v", b, err)
	}
	env := strings.Join(r.env, "\n")
	for _, kv := range []string{"HOME=" + v.Home, "XDG_CONFIG_HOME=" + v.Home + "/.config", "XDG_DATA_HOME=" + v.Home + "/.local/share",
		"XDG_CACHE_HOME=" + v.Home + "/.cache", "XDG_STATE_HOME=" + v.Home + "/.local/state"} {
		if !strings.Contains(env, kv) {
			t.Errorf("env lacks %s", kv)
		}
	}
	// --env comes after the home's variables, so it can override HOME.
	r, err = Target{Command: []string{"a"}, Home: true, Env: []string{"HOME=/custom"}}.resolve(v)
	if err != nil || r.env[len(r.env)-1] != "HOME=/custom" {
		t.Errorf("override: %v %v", r.env[len(r.env)-3:], err)
	}
	for name, bad := range map[string]Target{
		"escaping home file": {Command: []string{"a"}, Files: []File{{Dest: "~/../x"}}},
		"home without Home":  {Command: []string{"a"}, Home: true},
	} {
		vv := v
		if name == "home without Home" {
			vv.Home = ""
		}
		if _, err := bad.resolve(vv); err == nil {
			t.Errorf("%s: accepted", name)
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

func TestCommandPath(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "my-agent")
	os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755)
	os.WriteFile(filepath.Join(dir, "not-exec"), []byte(""), 0o644)
	env := []string{"PATH=/nonexistent", "PATH=/also-not:" + dir}
	if got := commandPath("my-agent", env); got != exe {
		t.Errorf("found %q, want %q (the last PATH of the agent's env)", got, exe)
	}
	for _, name := range []string{"not-exec", "missing", "/bin/sh", "./rel/agent"} {
		if got := commandPath(name, env); got != name {
			t.Errorf("%s: %q, want it unchanged", name, got)
		}
	}
}
