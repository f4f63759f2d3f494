package driver

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// serveJSON runs one client-side request through the runner's answer.
func serveJSON(t *testing.T, c *conn, method string, params any) (map[string]any, string, *RPCError) {
	t.Helper()
	b, _ := json.Marshal(params)
	res, detail, rerr := c.serve(method, b)
	if res == nil {
		return nil, detail, rerr
	}
	rb, _ := json.Marshal(res)
	var out map[string]any
	if err := json.Unmarshal(rb, &out); err != nil {
		t.Fatal(err)
	}
	return out, detail, rerr
}

func TestServePermission(t *testing.T) {
	c := &conn{root: t.TempDir()}
	opt := func(id, kind string) map[string]any { return map[string]any{"optionId": id, "name": id, "kind": kind} }
	for _, tc := range []struct {
		name    string
		options []any
		want    string // optionId, or "cancelled"
	}{
		{"allow_once first", []any{opt("no", "reject_once"), opt("always", "allow_always"), opt("once", "allow_once")}, "once"},
		{"allow_always when there is no allow_once", []any{opt("no", "reject_once"), opt("never", "reject_always"), opt("always", "allow_always")}, "always"},
		{"another allow-like kind is not allow", []any{opt("no", "reject_once"), opt("yes", "allow_for_session")}, "cancelled"},
		{"never a reject option", []any{opt("no", "reject_once"), opt("never", "reject_always")}, "cancelled"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, detail, rerr := serveJSON(t, c, "session/request_permission", map[string]any{"sessionId": "s",
				"toolCall": map[string]any{"toolCallId": "x"}, "options": tc.options})
			if rerr != nil {
				t.Fatal(rerr)
			}
			o := out["outcome"].(map[string]any)
			got := o["outcome"].(string)
			if got == "selected" {
				got = o["optionId"].(string)
			}
			if got != tc.want {
				t.Errorf("answered %v, want %s", out, tc.want)
			}
			if detail == "" {
				t.Error("no detail for the transcript")
			}
		})
	}
	if _, _, rerr := serveJSON(t, c, "session/request_permission", map[string]any{"options": []any{}}); rerr == nil || rerr.Code != -32602 {
		t.Errorf("no options: %v", rerr)
	}
}

func TestServeFS(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	c := &conn{root: root}
	os.WriteFile(filepath.Join(root, "in.txt"), []byte("one\ntwo\nthree\n"), 0o644)
	os.WriteFile(filepath.Join(outside, "secret.txt"), []byte("secret"), 0o644)
	os.Symlink(outside, filepath.Join(root, "escape"))                                   // a folder link out
	os.Symlink(filepath.Join(outside, "secret.txt"), filepath.Join(root, "secret-link")) // a file link out
	os.Symlink(filepath.Join(outside, "nothing-yet"), filepath.Join(root, "dangling"))   // points out, nowhere yet
	os.MkdirAll(filepath.Join(root, "sub"), 0o755)
	os.Symlink("sub", filepath.Join(root, "sub-link"))                          // stays inside
	os.Symlink(filepath.Join(root, "sub"), filepath.Join(root, "abs-sub-link")) // inside, but absolute: refused

	read := func(path string, extra map[string]any) (string, *RPCError) {
		p := map[string]any{"sessionId": "s", "path": path}
		for k, v := range extra {
			p[k] = v
		}
		out, _, rerr := serveJSON(t, c, "fs/read_text_file", p)
		if rerr != nil {
			return "", rerr
		}
		return out["content"].(string), nil
	}
	if got, err := read(filepath.Join(root, "in.txt"), nil); err != nil || got != "one\ntwo\nthree\n" {
		t.Errorf("read: %q %v", got, err)
	}
	if got, err := read(filepath.Join(root, "in.txt"), map[string]any{"line": 2, "limit": 1}); err != nil || got != "two\n" {
		t.Errorf("read line 2 limit 1: %q %v", got, err)
	}
	if _, err := read(filepath.Join(root, "missing.txt"), nil); err == nil || err.Code != -32603 {
		t.Errorf("missing file: %v", err)
	}
	for _, bad := range []string{
		"/etc/passwd",
		filepath.Join(root, "..", filepath.Base(outside), "secret.txt"),
		"relative.txt",
		filepath.Join(root, "escape", "secret.txt"),
		filepath.Join(root, "secret-link"),
	} {
		if got, err := read(bad, nil); err == nil || err.Code != -32602 {
			t.Errorf("read %s: answered %q %v, want an invalid-params error", bad, got, err)
		}
	}

	write := func(path, content string) *RPCError {
		_, _, rerr := serveJSON(t, c, "fs/write_text_file", map[string]any{"sessionId": "s", "path": path, "content": content})
		return rerr
	}
	if err := write(filepath.Join(root, "new", "dir", "w.txt"), "written"); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(root, "new", "dir", "w.txt")); err != nil || string(b) != "written" {
		t.Errorf("written: %q %v", b, err)
	}
	if err := write(filepath.Join(root, "sub-link", "ok.txt"), "fine"); err != nil {
		t.Errorf("a symlink that stays inside: %v", err)
	}
	for _, bad := range []string{
		filepath.Join(outside, "w.txt"),
		filepath.Join(root, "escape", "w.txt"),
		filepath.Join(root, "escape", "deeper", "w.txt"),
		filepath.Join(root, "dangling"),
		filepath.Join(root, "secret-link"),
		filepath.Join(root, "abs-sub-link", "w.txt"),
	} {
		if err := write(bad, "pwned"); err == nil || err.Code != -32602 || !strings.Contains(err.Message, "working directory") {
			t.Errorf("write %s: %v, want an invalid-params error naming the working directory", bad, err)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(outside, "secret.txt")); string(b) != "secret" {
		t.Errorf("a file outside was overwritten: %q", b)
	}
	entries, _ := os.ReadDir(outside)
	if len(entries) != 1 {
		t.Errorf("files appeared outside the cwd: %v", entries)
	}
}

func TestServeUnknownMethod(t *testing.T) {
	c := &conn{root: t.TempDir()}
	for _, m := range []string{"terminal/create", "session/whatever", "fs/delete_file"} {
		if _, _, err := serveJSON(t, c, m, map[string]any{}); err == nil || err.Code != -32601 || !strings.Contains(err.Message, m) {
			t.Errorf("%s: %v", m, err)
		}
	}
}
