package session_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
)

func fixture(name string) string {
	return filepath.Join("..", "..", "fixtures", "interop", "deepseek-harness", name, "session.jsonl")
}

type chunkData struct {
	Turn, Step int
	Chunk      llm.Chunk
}

// The original's committed-fixture format loads: seq synthesised in file
// order with every packed chunk expanded to its own event, so the
// sourceEventSeqs the original wrote name exactly the chunks of the step.
func TestCommittedFixtureFormatLoads(t *testing.T) {
	for _, name := range []string{"head-todo-write", "head-packed-chunks"} {
		t.Run(name, func(t *testing.T) {
			ld, err := session.LoadFile(fixture(name))
			if err != nil {
				t.Fatal(err)
			}
			if ld.Header.DelegationDepth == nil || *ld.Header.DelegationDepth != 0 {
				t.Fatalf("header delegationDepth not kept: %+v", ld.Header)
			}
			if err := session.CheckEvents(ld.Events); err != nil {
				t.Fatal(err)
			}
			bySeq := map[int]session.Event{}
			for i, e := range ld.Events {
				if e.Seq != i {
					t.Fatalf("event %d has seq %d, want it synthesised in file order", i, e.Seq)
				}
				bySeq[e.Seq] = e
			}
			checked := 0
			for _, e := range ld.Events {
				if e.Type != session.TypeAssistantMessage {
					continue
				}
				var want []int
				var scope struct{ Turn, Step int }
				_ = json.Unmarshal(e.Data, &scope)
				for _, c := range ld.Events {
					var d chunkData
					if c.Type == session.TypeAssistantChunk && json.Unmarshal(c.Data, &d) == nil && d.Turn == scope.Turn && d.Step == scope.Step {
						want = append(want, c.Seq)
					}
				}
				if !slices.Equal(e.SourceEventSeqs, want) {
					t.Fatalf("assistant/message seq %d: sourceEventSeqs %v, chunks of its step are %v", e.Seq, e.SourceEventSeqs, want)
				}
				checked++
			}
			if checked != 2 {
				t.Fatalf("checked %d assistant messages, want 2", checked)
			}
			// Each block's deltas add up to the text its block-end carries.
			deltas := map[[3]int]string{}
			ends := map[[3]int]string{}
			for _, e := range ld.Events {
				var d chunkData
				if e.Type != session.TypeAssistantChunk || json.Unmarshal(e.Data, &d) != nil || d.Chunk.Index == nil {
					continue
				}
				k := [3]int{d.Turn, d.Step, *d.Chunk.Index}
				switch d.Chunk.Type {
				case llm.ChunkTextDelta, llm.ChunkReasoningDelta:
					deltas[k] += d.Chunk.Text
				case llm.ChunkToolCallDelta:
					deltas[k] += *d.Chunk.ArgumentsDelta
				case llm.ChunkBlockEnd:
					ends[k] = d.Chunk.Block.Text + d.Chunk.Block.Arguments
				}
			}
			if len(ends) < 3 {
				t.Fatalf("only %d blocks", len(ends))
			}
			for k, text := range ends {
				if deltas[k] != text {
					t.Fatalf("block %v: deltas %q, block-end %q", k, deltas[k], text)
				}
			}
		})
	}
}

func TestPackedRowInRuntimeFormat(t *testing.T) {
	log := hdr + turnStart +
		`{"type":"step/start","seq":1,"time":900,"data":{"turn":1,"step":1}}` + "\n" +
		`{"type":"text-chunks","seq0":2,"time0":1000,"data":{"turn":1,"step":1,"index":0,"dt":[10,20],"texts":["a","b","c"]}}` + "\n" +
		`{"type":"step/end","seq":5,"time":2000,"data":{"turn":1,"step":1}}` + "\n"
	ld, err := session.Read(strings.NewReader(log), "p.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, e := range ld.Events[2:5] {
		got = append(got, e.Type+" "+string(e.Data))
		if e.Seq != 2+i || e.Time != []int64{1000, 1010, 1030}[i] || ld.Lines[2+i] != 4 {
			t.Fatalf("chunk %d: seq %d time %d line %d", i, e.Seq, e.Time, ld.Lines[2+i])
		}
	}
	want := []string{
		`assistant/chunk {"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"a"}}`,
		`assistant/chunk {"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"b"}}`,
		`assistant/chunk {"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":"c"}}`,
	}
	if !slices.Equal(got, want) {
		t.Fatalf("expanded\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if err := session.CheckEvents(ld.Events); err != nil {
		t.Fatal(err)
	}
}

func TestFormatErrorsNameTheLine(t *testing.T) {
	cases := map[string]struct{ content, want string }{
		"dt of the wrong length": {hdr + `{"type":"text-chunks","data":{"turn":1,"step":1,"index":0,"dt":[1,2,3],"texts":["a"]}}` + "\n",
			`x.jsonl:2: text-chunks row: field "data.dt" has 3 entries for 1 chunks`},
		"seq missing after an event that had one": {hdr + turnStart + `{"type":"turn/end","data":{"turn":1}}` + "\n",
			`x.jsonl:3: event: missing field "seq" (the log's first event, line 2, has one)`},
		"seq in a log without seq": {hdr + `{"type":"turn/start","data":{"turn":1}}` + "\n" + `{"type":"turn/end","seq":5,"data":{"turn":1}}` + "\n",
			`x.jsonl:3: event: field "seq" 5 in a log whose first event (line 2) has none (only seq 1, continuing its numbering, may start seq envelopes)`},
		"packed row without seq0 in a runtime log": {hdr + turnStart + `{"type":"reasoning-chunks","data":{"turn":1,"step":1,"index":0,"texts":["a"]}}` + "\n",
			`x.jsonl:3: reasoning-chunks row: missing field "seq0"`},
		"packed tool call without args": {hdr + `{"type":"tool-call-chunks","data":{"turn":1,"step":1,"index":0,"texts":["a"]}}` + "\n",
			`x.jsonl:2: tool-call-chunks row: missing field "data.args"`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := session.Read(strings.NewReader(c.content), "x.jsonl")
			if err == nil || !strings.HasPrefix(err.Error(), c.want) {
				t.Fatalf("got %v\nwant %s", err, c.want)
			}
		})
	}
}

