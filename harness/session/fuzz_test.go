package session

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/todoharness/todoharness/harness/todolist"
)

// FuzzReadAndCheck drives the session log reader, the invariants, the
// todo_write contract and the replay projection with arbitrary bytes. It
// holds that: reading fails only with a *LineError naming a line; whatever
// loads can be checked without panicking; a log that passes the invariants
// restores and projects; and whatever loads, written back by the writer and
// read again, gives the same events (so nothing read is lost or changed).
func FuzzReadAndCheck(f *testing.F) {
	const hdr = `{"type":"session","version":0,"id":"s","createdAt":0}` + "\n"
	const turnStart = `{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}` + "\n"
	for _, name := range []string{"head-todo-write", "head-packed-chunks"} {
		b, err := os.ReadFile(filepath.Join("..", "..", "fixtures", "interop", "deepseek-harness", name, "session.jsonl"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(hdr + turnStart + `{"type":"todo/write","seq":1,"time":2,"data":{"todos":[{"content":"a","status":"in_progress"}]}}` + "\n" + `{"type":"turn/end","seq":2,"time":0,"data":{"turn":1}}`))
	f.Add([]byte(hdr + `{"type":"text-chunks","seq0":0,"time0":5,"data":{"turn":1,"step":1,"index":0,"dt":[1],"texts":["a","b"]}}` + "\n"))
	f.Add([]byte("\xef\xbb\xbf" + hdr + "\n\n" + turnStart + `{"type":"x","seq":-1}`))
	f.Add([]byte(hdr + turnStart + `{"type":"turn/end","seq":"1","time":1.5,"data":{"turn":1}}` + "\n\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		tm := time.AfterFunc(30*time.Second, func() { panic(fmt.Sprintf("slow input %q", data)) })
		defer tm.Stop()
		ld, err := ReadContext(context.Background(), bytes.NewReader(data), "f.jsonl")
		if err != nil {
			var le *LineError
			if !errors.As(err, &le) || le.Line < 1 || le.ID == "" {
				t.Fatalf("read error without a line and rule: %v", err)
			}
			return
		}
		for i, e := range ld.Events {
			if ld.Lines[i] < 2 {
				t.Fatalf("event %d on line %d", i, ld.Lines[i])
			}
			if e.Type == TypeTodoWrite {
				for _, p := range []todolist.Policy{todolist.Single, todolist.Parallel} {
					for _, fd := range todolist.CheckWrite(e.Data, p) {
						if fd.ID == "" || fd.Msg == "" {
							t.Fatalf("finding without ID or message: %+v", fd)
						}
					}
				}
			}
		}
		if CheckEvents(ld.Events) == nil {
			l, err := Restore(ld.Header, ld.Events)
			if err != nil {
				t.Fatalf("CheckEvents passed, Restore failed: %v", err)
			}
			_ = l.DeriveMessages()
			_, _ = l.CurrentTodos()
		}

		// Written back in the runtime format (the FileStore's encoding) and
		// read again: the same log.
		var buf bytes.Buffer
		for i, v := range append([]any{ld.Header}, eventsAsAny(ld.Events)...) {
			if err := encodeJSON(&buf, v); err != nil {
				t.Fatalf("encode line %d: %v", i+1, err)
			}
			buf.WriteByte('\n')
		}
		back, err := Read(&buf, "back.jsonl")
		if err != nil {
			t.Fatalf("the writer's output does not read back: %v", err)
		}
		if !reflect.DeepEqual(back.Header, ld.Header) && !sameJSON(t, back.Header, ld.Header) {
			t.Fatalf("header\n%+v\nread back as\n%+v", ld.Header, back.Header)
		}
		if len(back.Events) != len(ld.Events) {
			t.Fatalf("%d events read back as %d", len(ld.Events), len(back.Events))
		}
		for i := range ld.Events {
			if !sameJSON(t, ld.Events[i], back.Events[i]) {
				t.Fatalf("event %d\n%+v\nread back as\n%+v", i, ld.Events[i], back.Events[i])
			}
		}
	})
}

func eventsAsAny(evs []Event) []any {
	out := make([]any, len(evs))
	for i, e := range evs {
		out[i] = e
	}
	return out
}

func sameJSON(t *testing.T, a, b any) bool {
	t.Helper()
	ja, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	jb, err := json.Marshal(b)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Equal(ja, jb)
}
