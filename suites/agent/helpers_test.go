package agent

import (
	"context"
	"encoding/json"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/builtin"
	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/tools"
)

// step answers one model request: it may emit chunks through emit and returns
// the response (or an error).
type step func(ctx context.Context, req llm.Request, emit func(llm.Chunk) error) (llm.Response, error)

// fakeModel answers request N with steps[N] and records every request. A
// request past the end fails the spec.
type fakeModel struct {
	mu    sync.Mutex
	steps []step
	reqs  []llm.Request
}

func (m *fakeModel) Stream(ctx context.Context, req llm.Request, onChunk func(llm.Chunk) error) (llm.Response, error) {
	m.mu.Lock()
	n := len(m.reqs)
	m.reqs = append(m.reqs, req)
	m.mu.Unlock()
	if n >= len(m.steps) {
		Fail("fake model: unexpected model request")
	}
	return m.steps[n](ctx, req, onChunk)
}

func (m *fakeModel) requests() []llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]llm.Request(nil), m.reqs...)
}

// answer streams parts as block-start, one delta, block-end each, then
// finish, and returns the assembled response.
func answer(finish string, parts ...llm.Part) step {
	return func(ctx context.Context, _ llm.Request, emit func(llm.Chunk) error) (llm.Response, error) {
		asm := llm.NewAssembler()
		send := func(c llm.Chunk) error {
			asm.Add(c)
			return emit(c)
		}
		for i, p := range parts {
			if err := send(llm.Chunk{Type: llm.ChunkBlockStart, Index: llm.IntPtr(i), BlockType: p.Type}); err != nil {
				return llm.Response{}, err
			}
			var err error
			switch p.Type {
			case llm.PartToolCall:
				err = send(llm.Chunk{Type: llm.ChunkToolCallDelta, Index: llm.IntPtr(i), ID: p.ID, Name: p.Name, ArgumentsDelta: llm.StrPtr(p.Arguments)})
			case llm.PartReasoning:
				err = send(llm.Chunk{Type: llm.ChunkReasoningDelta, Index: llm.IntPtr(i), Text: p.Text})
			default:
				err = send(llm.Chunk{Type: llm.ChunkTextDelta, Index: llm.IntPtr(i), Text: p.Text})
			}
			if err != nil {
				return llm.Response{}, err
			}
		}
		for i, p := range parts {
			p := p
			if err := send(llm.Chunk{Type: llm.ChunkBlockEnd, Index: llm.IntPtr(i), Block: &p}); err != nil {
				return llm.Response{}, err
			}
		}
		if err := send(llm.Chunk{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: finish}}); err != nil {
			return llm.Response{}, err
		}
		return asm.Response(), nil
	}
}

func text(s string) llm.Part { return llm.Part{Type: llm.PartText, Text: s} }

func call(id, name string, args any) llm.Part {
	b, err := json.Marshal(args)
	Expect(err).NotTo(HaveOccurred())
	return llm.Part{Type: llm.PartToolCall, ID: id, Name: name, Arguments: string(b)}
}

func todos(items ...string) map[string]any {
	var list []map[string]string
	for i := 0; i+1 < len(items); i += 2 {
		list = append(list, map[string]string{"content": items[i], "status": items[i+1]})
	}
	return map[string]any{"todos": list}
}

func prompt(s string) []llm.Part { return []llm.Part{text(s)} }

func newLog() *session.Log {
	return session.New("s-1", "/work", session.WithClock(func() int64 { return 0 }))
}

// shippedTools is the registry of the shipped composition (todo_write).
func shippedTools() *tools.Registry {
	GinkgoHelper()
	reg, err := builtin.Compose("")
	Expect(err).NotTo(HaveOccurred())
	return reg
}

// types lists the event types of l in order.
func types(l *session.Log) []string {
	var out []string
	for _, e := range l.Events() {
		out = append(out, e.Type)
	}
	return out
}

// nonChunkTypes lists the event types of l without assistant/chunk.
func nonChunkTypes(l *session.Log) []string {
	var out []string
	for _, t := range types(l) {
		if t != session.TypeAssistantChunk {
			out = append(out, t)
		}
	}
	return out
}

func lastTurnEnd(l *session.Log) session.TurnEnd {
	GinkgoHelper()
	evs := l.Events()
	Expect(evs).NotTo(BeEmpty())
	e := evs[len(evs)-1]
	Expect(e.Type).To(Equal(session.TypeTurnEnd))
	var d session.TurnEnd
	Expect(e.Decode(&d)).To(Succeed())
	return d
}

func eventsOf(l *session.Log, typ string) []session.Event {
	var out []session.Event
	for _, e := range l.Events() {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}
