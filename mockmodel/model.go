package mockmodel

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/todoharness/todoharness/harness/llm"
)

// Model is the in-process face of a script: an llm.Model answering one turn
// per Stream call. It is safe for concurrent use (calls take turns in the
// order they arrive).
type Model struct {
	p *player
}

var _ llm.Model = (*Model)(nil)

// NewModel returns a model playing s from its first turn. An invalid script
// makes every Stream call fail with the validation error (check it first
// with Script.Validate when building scripts in Go).
func NewModel(s *Script) *Model {
	p := newPlayer(nil)
	p.play(s) // a nil s is an invalid script here, not one to wait for
	return &Model{p: p}
}

// Journal returns the model's request journal.
func (m *Model) Journal() *Journal { return m.p.journal }

// Remaining returns the number of turns not yet used.
func (m *Model) Remaining() int { return m.p.remaining() }

// Stream answers req with the next turn: it checks the turn's expect,
// journals the request, sends the turn's chunks to onChunk and returns the
// assembled response. A request past the end of the script or failing its
// expect returns a *RequestError before any chunk. Faults: close-mid-stream
// sends the first half of the chunks and returns an error; hang sends them
// and waits for ctx.
func (m *Model) Stream(ctx context.Context, req llm.Request, onChunk func(llm.Chunk) error) (llm.Response, error) {
	if err := ctx.Err(); err != nil {
		return llm.Response{}, fmt.Errorf("mock model: %w", err)
	}
	raw, err := json.Marshal(req)
	if err != nil {
		return llm.Response{}, fmt.Errorf("mock model: encode request: %w", err)
	}
	if !m.p.wait(ctx) {
		return llm.Response{}, fmt.Errorf("mock model: %w", ctx.Err())
	}
	pl, _, rerr := m.p.take(request{
		wire: WireInProcess, errFrom: ToolErrorsFlag, stream: true, model: req.Model, system: req.System,
		messages: req.Messages, tools: req.Tools, raw: rawJSON(raw),
	}, nil)
	if rerr != nil {
		return llm.Response{}, rerr
	}
	asm := llm.NewAssembler()
	emit := func(c llm.Chunk) error {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("mock model: %s: %w", pl.where(), err)
		}
		asm.Add(c)
		if onChunk != nil {
			return onChunk(c)
		}
		return nil
	}
	switch pl.fault {
	case FaultCloseMidStream:
		if err := pl.emit(pl.cut(), false, emit); err != nil {
			return llm.Response{}, err
		}
		return llm.Response{}, fmt.Errorf("mock model: %s: injected fault %s: stream ended before finish", pl.where(), pl.fault)
	case FaultHang:
		if err := pl.emit(pl.cut(), false, emit); err != nil {
			return llm.Response{}, err
		}
		<-ctx.Done()
		return llm.Response{}, fmt.Errorf("mock model: %s: injected fault %s: %w", pl.where(), pl.fault, ctx.Err())
	}
	if err := pl.emit(len(pl.deltas), true, emit); err != nil {
		return llm.Response{}, err
	}
	return asm.Response(), nil
}
