package acp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/todoharness/todoharness/harness/acp"
	"github.com/todoharness/todoharness/harness/builtin"
	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/tools"
)

// benchSession writes a session of exactly `events` events holding `writes`
// todo_write calls (one per turn, five items each) into dir, shaped like a
// real log: each turn is turn/start, user/message, step/start, text-delta
// chunks, assistant/message, tool/call, todo/write, tool/result, step/end,
// turn/end.
func benchSession(b *testing.B, dir string, events, writes int) {
	b.Helper()
	const fixed = 9 // events per turn besides the chunks
	perTurn := events / writes
	if perTurn < fixed+1 || events%writes != 0 {
		b.Fatalf("cannot shape %d events into %d turns", events, writes)
	}
	chunks := perTurn - fixed
	clock := func() int64 { return 1782701599722 }
	log, err := session.Dir{Path: dir}.Create("bench", "/work/project", session.WithClock(clock), session.WithInvariants(false))
	if err != nil {
		b.Fatal(err)
	}
	must := func(_ session.Event, err error) {
		if err != nil {
			b.Fatal(err)
		}
	}
	for turn := 1; turn <= writes; turn++ {
		must(log.Append(session.TypeTurnStart, session.TurnStart{Turn: turn, Trigger: session.Trigger{Kind: "message", Source: &session.Source{Kind: "user"}}}))
		must(log.Append(session.TypeUserMessage, session.UserMessage{Content: []llm.Part{{Type: llm.PartText, Text: "next step please"}}, Source: &session.Source{Kind: "user"}}))
		must(log.Append(session.TypeStepStart, session.Step{Turn: turn, Step: 1}))
		for c := 0; c < chunks; c++ {
			must(log.Append(session.TypeAssistantChunk, session.AssistantChunk{Turn: turn, Step: 1, Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Index: llm.IntPtr(0), Text: " word"}}))
		}
		items := make([]session.TodoItem, 5)
		for i := range items {
			items[i] = session.TodoItem{Content: fmt.Sprintf("task %d of turn %d", i, turn), Status: session.StatusPending}
		}
		items[turn%5].Status = session.StatusInProgress
		args := fmt.Sprintf(`{"todos":%s}`, mustJSON(b, items))
		must(log.Append(session.TypeAssistantMessage, session.AssistantMessage{Turn: turn, Step: 1, Content: []llm.Part{{Type: llm.PartToolCall, ID: fmt.Sprintf("call_%d", turn), Name: "todo_write", Arguments: args}}}))
		must(log.Append(session.TypeToolCall, session.ToolCall{Turn: turn, Step: 1, CallID: fmt.Sprintf("call_%d", turn), Name: "todo_write", Arguments: args}))
		must(log.Append(session.TypeTodoWrite, session.TodoWrite{Todos: items}))
		must(log.Append(session.TypeToolResult, session.ToolResult{Turn: turn, Step: 1, CallID: fmt.Sprintf("call_%d", turn), Content: []llm.Part{{Type: llm.PartText, Text: "Updated todo list: 4 pending, 1 in progress, 0 completed."}}}))
		must(log.Append(session.TypeStepEnd, session.Step{Turn: turn, Step: 1}))
		must(log.Append(session.TypeTurnEnd, session.TurnEnd{Turn: turn, Reason: session.TurnEndReason{Kind: session.TurnCompleted}}))
	}
	if n := log.Len(); n != events {
		b.Fatalf("built %d events, want %d", n, events)
	}
	if err := log.Close(); err != nil {
		b.Fatal(err)
	}
}

func mustJSON(b *testing.B, v any) string {
	b.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		b.Fatal(err)
	}
	return string(raw)
}

// BenchmarkLoad measures session/load through the bridge: a fresh bridge per
// iteration (so the log is read from disk, checked and replayed every time),
// driven by a raw JSON-RPC client that reads the agent's output until the
// load response. Reported: time and allocations per load, and updates sent.
//
//	go test -run '^$' -bench BenchmarkLoad -benchmem ./harness/acp/
//	TODOHARNESS_BENCH_LARGE=1 go test -run '^$' -bench BenchmarkLoad -benchmem -benchtime 1x ./harness/acp/
func BenchmarkLoad(b *testing.B) {
	reg, err := builtin.Compose("")
	if err != nil {
		b.Fatal(err)
	}
	for _, events := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("events=%d/writes=1000", events), func(b *testing.B) {
			if events > 100_000 && os.Getenv("TODOHARNESS_BENCH_LARGE") == "" {
				b.Skip("set TODOHARNESS_BENCH_LARGE=1 for the 1M-event load (about 15 s and 2.3 GB allocated per load)")
			}
			benchReplay(b, reg, events, initV1+`{"jsonrpc":"2.0","id":1,"method":"session/load","params":{"sessionId":"bench","cwd":"/work/project","mcpServers":[]}}`+"\n")
		})
	}
}

// benchReplay measures req (loadOnce's) over a session of events events
// and 1000 writes.
func benchReplay(b *testing.B, reg *tools.Registry, events int, req string) {
	dir := b.TempDir()
	benchSession(b, dir, events, 1000)
	var updates int
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		updates = loadOnce(b, reg, dir, []byte(req))
	}
	b.StopTimer()
	b.ReportMetric(float64(updates), "updates/op")
	b.ReportMetric(float64(events), "events/op")
}

// The initialize lines of the benchmarks' connections (id 0): v1, and v2.
const (
	initV1 = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":1,"clientCapabilities":{}}}` + "\n"
	initV2 = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":2,"info":{"name":"bench","version":"0"},"capabilities":{}}}` + "\n"
)

