package fromlog

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/llm/cassette"
	"github.com/todoharness/todoharness/harness/llm/cassette/internal/cassettetest"
	"github.com/todoharness/todoharness/harness/llm/cassette/replay"
	"github.com/todoharness/todoharness/harness/llm/openaichat"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/internal/testutil"
)

// fixtureShaped is a two-step log as the session reader yields the
// original's committed-fixture format: times zero except inside packed
// rows, whose chunks count from 0 by their dt; assistant/message and
// tool/result nest their message.
func fixtureShaped() *session.Loaded {
	var evs []session.Event
	add := func(typ string, t int64, data string) {
		evs = append(evs, session.Event{Type: typ, Seq: len(evs), Time: t, Data: json.RawMessage(data)})
	}
	chunk := func(step int, t int64, c string) {
		add(session.TypeAssistantChunk, t, `{"turn":1,"step":`+string(rune('0'+step))+`,"chunk":`+c+`}`)
	}
	add(session.TypeTurnStart, 0, `{"turn":1}`)
	add(session.TypeStepStart, 0, `{"turn":1,"step":1}`)
	evs = append(evs, session.Event{Type: session.TypeUserMessage, Seq: len(evs), SurfaceOp: "append",
		Data: json.RawMessage(`{"content":[{"type":"text","text":"plan it"}],"source":{"kind":"user"},"role":"user","id":"u1"}`)})
	chunk(1, 0, `{"type":"block-start","index":0,"blockType":"reasoning"}`)
	// a reasoning row with dt [10, 20]: chunks at 0, 10, 30
	for _, x := range []struct {
		t    int64
		text string
	}{{0, "Pl"}, {10, "an"}, {30, "."}} {
		chunk(1, x.t, `{"type":"reasoning-delta","index":0,"text":"`+x.text+`"}`)
	}
	chunk(1, 0, `{"type":"block-start","index":1,"blockType":"tool-call"}`)
	// a tool-call row with dt [5, 7] (len(args)-1 entries): 0, 5, 12
	for _, x := range []struct {
		t   int64
		arg string
	}{{0, `{"todos":`}, {5, `[]`}, {12, `}`}} {
		chunk(1, x.t, `{"type":"tool-call-delta","index":1,"id":"call_A","name":"todo_write","argumentsDelta":`+mustJSON(x.arg)+`}`)
	}
	chunk(1, 0, `{"type":"finish","reason":{"kind":"tool-calls"}}`)
	evs = append(evs, session.Event{Type: session.TypeAssistantMessage, Seq: len(evs), SurfaceOp: "append",
		Data: json.RawMessage(`{"turn":1,"step":1,"message":{"role":"assistant","content":[{"type":"reasoning","text":"Plan."},{"type":"tool-call","id":"call_A","name":"todo_write","arguments":"{\"todos\":[]}"}],"id":"m1"}}`)})
	evs = append(evs, session.Event{Type: session.TypeToolResult, Seq: len(evs), SurfaceOp: "append",
		Data: json.RawMessage(`{"turn":1,"step":1,"message":{"source":{"kind":"tool","callId":"call_A"},"content":[{"type":"tool-result","toolCallId":"call_A","content":[{"type":"text","text":"Updated todo list: 0 pending, 0 in progress, 0 completed."}],"isError":false}],"role":"user","id":"r1"}}`)})
	add(session.TypeStepEnd, 0, `{"turn":1,"step":1}`)
	add(session.TypeStepStart, 0, `{"turn":1,"step":2}`)
	chunk(2, 0, `{"type":"block-start","index":0,"blockType":"text"}`)
	chunk(2, 0, `{"type":"text-delta","index":0,"text":"DONE"}`)
	chunk(2, 0, `{"type":"finish","reason":{"kind":"stop"}}`)
	evs = append(evs, session.Event{Type: session.TypeAssistantMessage, Seq: len(evs), SurfaceOp: "append",
		Data: json.RawMessage(`{"turn":1,"step":2,"message":{"role":"assistant","content":[{"type":"text","text":"DONE"}],"id":"m2"}}`)})
	add(session.TypeStepEnd, 0, `{"turn":1,"step":2}`)
	add(session.TypeTurnEnd, 0, `{"turn":1,"reason":{"kind":"completed"}}`)
	return &session.Loaded{Header: session.Header{Type: "session", ID: "fixture-shaped"}, Events: evs}
}

