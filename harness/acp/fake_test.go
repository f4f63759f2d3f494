package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/todoharness/todoharness/harness/llm"
)

// fakeTurn is one scripted model answer.
type fakeTurn struct {
	reasoning string
	text      string
	calls     []fakeCall
	err       error // returned before any chunk
	hang      bool  // stream the reasoning, then wait for ctx
}

type fakeCall struct {
	id   string
	name string
	args any // marshalled to JSON; a string is used verbatim
}

// fakeModel answers request N with turn N, streaming word-sized deltas in the
// harness's chunk vocabulary. A request past the end is an error.
type fakeModel struct {
	mu    sync.Mutex
	turns []fakeTurn
	reqs  []llm.Request
}

func newFake(turns ...fakeTurn) *fakeModel { return &fakeModel{turns: turns} }

func (m *fakeModel) requests() []llm.Request {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]llm.Request(nil), m.reqs...)
}

func (m *fakeModel) Stream(ctx context.Context, req llm.Request, onChunk func(llm.Chunk) error) (llm.Response, error) {
	m.mu.Lock()
	n := len(m.reqs)
	m.reqs = append(m.reqs, req)
	if n >= len(m.turns) {
		m.mu.Unlock()
		return llm.Response{}, fmt.Errorf("fake model: request %d past the end of the script (%d turns)", n+1, len(m.turns))
	}
	t := m.turns[n]
	m.mu.Unlock()
	return streamTurn(ctx, t, onChunk)
}

// streamTurn streams one scripted answer.
func streamTurn(ctx context.Context, t fakeTurn, onChunk func(llm.Chunk) error) (llm.Response, error) {
	if t.err != nil {
		return llm.Response{}, t.err
	}
	asm := llm.NewAssembler()
	emit := func(c llm.Chunk) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		asm.Add(c)
		return onChunk(c)
	}
	idx := 0
	block := func(kind, deltaType, text string) error {
		i := idx
		idx++
		if err := emit(llm.Chunk{Type: llm.ChunkBlockStart, Index: llm.IntPtr(i), BlockType: kind}); err != nil {
			return err
		}
		for _, w := range words(text) {
			if err := emit(llm.Chunk{Type: deltaType, Index: llm.IntPtr(i), Text: w}); err != nil {
				return err
			}
		}
		return emit(llm.Chunk{Type: llm.ChunkBlockEnd, Index: llm.IntPtr(i), Block: &llm.Part{Type: kind, Text: text}})
	}
	if t.reasoning != "" {
		if err := block(llm.PartReasoning, llm.ChunkReasoningDelta, t.reasoning); err != nil {
			return llm.Response{}, err
		}
	}
	if t.hang {
		<-ctx.Done()
		return llm.Response{}, fmt.Errorf("fake model: %w", ctx.Err())
	}
	if t.text != "" {
		if err := block(llm.PartText, llm.ChunkTextDelta, t.text); err != nil {
			return llm.Response{}, err
		}
	}
	for _, c := range t.calls {
		args, ok := c.args.(string)
		if !ok {
			b, err := json.Marshal(c.args)
			if err != nil {
				return llm.Response{}, err
			}
			args = string(b)
		}
		i := idx
		idx++
		if err := emit(llm.Chunk{Type: llm.ChunkBlockStart, Index: llm.IntPtr(i), BlockType: llm.PartToolCall}); err != nil {
			return llm.Response{}, err
		}
		if err := emit(llm.Chunk{Type: llm.ChunkToolCallDelta, Index: llm.IntPtr(i), ID: c.id, Name: c.name, ArgumentsDelta: llm.StrPtr(args)}); err != nil {
			return llm.Response{}, err
		}
		if err := emit(llm.Chunk{Type: llm.ChunkBlockEnd, Index: llm.IntPtr(i), Block: &llm.Part{Type: llm.PartToolCall, ID: c.id, Name: c.name, Arguments: args}}); err != nil {
			return llm.Response{}, err
		}
	}
	finish := llm.FinishStop
	if len(t.calls) > 0 {
		finish = llm.FinishToolCalls
	}
	if err := emit(llm.Chunk{Type: llm.ChunkUsage, Usage: &llm.Usage{InputTokens: 10, OutputTokens: 5}}); err != nil {
		return llm.Response{}, err
	}
	if err := emit(llm.Chunk{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: finish}}); err != nil {
		return llm.Response{}, err
	}
	return asm.Response(), nil
}

func words(s string) []string {
	var out []string
	for len(s) > 0 {
		i := strings.IndexByte(strings.TrimLeft(s, " "), ' ')
		lead := len(s) - len(strings.TrimLeft(s, " "))
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:lead+i])
		s = s[lead+i:]
	}
	return out
}

// todos builds todo_write arguments from content/status pairs.
func todos(pairs ...string) map[string]any {
	list := []map[string]string{}
	for i := 0; i+1 < len(pairs); i += 2 {
		list = append(list, map[string]string{"content": pairs[i], "status": pairs[i+1]})
	}
	return map[string]any{"todos": list}
}

var errBoom = errors.New("upstream exploded")