// BenchmarkResumeV2 is BenchmarkLoad on ACP version 2: session/resume with
// replayFrom {type: "start"}, the same history replayed as v2 updates.
//
//	go test -run '^$' -bench 'BenchmarkLoad|BenchmarkResumeV2' -benchmem ./harness/acp/
func BenchmarkResumeV2(b *testing.B) {
	reg, err := builtin.Compose("")
	if err != nil {
		b.Fatal(err)
	}
	for _, events := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("events=%d/writes=1000", events), func(b *testing.B) {
			benchReplay(b, reg, events, initV2+`{"jsonrpc":"2.0","id":1,"method":"session/resume","params":{"sessionId":"bench","cwd":"/work/project","replayFrom":{"type":"start"}}}`+"\n")
		})
	}
}

// loadOnce serves a fresh bridge over dir, writes req (an initialize, id
// 0, and the request to measure, id 1) and reads to the answer of id 1,
// returning the updates before it.
func loadOnce(b *testing.B, reg *tools.Registry, dir string, req []byte) int {
	b.Helper()
	br, err := acp.New(acp.Config{Sessions: session.Dir{Path: dir}, Model: newFake(), Tools: reg})
	if err != nil {
		b.Fatal(err)
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- br.Serve(context.Background(), inR, outW) }()
	if _, err := inW.Write(req); err != nil {
		b.Fatal(err)
	}
	sc := bufio.NewScanner(outR)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	updates := 0
	for sc.Scan() {
		line := sc.Bytes()
		if bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","id":0,`)) {
			continue // initialize's answer
		}
		if bytes.HasPrefix(line, []byte(`{"jsonrpc":"2.0","id":1,`)) {
			if !bytes.Contains(line, []byte(`"result"`)) {
				b.Fatalf("load failed: %s", line)
			}
			break
		}
		updates++
	}
	_ = inW.Close()
	go func() { _, _ = io.Copy(io.Discard, outR) }()
	if err := <-done; err != nil {
		b.Fatal(err)
	}
	_ = outW.Close()
	return updates
}

// loopModel answers every prompt with one todo_write call (five items) and,
// once the call's result is in, a short text: a prompt turn of two model
// steps, for ever.
type loopModel struct{}

func (loopModel) Stream(ctx context.Context, req llm.Request, onChunk func(llm.Chunk) error) (llm.Response, error) {
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == llm.RoleTool {
		return streamTurn(ctx, fakeTurn{text: "Done with this step of the plan."}, onChunk)
	}
	list := todos("read the code", "completed", "write the fix", "in_progress", "run the tests", "pending", "update the docs", "pending", "ship it", "pending")
	return streamTurn(ctx, fakeTurn{reasoning: "Update the plan.", calls: []fakeCall{{id: fmt.Sprintf("call_%d", len(req.Messages)), name: "todo_write", args: list}}}, onChunk)
}

// BenchmarkPromptTurn measures one prompt turn of the reference agent on
// each protocol version, over one connection and one session: a
// todo_write call (tool call, plan, result) and a short answer, read by a
// raw client to the turn's end (v1: the prompt's answer; v2: the idle
// state_update after the {} answer). Reported: time, allocations, and the
// lines and bytes the agent wrote per turn. The session log is not fsynced
// (as conform runs the agent, --fsync=false) unless
// TODOHARNESS_BENCH_FSYNC is set: the fsyncs of a turn (its tool call,
// result, list and end) would otherwise be most of its time.
//
//	go test -run '^$' -bench BenchmarkPromptTurn -benchmem -benchtime 200x -count 5 ./harness/acp/
func BenchmarkPromptTurn(b *testing.B) {
	for _, v := range []struct {
		name, init string
		end        []byte
	}{
		{"v1", initV1, []byte(`{"jsonrpc":"2.0","id":`)},
		{"v2", initV2, []byte(`"state":"idle"`)},
	} {
		b.Run(v.name, func(b *testing.B) {
			br, _ := bridgeIn(b, "", newFake(), func(c *acp.Config) {
				c.Model = loopModel{}
				c.Sessions.NoFsync = os.Getenv("TODOHARNESS_BENCH_FSYNC") == ""
			})
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan error, 1)
			go func() { done <- br.Serve(context.Background(), inR, outW) }()
			sc := bufio.NewScanner(outR)
			sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
			write := func(s string) {
				if _, err := io.WriteString(inW, s); err != nil {
					b.Fatal(err)
				}
			}
			readTo := func(sub []byte) (lines, n int) {
				for sc.Scan() {
					lines++
					n += len(sc.Bytes()) + 1
					if bytes.Contains(sc.Bytes(), sub) && !bytes.Contains(sc.Bytes(), []byte(`"result":{}`)) {
						return lines, n
					}
				}
				b.Fatalf("the agent's output ended: %v", sc.Err())
				return
			}
			write(v.init)
			readTo([]byte(`"id":0`))
			write(`{"jsonrpc":"2.0","id":1,"method":"session/new","params":{"cwd":"/work/project","mcpServers":[]}}` + "\n")
			var sid string
			for sc.Scan() {
				var r struct {
					Result struct {
						SessionID string `json:"sessionId"`
					} `json:"result"`
				}
				if json.Unmarshal(sc.Bytes(), &r) == nil && r.Result.SessionID != "" {
					sid = r.Result.SessionID
					break
				}
			}
			var lines, written int
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				write(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"session/prompt","params":{"sessionId":%q,"prompt":[{"type":"text","text":"next"}]}}`+"\n", i+2, sid))
				lines, written = readTo(v.end)
			}
			b.StopTimer()
			b.ReportMetric(float64(lines), "lines/op")
			b.ReportMetric(float64(written), "wire-B/op")
			_ = inW.Close()
			go func() { _, _ = io.Copy(io.Discard, outR) }()
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		})
	}
}
