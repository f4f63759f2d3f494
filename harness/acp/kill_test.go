package acp_test

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
	"time"

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
	pendingDurableAppend(t)
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
