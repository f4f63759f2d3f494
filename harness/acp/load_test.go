package acp_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/todoharness/todoharness/harness/acp"
)

// A log that opens (header, turns and invariants fine) but whose replay
// fails: the chunk of an assistant/chunk event does not decode.
const unreplayable = `{"type":"session","version":0,"id":"unreplayable","createdAt":1,"cwd":"/tmp/project"}
{"type":"turn/start","seq":0,"time":1,"data":{"turn":1,"trigger":{"kind":"message","source":{"kind":"user"}}}}
{"type":"user/message","seq":1,"time":1,"data":{"content":[{"type":"text","text":"hi"}],"source":{"kind":"user"}},"surfaceOp":"append"}
{"type":"step/start","seq":2,"time":1,"data":{"turn":1,"step":1}}
{"type":"assistant/chunk","seq":3,"time":1,"data":{"turn":1,"step":1,"chunk":5}}
{"type":"step/end","seq":4,"time":1,"data":{"turn":1,"step":1}}
{"type":"turn/end","seq":5,"time":1,"data":{"turn":1,"reason":{"kind":"completed"}}}
`

// A failed session/load leaves nothing live: a prompt on that id is refused
// as not found and appends nothing. (Before: the session was registered
// before the replay, so the prompt ran and appended a turn.)
func TestFailedLoadLeavesTheSessionClosed(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "unreplayable.jsonl")
	if err := os.WriteFile(path, []byte(unreplayable), 0o644); err != nil {
		t.Fatal(err)
	}
	model := newFake(fakeTurn{text: "should never be asked"})
	r := start(t, dir, model)
	err := r.conn.Load(r.ctx, "unreplayable", cwd)
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != -32603 {
		t.Fatalf("session/load of an unreplayable log: %v, want -32603", err)
	}
	_, err = r.conn.PromptText(r.ctx, "unreplayable", "go")
	if !errors.As(err, &re) || re.Code != acp.ErrCodeResourceNotFound {
		t.Errorf("session/prompt after a failed load: %v, want -32002", err)
	}
	r.close()
	got, rerr := os.ReadFile(path)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if string(got) != unreplayable {
		t.Errorf("the log changed after a failed load and a prompt:\n%s", got)
	}
	if n := len(model.requests()); n != 0 {
		t.Errorf("the model was asked %d times", n)
	}
}

// session/new and session/load refuse a relative cwd, naming the field.
func TestRelativeCwdIsInvalidParams(t *testing.T) {
	r := start(t, "", newFake())
	for _, c := range []string{"relative/dir", ".", "~/x"} {
		_, err := r.conn.NewSessionIn(r.ctx, c)
		var re *sdk.RequestError
		if !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, "cwd") {
			t.Errorf("session/new with cwd %q: %v, want -32602 naming cwd", c, err)
		}
		if err := r.conn.Load(r.ctx, "whatever", c); !errors.As(err, &re) || re.Code != -32602 || !strings.Contains(re.Message, "cwd") {
			t.Errorf("session/load with cwd %q: %v, want -32602 naming cwd", c, err)
		}
	}
	if entries, _ := os.ReadDir(r.dir); len(entries) != 0 {
		t.Errorf("sessions created for a relative cwd: %v", entries)
	}
}

// An id that cannot name a file is not found (before: -32603 "file name too
// long").
func TestOverlongSessionIDIsNotFound(t *testing.T) {
	r := start(t, "", newFake())
	long := strings.Repeat("a", 5000)
	var re *sdk.RequestError
	if err := r.conn.Load(r.ctx, long, cwd); !errors.As(err, &re) || re.Code != acp.ErrCodeResourceNotFound {
		t.Errorf("session/load of a 5,000-character id: %v, want -32002", err)
	} else if len(re.Message) > 200 {
		t.Errorf("the message quotes the whole id (%d bytes)", len(re.Message))
	}
	if _, err := r.conn.PromptText(r.ctx, long, "go"); !errors.As(err, &re) || re.Code != acp.ErrCodeResourceNotFound {
		t.Errorf("session/prompt on a 5,000-character id: %v, want -32002", err)
	}
}

// Two loads of one session at once both replay and answer; the session is
// then live once (the second load finds it open rather than opening its log
// a second time, which the log's lock would refuse).
func TestConcurrentLoadsOfOneSession(t *testing.T) {
	r := start(t, "", writeThenDone(threeTodos()))
	id := r.newSession()
	r.prompt(id, "go")
	r.close()

	r2 := start(t, r.dir, newFake(fakeTurn{text: "again"}))
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- r2.conn.Load(r2.ctx, id, cwd) }()
	}
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("concurrent session/load: %v", err)
		}
	}
	if plans := r2.conn.Client.Plans(); len(plans) != 2 {
		t.Errorf("want the plan replayed once per load (2), got %d", len(plans))
	}
	if sr := r2.prompt(id, "more"); sr != sdk.StopReasonEndTurn {
		t.Errorf("prompt after the loads: %q", sr)
	}
}