var testTools = []llm.ToolSpec{{Name: "todo_write", Description: "d", Parameters: []byte(`{"type":"object"}`)}}

// rebuildTwoSteps runs Rebuild on a two-step log and reads the cassette back.
func rebuildTwoSteps(t *testing.T, ld *session.Loaded, name string) (*Result, *cassette.File, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "c.yaml")
	res, err := Rebuild(context.Background(), Options{Log: ld, LogName: name, Out: out, Tools: testTools})
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 2 {
		t.Fatalf("%d steps, want 2", res.Steps)
	}
	f, err := cassette.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	return res, f, out
}

func mustJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// In logs without times the step's duration comes from the packed rows'
// dt, and the nested message shapes give the history the model saw.
func TestFromLogOfTheCommittedFixtureShape(t *testing.T) {
	_, f, _ := rebuildTwoSteps(t, fixtureShaped(), "x/session.jsonl")
	if got := f.Interactions[0].Response.Duration; got != 42*time.Millisecond {
		t.Errorf("step 1 lasted %s, want 42ms (reasoning row 10+20, tool-call row 5+7)", got)
	}
	if got := f.Interactions[1].Response.Duration; got != 0 {
		t.Errorf("step 2 lasted %s, want 0 (no packed row, no times)", got)
	}
	body := f.Interactions[1].Request.Body
	for _, want := range []string{`"role":"tool"`, `"tool_call_id":"call_A"`, `Updated todo list: 0 pending`, `"id":"call_A"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the second request lacks %s (the nested tool/result and assistant/message): %s", want, body)
		}
	}
}

// dtSums adds up the dt of every packed row of a log, per step, read
// straight from the file.
func dtSums(t *testing.T, path string) map[int]int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums := map[int]int64{}
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var row struct {
			Type string `json:"type"`
			Data struct {
				Step int     `json:"step"`
				DT   []int64 `json:"dt"`
			} `json:"data"`
		}
		if err := json.Unmarshal(sc.Bytes(), &row); err != nil {
			t.Fatal(err)
		}
		if strings.HasSuffix(row.Type, "-chunks") {
			for _, d := range row.Data.DT {
				sums[row.Data.Step] += d
			}
		}
	}
	return sums
}

// from-log rebuilds the original's three interop sessions: the runtime
// format of the RFC commit and the committed-fixture format of HEAD, packed
// rows included, with each step's duration from dt; each cassette replays
// the logged chunks through the client.
func TestFromLogOfTheInteropFixtures(t *testing.T) {
	root := filepath.Join(testutil.RepoRoot(), "fixtures", "interop", "deepseek-harness")
	for _, name := range []string{"todo-plan", "head-todo-write", "head-packed-chunks"} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(root, name, "session.jsonl")
			ld, err := session.LoadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			res, f, out := rebuildTwoSteps(t, ld, name+"/session.jsonl")
			if strings.HasPrefix(name, "head-") {
				sums := dtSums(t, path)
				for i, in := range f.Interactions {
					if want := time.Duration(sums[i+1]) * time.Millisecond; in.Response.Duration != want {
						t.Errorf("step %d lasted %s, want %s (the sum of its rows' dt)", i+1, in.Response.Duration, want)
					}
				}
			} else if f.Interactions[0].Response.Duration <= 0 {
				t.Errorf("step 1 lasted %s: the runtime format's times give a duration", f.Interactions[0].Response.Duration)
			}
			// Replay: the client gets the logged chunks back.
			_, c := replayClient(t, out)
			steps, _, err := Steps(ld.Events)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range steps {
				var got []llm.Chunk
				req := llm.Request{Model: res.Provenance.Model, Messages: session.DeriveMessages(flatSurface(ld.Events[:s.Index])), Tools: testTools}
				if _, err := c.Stream(context.Background(), req, func(ch llm.Chunk) error { got = append(got, ch); return nil }); err != nil {
					t.Fatalf("turn %d step %d: %v", s.Turn, s.Step, err)
				}
				if g, w := strings.Join(normChunks(got), "\n"), strings.Join(normChunks(s.Chunks), "\n"); g != w {
					t.Errorf("turn %d step %d chunks:\n got %s\nwant %s", s.Turn, s.Step, g, w)
				}
			}
		})
	}
}

func TestFromLogRebuildsTheExchangesOfASessionLog(t *testing.T) {
	f, err := os.Open(filepath.Join("testdata", "two-steps.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ld, err := session.Read(f, "two-steps.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	tools := []llm.ToolSpec{{Name: "todo_write", Description: "d", Parameters: []byte(`{"type":"object"}`)}}
	out := filepath.Join(t.TempDir(), "c.yaml")
	res, err := Rebuild(context.Background(), Options{
		Log: ld, LogName: "x/two-steps.jsonl", Out: out, Tools: tools, RecordedBy: "a test", Scenario: "s",
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Steps != 2 || len(res.Warnings) != 0 {
		t.Errorf("steps %d, warnings %v", res.Steps, res.Warnings)
	}
	p := res.Provenance
	if p.Source != cassette.SourceSessionLog || p.RealModelOutput || p.Description != "rebuilt from session log x/two-steps.jsonl recorded by a test (not claimed as real-model output)" ||
		p.RecordedAt != "2026-06-29T02:53:19Z" || p.APIHost != "api.deepseek.com" || p.Model != openaichat.DefaultModel {
		t.Errorf("provenance %+v", p)
	}

	// Replaying the rebuilt cassette through the client gives back the
	// logged chunks, step by step.
	_, c := replayClient(t, out)
	steps, _, _ := logSteps(ld.Events)
	for _, s := range steps {
		var got []llm.Chunk
		req := llm.Request{Model: openaichat.DefaultModel, Messages: session.DeriveMessages(ld.Events[:s.index]), Tools: tools}
		if _, err := c.Stream(context.Background(), req, func(ch llm.Chunk) error { got = append(got, ch); return nil }); err != nil {
			t.Fatalf("turn %d step %d: %v", s.turn, s.step, err)
		}
		if g, w := strings.Join(normChunks(got), "\n"), strings.Join(normChunks(s.chunks), "\n"); g != w {
			t.Errorf("turn %d step %d chunks:\n got %s\nwant %s", s.turn, s.step, g, w)
		}
	}
}

func TestFromLogRefusesALogWhoseChunksDisagreeWithItsMessage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "two-steps.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	bad := strings.Replace(string(data), `"content":[{"type":"text","text":"DONE"}]`, `"content":[{"type":"text","text":"NOPE"}]`, 1)
	ld, err := session.Read(strings.NewReader(bad), "bad.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	_, err = Rebuild(context.Background(), Options{Log: ld, LogName: "bad.jsonl", Out: filepath.Join(t.TempDir(), "c.yaml")})
	if err == nil || !strings.Contains(err.Error(), "turn 1 step 2: the rebuilt answer assembles to") {
		t.Errorf("got %v", err)
	}
}

// replayClient is an llm client answered by a replay of the cassette at path.
func replayClient(t *testing.T, path string) (*replay.Player, *openaichat.Client) {
	t.Helper()
	p, err := replay.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Stop() })
	return p, cassettetest.Client(t, p, p.Provenance())
}
