package session

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/todoharness/todoharness/harness/llm"
)

// A log opened from disk keeps none of its loaded events in memory, and
// replays (streams) exactly what the file holds, then what was appended.
func TestOpenedLogStreamsItsLoadedEvents(t *testing.T) {
	dir := Dir{Path: t.TempDir()}
	clock := WithClock(func() int64 { return 7 })
	l, err := dir.Create("s", "/w", clock)
	if err != nil {
		t.Fatal(err)
	}
	text := func(s string) []llm.Part { return []llm.Part{{Type: llm.PartText, Text: s}} }
	turn := func(l *Log, n int) {
		t.Helper()
		for _, a := range []struct {
			typ  string
			data any
		}{
			{TypeTurnStart, TurnStart{Turn: n}},
			{TypeUserMessage, UserMessage{Content: text("hi")}},
			{TypeStepStart, Step{Turn: n, Step: 1}},
			{TypeToolCall, ToolCall{Turn: n, Step: 1, CallID: "c", Name: "todo_write", Arguments: "{}"}},
			{TypeTodoWrite, TodoWrite{Todos: []TodoItem{{Content: "t", Status: StatusPending}}}},
			{TypeToolResult, ToolResult{Turn: n, Step: 1, CallID: "c", Content: text("ok")}},
			{TypeStepEnd, Step{Turn: n, Step: 1}},
			{TypeTurnEnd, TurnEnd{Turn: n, Reason: TurnEndReason{Kind: TurnCompleted}}},
		} {
			if _, err := l.Append(a.typ, a.data); err != nil {
				t.Fatal(err)
			}
		}
	}
	turn(l, 1)
	turn(l, 2)
	want := l.Events()
	wantHistory := l.DeriveMessages()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}

	r, _, err := dir.Open("s", clock)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if len(r.events) != 0 || r.disk == nil || r.disk.count != len(want) {
		t.Fatalf("opened log holds %d events in memory (disk prefix %+v), want 0 and a prefix of %d", len(r.events), r.disk, len(want))
	}
	if got := r.Events(); !reflect.DeepEqual(got, want) {
		t.Fatalf("replayed\n%+v\nwant\n%+v", got, want)
	}
	if got := r.DeriveMessages(); !reflect.DeepEqual(got, wantHistory) {
		t.Fatalf("history after open\n%+v\nwant\n%+v", got, wantHistory)
	}
	if todos, ok := r.CurrentTodos(); !ok || len(todos) != 1 {
		t.Fatalf("current todos after open: %v %v", todos, ok)
	}
	turn(r, 3)
	all := r.Events()
	if len(all) != 3*8 || all[16].Seq != 16 || all[23].Type != TypeTurnEnd {
		t.Fatalf("after appending a turn: %d events", len(all))
	}
	if err := CheckEvents(all); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	n := 0
	err = r.Replay(ctx, func(Event) error {
		n++
		if n == 3 {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) || n > 4 {
		t.Fatalf("replay after cancel: %v after %d events", err, n)
	}
	stop := errors.New("enough")
	if err := r.Replay(context.Background(), func(Event) error { return stop }); !errors.Is(err, stop) {
		t.Fatalf("replay returns fn's error: %v", err)
	}
}
