package mockmodel

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/internal/textcut"
)

// Error codes of RequestError (also the "code" of the OpenAI error body).
const (
	CodeMalformed      = "malformed_request"
	CodeExhausted      = "mock_script_exhausted"
	CodeExpectFailed   = "mock_expect_failed"
	CodeFault          = "mock_fault"
	CodeInvalidScript  = "mock_script_invalid"
	CodeNotFound       = "not_found"
	CodeMethodNotAllow = "method_not_allowed"
	// CodeUnsupported: the turn cannot be said on the wire the request
	// came on (rawArguments that are not a JSON object, on a wire whose
	// tool-call arguments are an object).
	CodeUnsupported = "mock_unsupported_on_wire"
)

// RequestError is a request the mock model refused: malformed, past the end
// of the script, failing its turn's expect, or hit by an injected fault. The
// message names the script file, the turn and what differed.
type RequestError struct {
	Code    string
	Status  int // HTTP status the server answers with
	Turn    int // 0-based turn index, -1 if none
	Message string
}

func (e *RequestError) Error() string { return "mock model: " + e.Message }

// errType is the OpenAI error "type" for the code.
func (e *RequestError) errType() string {
	switch {
	case e.Status >= 500:
		return "server_error"
	case e.Code == CodeNotFound:
		return "not_found_error"
	default:
		return "invalid_request_error"
	}
}

// request is a model request in canonical form, whichever face received it.
type request struct {
	path     string
	wire     string
	errFrom  string // ToolErrorsFlag or ToolErrorsPrefix
	stream   bool
	model    string
	system   string
	messages []llm.Message
	tools    []llm.ToolSpec
	raw      keptBody
}

// player walks a script, one turn per request, and journals every request.
//
// A player made without a script (newPlayer(nil)) takes one later (play):
// until then a request waits for it. script, scriptErr and file are
// written once, before ready is closed, and read only after it is.
type player struct {
	ready      chan struct{}
	script     *compiled
	scriptErr  error
	file       string
	journal    *Journal
	mu         sync.Mutex
	next       int
	clock      func() time.Time
	totalTurns int
}

func newPlayer(s *Script) *player {
	p := &player{journal: NewJournal(), clock: time.Now, ready: make(chan struct{})}
	if s != nil {
		p.play(s)
	}
	return p
}

// play sets the script, once: it reports false when one was set already.
// A nil s is set as an invalid script (every request is refused).
func (p *player) play(s *Script) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	select {
	case <-p.ready:
		return false
	default:
	}
	p.file = s.label()
	p.script, p.scriptErr = s.compile()
	if p.script != nil {
		p.totalTurns = len(p.script.plans)
	}
	close(p.ready)
	return true
}

// wait waits until the player has its script; false when ctx ended first
// (the client went away).
func (p *player) wait(ctx context.Context) bool {
	select {
	case <-p.ready:
		return true
	default:
	}
	select {
	case <-p.ready:
		return true
	case <-ctx.Done():
		return false
	}
}

// label names the script in messages ("mock model" before it is set).
func (p *player) label() string {
	select {
	case <-p.ready:
		return p.file
	default:
		return "mock model (no script yet)"
	}
}

func (p *player) remaining() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.totalTurns - p.next
}

// taken counts the turns taken so far.
func (p *player) taken() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.next
}

func (p *player) entry(req request) JournalEntry {
	return JournalEntry{
		Time: p.clock(), Path: req.path, Wire: req.wire, Stream: req.stream, Model: req.model, System: req.system,
		Messages: req.messages, ToolErrors: req.errFrom, Tools: req.tools, Raw: req.raw.raw, RawBytes: req.raw.size, RawSHA256: req.raw.sum, RawCapped: req.raw.capped,
		TurnIndex: -1, Status: http.StatusOK,
	}
}

// refuse journals a request refused before it reached the script.
func (p *player) refuse(req request, e *RequestError) JournalEntry {
	je := p.entry(req)
	je.TurnIndex = e.Turn
	je.Error = e.Message
	je.Status = e.Status
	return p.journal.add(je)
}

