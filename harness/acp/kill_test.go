package acp_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/todoharness/todoharness/harness/acp"
	"github.com/todoharness/todoharness/harness/acp/acptest"
	"github.com/todoharness/todoharness/harness/session"
)

// A real agent process is SIGKILLed in the middle of a turn, after the
// client saw tool_call, plan and tool_call_update: a new process loads the
// session and replays every update the client saw, and the log passes its
// invariants with the killed turn closed (not as completed). (Before: the
// log was buffered until turn/end, the file held only the header, and the
// load replayed nothing.)
func TestKilledTurnReloadsEverythingTheClientSaw(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	a := startAgent(t, dir, modeTodoThenHang)
	if _, err := a.conn.Init(ctx); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	id, err := a.conn.NewSessionIn(ctx, cwd)
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	go func() { _, _ = a.conn.PromptText(ctx, id, "plan it") }() // answered only by the kill
	waitFor(t, func() bool {
		return slices.Contains(acptest.UpdateKinds(a.conn.Wire.Lines()), "tool_call_update")
	})
	a.kill(t)
	seen := updateKeys(a.conn.Wire.Lines(), id, false)
	kinds := acptest.UpdateKinds(a.conn.Wire.Lines())
	for _, k := range []string{"tool_call", "plan", "tool_call_update"} {
		if !slices.Contains(kinds, k) {
			t.Fatalf("the client saw no %s before the kill: %v", k, kinds)
		}
	}

	b := startAgent(t, dir, modeTodoThenHang)
	if _, err := b.conn.Init(ctx); err != nil {
		t.Fatalf("initialize after the kill: %v", err)
	}
	if err := b.conn.Load(ctx, id, cwd); err != nil {
		t.Fatalf("session/load after the kill: %v", err)
	}
	replayed := updateKeys(b.conn.Wire.Lines(), id, true)
	if miss, i := missingFrom(seen, replayed); i >= 0 {
		t.Errorf("update %d of %d the client saw before the kill is not replayed: %s\nseen kinds %v\nreplayed kinds %v",
			i+1, len(seen), miss, kinds, acptest.UpdateKinds(b.conn.Wire.Lines()))
	}
	b.stop(t)
	lastEnd, open := checkLogFile(t, filepath.Join(dir, id+".jsonl"))
	if open {
		t.Error("after the load the log still ends inside the killed turn: it was not closed")
	}
	if lastEnd == session.TurnCompleted {
		t.Errorf("the killed turn is closed as %q", lastEnd)
	}
	t.Logf("killed turn closed as %q; %d updates seen, %d replayed", lastEnd, len(seen), len(replayed))
}

// A second agent process loading a session the first one holds is refused
// with an error naming the holder, and writes nothing; once the first one
// stopped, the second loads the session. (Before: both processes appended
// to the log, the second over the first's events.)
func TestSecondProcessLoadingAHeldSessionIsRefused(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	a := startAgent(t, dir, modeTodoThenText)
	if _, err := a.conn.Init(ctx); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	id, err := a.conn.NewSessionIn(ctx, cwd)
	if err != nil {
		t.Fatalf("session/new: %v", err)
	}
	if _, err := a.conn.PromptText(ctx, id, "first"); err != nil {
		t.Fatalf("prompt: %v", err)
	}
	path := filepath.Join(dir, id+".jsonl")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	b := startAgent(t, dir, modeTodoThenText)
	if _, err := b.conn.Init(ctx); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	err = b.conn.Load(ctx, id, cwd)
	var re *sdk.RequestError
	if !errors.As(err, &re) {
		t.Fatalf("second process: session/load of a held session = %v, want a JSON-RPC error", err)
	}
	holder := fmt.Sprintf("pid %d", a.cmd.Process.Pid)
	if !strings.Contains(re.Message, "in use by another process") || !strings.Contains(re.Message, holder) {
		t.Errorf("error %d %q does not name the holder (%s)", re.Code, re.Message, holder)
	}
	if _, err := b.conn.PromptText(ctx, id, "second"); !errors.As(err, &re) || re.Code != acp.ErrCodeResourceNotFound {
		t.Errorf("second process: prompt on the refused session = %v, want -32002", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Error("the refused process changed the log")
	}

	a.stop(t)
	if err := b.conn.Load(ctx, id, cwd); err != nil {
		t.Fatalf("second process: session/load once the holder stopped: %v", err)
	}
	if _, err := b.conn.PromptText(ctx, id, "second"); err != nil {
		t.Fatalf("second process: prompt: %v", err)
	}
	b.stop(t)
	if lastEnd, open := checkLogFile(t, path); open || lastEnd != session.TurnCompleted {
		t.Errorf("log after both: last turn %q, open %v", lastEnd, open)
	}
}
