package conformance

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The picker takes allow_once or allow_always, exactly: a kind that only
// starts with "allow" is not an allow option.
func TestServePermissionExactKinds(t *testing.T) {
	c := &conn{root: t.TempDir()}
	opt := func(id, kind string) map[string]any { return map[string]any{"optionId": id, "name": id, "kind": kind} }
	for _, options := range [][]any{
		{opt("no", "reject_once"), opt("maybe", "allowish_maybe")},
		{opt("maybe", "allow"), opt("later", "allow_later")},
	} {
		out, _, rerr := serveJSON(t, c, "session/request_permission", map[string]any{"sessionId": "s",
			"toolCall": map[string]any{"toolCallId": "x"}, "options": options})
		if rerr != nil {
			t.Fatal(rerr)
		}
		if o := out["outcome"].(map[string]any); o["outcome"] != "cancelled" {
			t.Errorf("options %v: answered %v, want cancelled", options, out)
		}
	}
}

// A write with no content is an invalid-params error, and writes nothing.
func TestServeWriteWithoutContent(t *testing.T) {
	root := t.TempDir()
	c := &conn{root: root}
	path := filepath.Join(root, "empty.txt")
	_, _, rerr := serveJSON(t, c, "fs/write_text_file", map[string]any{"sessionId": "s", "path": path})
	if rerr == nil || rerr.Code != -32602 || !strings.Contains(rerr.Message, "content") {
		t.Errorf("answered %v, want an invalid-params error naming content", rerr)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a file was written: %v", err)
	}
}

// An agent that echoes its input (cat) is reported as echoing the runner's
// own request, not as having answered "Method not found".
func TestRunEchoingAgent(t *testing.T) {
	t.Parallel()
	rep, err := Run(context.Background(), Config{Agent: Target{Command: []string{"cat"}}, Cases: oneCase(t, "plan-basic"),
		Dialect: DialectTodoWrite, Timeout: 5 * time.Second, Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cases[0]
	if !strings.Contains(c.Error, "echo") || strings.Contains(c.Error, "Method not found") {
		t.Errorf("case error %q, want the echo named and no Method not found", c.Error)
	}
	for _, p := range c.ev.Procs {
		if len(p.ClientRequests) > 0 {
			t.Errorf("the echoed request was served as a client request: %v", p.ClientRequests)
		}
	}
}