// take consumes the next turn for req, checks its expect and journals the
// request; the caller waited for the script (wait). On refusal it returns a *RequestError (also journaled). fits, if
// not nil, says why the turn cannot be said on the request's wire.
func (p *player) take(req request, fits func(*plan) error) (*plan, JournalEntry, *RequestError) {
	if p.scriptErr != nil {
		e := &RequestError{Code: CodeInvalidScript, Status: http.StatusInternalServerError, Turn: -1,
			Message: fmt.Sprintf("invalid script: %v", p.scriptErr)}
		return nil, p.refuse(req, e), e
	}
	if side := p.script.side; side != nil && len(req.tools) == 0 {
		je := p.entry(req)
		je.Side = true
		return side, p.journal.add(je), nil
	}
	p.mu.Lock()
	idx := p.next
	if idx < p.totalTurns {
		p.next++
	}
	p.mu.Unlock()
	if idx >= p.totalTurns {
		e := &RequestError{Code: CodeExhausted, Status: http.StatusGone, Turn: -1,
			Message: fmt.Sprintf("%s: no turn left for request %d: the script has %d turn(s); last message: %s",
				p.file, p.journal.Len()+1, p.totalTurns, describeLast(req.messages))}
		return nil, p.refuse(req, e), e
	}
	pl := p.script.plans[idx]
	if diffs := checkExpect(pl.expect, req); len(diffs) > 0 {
		e := &RequestError{Code: CodeExpectFailed, Status: http.StatusUnprocessableEntity, Turn: idx,
			Message: fmt.Sprintf("%s: expect failed: %s", pl.where(), strings.Join(diffs, "; "))}
		return nil, p.refuse(req, e), e
	}
	if fits != nil {
		if err := fits(pl); err != nil {
			e := &RequestError{Code: CodeUnsupported, Status: http.StatusInternalServerError, Turn: idx,
				Message: fmt.Sprintf("%s: cannot be answered on the %s wire: %v", pl.where(), req.wire, err)}
			return nil, p.refuse(req, e), e
		}
	}
	if pl.fault == FaultHTTP500 {
		e := &RequestError{Code: CodeFault, Status: http.StatusInternalServerError, Turn: idx,
			Message: fmt.Sprintf("%s: injected fault %s", pl.where(), FaultHTTP500)}
		return nil, p.refuse(req, e), e
	}
	je := p.entry(req)
	je.TurnIndex = idx
	if pl.fault != FaultNone {
		je.Error = fmt.Sprintf("%s: injected fault %s", pl.where(), pl.fault)
	}
	return pl, p.journal.add(je), nil
}

// checkExpect returns one line per difference between e and req.
func checkExpect(e *Expect, req request) []string {
	if e == nil {
		return nil
	}
	var diffs []string
	var last *llm.Message
	if n := len(req.messages); n > 0 {
		last = &req.messages[n-1]
	}
	lastDesc := describeLast(req.messages)
	if e.LastMessage != "" {
		switch {
		case last == nil:
			diffs = append(diffs, fmt.Sprintf("expect.lastMessage: want %s, got no message", e.LastMessage))
		case last.Role != e.LastMessage:
			diffs = append(diffs, fmt.Sprintf("expect.lastMessage: want %s, got %s", e.LastMessage, lastDesc))
		}
	}
	if e.LastIsError != nil {
		switch {
		case last == nil || last.Role != llm.RoleTool:
			diffs = append(diffs, fmt.Sprintf("expect.lastIsError: want a tool result with isError=%v, got %s", *e.LastIsError, lastDesc))
		case last.IsError != *e.LastIsError:
			diffs = append(diffs, fmt.Sprintf("expect.lastIsError: want %v, got %v (%s)", *e.LastIsError, last.IsError, lastDesc))
		}
	}
	if e.LastContains != "" {
		if last == nil || !strings.Contains(messageText(*last), e.LastContains) {
			diffs = append(diffs, fmt.Sprintf("expect.lastContains: want text containing %q, got %s", e.LastContains, lastDesc))
		}
	}
	if len(e.ToolsInclude) > 0 {
		var offered []string
		for _, t := range req.tools {
			offered = append(offered, t.Name)
		}
		for _, want := range e.ToolsInclude {
			if !slices.Contains(offered, want) {
				diffs = append(diffs, fmt.Sprintf("expect.toolsInclude: tool %q not offered (offered: [%s])", want, strings.Join(offered, ", ")))
			}
		}
	}
	return diffs
}