func TestHeaderExtraFieldsRoundTrip(t *testing.T) {
	line := `{"type":"session","version":0,"id":"c","createdAt":1,"cwd":"/w","delegationDepth":1,"origin":{"kind":"subagent"},"parentSession":"p"}`
	ld, err := session.Read(strings.NewReader(line+"\n"), "c.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "c.jsonl")
	s, err := session.CreateFile(path, ld.Header)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	if string(b) != line+"\n" {
		t.Fatalf("header written back as\n%s\nwant\n%s", b, line)
	}
}

// The model history of a committed-fixture log: the original's message
// shapes ({message: {content}} and tool-result parts) project like ours.
func TestCommittedFixtureHistory(t *testing.T) {
	ld, err := session.LoadFile(fixture("head-todo-write"))
	if err != nil {
		t.Fatal(err)
	}
	msgs := session.DeriveMessages(ld.Events)
	var got []string
	for _, m := range msgs {
		s := m.Role
		for _, p := range m.Content {
			s += " " + p.Type
			if p.Type == llm.PartToolCall {
				s += ":" + p.Name
			}
		}
		if m.ToolCallID != "" {
			s += " for " + m.ToolCallID
		}
		got = append(got, s)
	}
	want := []string{
		"user text", "user text",
		"assistant reasoning tool-call:todo_write",
		"tool text for call_00_UHvM5RrwIkjNJ9xh3S735164",
		"assistant reasoning text",
	}
	if !slices.Equal(got, want) {
		t.Fatalf("history\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if msgs[3].Content[0].Text != "Updated todo list: 1 pending, 2 in progress, 0 completed." || msgs[4].Content[1].Text != "DONE" {
		t.Fatalf("contents: %+v / %+v", msgs[3].Content, msgs[4].Content)
	}
}

// An agent continuing a session the original wrote appends in the runtime
// format; the log still reads, checks and replays as one.
func TestAppendingToACommittedFixtureLog(t *testing.T) {
	b, err := os.ReadFile(fixture("head-todo-write"))
	if err != nil {
		t.Fatal(err)
	}
	dir := session.Dir{Path: t.TempDir()}
	path, _ := dir.File("h")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	l, warnings, err := dir.Open("h", session.WithClock(fixedClock))
	if err != nil || len(warnings) != 0 {
		t.Fatalf("open: %v %q", err, warnings)
	}
	for _, a := range midTurn(2) {
		if _, err := l.Append(a.typ, a.data, a.opts...); err != nil {
			t.Fatal(err)
		}
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	after, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(after), string(b)) {
		t.Fatal("appending rewrote the original's lines")
	}
	ld, err := session.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ld.Events) != 115+len(midTurn(2)) || ld.Events[115].Seq != 115 {
		t.Fatalf("%d events, the first appended has seq %d", len(ld.Events), ld.Events[115].Seq)
	}
	if err := session.CheckEvents(ld.Events); err != nil {
		t.Fatal(err)
	}
	// The turn left open is closed on the next reopen, and that reads too.
	l, warnings, err = dir.Open("h")
	if err != nil || len(warnings) != 1 {
		t.Fatalf("reopen: %v %q", err, warnings)
	}
	l.Close()
	if _, err := session.LoadFile(path); err != nil {
		t.Fatal(err)
	}
}