// messageText is the text a message carries: its text parts, and for an
// assistant message without text, its tool calls' arguments.
func messageText(m llm.Message) string {
	if t := m.Text(); t != "" || m.Role != llm.RoleAssistant {
		return t
	}
	var b strings.Builder
	for _, c := range m.ToolCalls() {
		b.WriteString(c.Name)
		b.WriteString(c.Arguments)
	}
	return b.String()
}

// describeLast names the last message for error messages.
func describeLast(msgs []llm.Message) string {
	if len(msgs) == 0 {
		return "no message"
	}
	m := msgs[len(msgs)-1]
	text := fmt.Sprintf("%q", textcut.Truncate(messageText(m), 120))
	switch m.Role {
	case llm.RoleTool:
		return fmt.Sprintf("tool result for %s (isError=%v) %s", m.ToolCallID, m.IsError, text)
	case llm.RoleAssistant:
		if calls := m.ToolCalls(); len(calls) > 0 && m.Text() == "" {
			return fmt.Sprintf("assistant message with %d tool call(s) %s", len(calls), text)
		}
		return "assistant message " + text
	default:
		return m.Role + " message " + text
	}
}

// emit sends the chunks of the first upto deltas of p to fn; if complete, it
// then sends the block-end chunks (in block order), usage and finish.
func (p *plan) emit(upto int, complete bool, fn func(llm.Chunk) error) error {
	started := map[int]bool{}
	start := func(idx int, typ string) error {
		if started[idx] {
			return nil
		}
		started[idx] = true
		return fn(llm.Chunk{Type: llm.ChunkBlockStart, Index: llm.IntPtr(idx), BlockType: typ})
	}
	for _, d := range p.deltas[:upto] {
		var err error
		switch d.kind {
		case deltaReasoning:
			if err = start(p.reasoningIdx, llm.PartReasoning); err == nil {
				err = fn(llm.Chunk{Type: llm.ChunkReasoningDelta, Index: llm.IntPtr(p.reasoningIdx), Text: d.text})
			}
		case deltaText:
			if err = start(p.textIdx, llm.PartText); err == nil {
				err = fn(llm.Chunk{Type: llm.ChunkTextDelta, Index: llm.IntPtr(p.textIdx), Text: d.text})
			}
		case deltaCallStart, deltaCallArgs:
			c := p.calls[d.call]
			if err = start(c.block, llm.PartToolCall); err == nil {
				err = fn(llm.Chunk{Type: llm.ChunkToolCallDelta, Index: llm.IntPtr(c.block), ID: c.id, Name: c.name, ArgumentsDelta: llm.StrPtr(d.text)})
			}
		}
		if err != nil {
			return err
		}
	}
	if !complete {
		return nil
	}
	for _, part := range p.blocks() {
		if err := fn(llm.Chunk{Type: llm.ChunkBlockEnd, Index: llm.IntPtr(part.idx), Block: &part.part}); err != nil {
			return err
		}
	}
	u := p.usage
	if err := fn(llm.Chunk{Type: llm.ChunkUsage, Usage: &u}); err != nil {
		return err
	}
	return fn(llm.Chunk{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: p.finish}})
}

type indexedPart struct {
	idx  int
	part llm.Part
}

// blocks returns the complete blocks of the turn in index order.
func (p *plan) blocks() []indexedPart {
	var out []indexedPart
	if p.reasoningIdx >= 0 {
		out = append(out, indexedPart{p.reasoningIdx, llm.Part{Type: llm.PartReasoning, Text: p.reasoning}})
	}
	if p.textIdx >= 0 {
		out = append(out, indexedPart{p.textIdx, llm.Part{Type: llm.PartText, Text: p.text}})
	}
	for _, c := range p.calls {
		out = append(out, indexedPart{c.block, llm.Part{Type: llm.PartToolCall, ID: c.id, Name: c.name, Arguments: c.args}})
	}
	return out
}
