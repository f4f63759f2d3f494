package mockmodel

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/internal/jsonx"
	"github.com/todoharness/todoharness/internal/textcut"
)

// Script is a list of model turns; turn N answers the N-th model request.
// Build one from Go values or load it from YAML with LoadScript.
type Script struct {
	// Name is an optional label for the script.
	Name string `json:"name,omitempty"`
	// Path is the file the script was loaded from (empty for Go values); error
	// messages name it.
	Path  string `json:"path,omitempty"`
	Turns []Turn `json:"turns"`
	// SideText, if not empty, makes every request that offers no tools a
	// side request: real agents ask their model for a session title, a
	// topic or next-speaker check beside the conversation, and those
	// requests carry no tools while the agent loop's always do. A side
	// request is answered with SideText (finish stop), takes no script
	// turn, and is journaled with Side set and TurnIndex -1.
	SideText string `json:"sideText,omitempty"`
}

// Turn answers one model request.
type Turn struct {
	Text      string     `json:"text,omitempty"`
	Reasoning string     `json:"reasoning,omitempty"`
	ToolCalls []ToolCall `json:"toolCalls,omitempty"`
	// Finish is stop, tool-calls, length or content-filter; empty means
	// tool-calls when the turn has tool calls, else stop.
	Finish string `json:"finish,omitempty"`
	// Usage is reported in the usage chunk; nil reports zeros.
	Usage *llm.Usage `json:"usage,omitempty"`
	// Expect, if set, is checked against the request this turn answers.
	Expect *Expect `json:"expect,omitempty"`
	// ChunkSize is the number of bytes of argument JSON per streamed
	// tool-call delta; 0 means DefaultChunkSize.
	ChunkSize int `json:"chunkSize,omitempty"`
	// Fault injects a failure instead of (part of) the answer.
	Fault Fault `json:"fault,omitempty"`
	// Line is the line of the turn in Path (0 for Go values).
	Line int `json:"line,omitempty"`
	// ReasoningDeltas and TextDeltas, if set, are the streamed pieces of
	// Reasoning and Text, in order, instead of the word split: a recorded
	// answer replayed chunk for chunk. They must join to Reasoning and
	// Text.
	ReasoningDeltas []string `json:"reasoningDeltas,omitempty"`
	TextDeltas      []string `json:"textDeltas,omitempty"`

	// lines maps a field path ("toolCalls[0].arguments") to its YAML line.
	lines map[string]int
}

// ToolCall is one tool call of a turn.
type ToolCall struct {
	// ID defaults to call_N, N the 1-based position of the call among all
	// tool calls of the script.
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Arguments must marshal (encoding/json) to a JSON object; nil means {}.
	// A json.RawMessage is sent as is (compacted).
	Arguments any `json:"arguments,omitempty"`
	// RawArguments, if not empty, is sent verbatim instead of Arguments
	// (for tests of malformed argument JSON).
	RawArguments string `json:"rawArguments,omitempty"`
	// Reject is an annotation for the conformance runner: the contract
	// requires the agent to refuse this (todo_write) call. The mock ignores
	// it and sends the call like any other.
	Reject bool `json:"reject,omitempty"`
	// ArgumentDeltas, if set, are the streamed pieces of the arguments JSON,
	// in order, instead of the ChunkSize split; they must join to the
	// arguments sent (empty pieces are dropped).
	ArgumentDeltas []string `json:"argumentDeltas,omitempty"`
}

// Expect is a check on the request a turn answers. Zero fields check nothing.
type Expect struct {
	// LastMessage is the role of the last message: tool, user, assistant or
	// system.
	LastMessage string `json:"lastMessage,omitempty"`
	// LastIsError, if set, requires the last message to be a tool result
	// whose IsError equals it.
	LastIsError *bool `json:"lastIsError,omitempty"`
	// LastContains must occur in the text of the last message.
	LastContains string `json:"lastContains,omitempty"`
	// ToolsInclude lists tool names the request must offer.
	ToolsInclude []string `json:"toolsInclude,omitempty"`
}

// Fault is an injected failure.
type Fault string

// Faults.
const (
	FaultNone           Fault = ""
	FaultCloseMidStream Fault = "close-mid-stream"
	FaultHTTP500        Fault = "http-500"
	FaultHang           Fault = "hang"
)

// DefaultChunkSize is the default number of bytes of tool-call argument JSON
// per streamed delta.
const DefaultChunkSize = 8

func validFinish(kind string) bool {
	switch kind {
	case llm.FinishStop, llm.FinishToolCalls, llm.FinishLength, llm.FinishContentFilter:
		return true
	}
	return false
}

func validLastRole(role string) bool {
	switch role {
	case llm.RoleTool, llm.RoleUser, llm.RoleAssistant, llm.RoleSystem:
		return true
	}
	return false
}

// ScriptError is an invalid script: it names the file, the line when known,
// the turn (1-based, 0 for the whole script) and the field.
type ScriptError struct {
	File  string
	Line  int
	Turn  int
	Field string
	Err   error
}

func (e *ScriptError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Turn > 0 {
		fmt.Fprintf(&b, ": turn %d", e.Turn)
	}
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *ScriptError) Unwrap() error { return e.Err }

// LoadScript reads a YAML script. Errors name the file, the line, the turn
// and the field ("script.yaml:12: turn 3: toolCalls[0].arguments: ...").
func LoadScript(path string) (*Script, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("mockmodel: load script: %w", err)
	}
	return ParseScript(data, path)
}

// ParseScript parses a YAML script; file names it in errors and becomes
// Script.Path.
func ParseScript(data []byte, file string) (*Script, error) {
	s, err := parseYAML(data, file)
	if err != nil {
		return nil, err
	}
	if _, err := s.compile(); err != nil {
		return nil, err
	}
	return s, nil
}

// Validate checks a script built from Go values (LoadScript already did).
func (s *Script) Validate() error {
	_, err := s.compile()
	return err
}

// label is how messages name the script.
// callID is the id the model gives a tool call: its own ID, else call_N,
// N its 1-based position among all the calls of the script.
func callID(call ToolCall, n int) string {
	if call.ID != "" {
		return call.ID
	}
	return fmt.Sprintf("call_%d", n)
}

// CallIDs returns the ids the model gives the tool calls of turn ti (none
// for a turn out of range).
func (s *Script) CallIDs(ti int) []string {
	var ids []string
	n := 0
	for i, t := range s.Turns {
		for _, call := range t.ToolCalls {
			n++
			if i == ti {
				ids = append(ids, callID(call, n))
			}
		}
		if i >= ti {
			break
		}
	}
	return ids
}

func (s *Script) label() string {
	switch {
	case s == nil:
		return "<nil script>"
	case s.Path != "":
		return s.Path
	case s.Name != "":
		return "script " + s.Name
	default:
		return "<script>"
	}
}

// plan is a compiled turn: everything needed to answer, precomputed.
type plan struct {
	turn   int // 0-based
	total  int
	line   int
	file   string
	expect *Expect
	fault  Fault
	finish string
	usage  llm.Usage

	reasoning string
	text      string
	calls     []planCall
	deltas    []delta
	// block indexes; -1 when absent
	reasoningIdx, textIdx int
}

type planCall struct {
	id, name, args string
	block          int
}

type deltaKind int

const (
	deltaReasoning deltaKind = iota
	deltaText
	deltaCallStart // id + name, arguments ""
	deltaCallArgs
)

// delta is one streamed piece: one SSE chunk on the wire, one chunk in the
// chunk vocabulary.
type delta struct {
	kind deltaKind
	call int // index into calls, for call deltas
	text string
}

// where names a turn in messages: "script.yaml: turn 2 of 3 (line 9)".
func (p *plan) where() string {
	if p.turn < 0 {
		return p.file + ": side request"
	}
	s := fmt.Sprintf("%s: turn %d of %d", p.file, p.turn+1, p.total)
	if p.line > 0 {
		s += fmt.Sprintf(" (line %d)", p.line)
	}
	return s
}

// cut is how many deltas a mid-stream fault lets through.
func (p *plan) cut() int {
	n := len(p.deltas) / 2
	if n == 0 && len(p.deltas) > 0 {
		n = 1
	}
	return n
}

type compiled struct {
	file  string
	plans []*plan
	// side answers side requests (nil: there are none; see Script.SideText).
	side *plan
}

func (s *Script) compile() (*compiled, error) {
	if s == nil {
		return nil, errors.New("mockmodel: nil script")
	}
	file := s.label()
	c := &compiled{file: file}
	tc := turnCompiler{file: file, total: len(s.Turns), ids: map[string]string{}}
	for ti := range s.Turns {
		p, err := tc.turn(ti, &s.Turns[ti])
		if err != nil {
			return nil, err
		}
		c.plans = append(c.plans, p)
	}
	if s.SideText != "" {
		sc, err := (&Script{Name: s.Name, Path: s.Path, Turns: []Turn{{Text: s.SideText}}}).compile()
		if err != nil {
			return nil, err
		}
		c.side = sc.plans[0]
		c.side.turn, c.side.total = -1, len(c.plans)
	}
	return c, nil
}

// turnCompiler compiles the turns of one script in order: the tool call
// ids and their count run across the turns.
type turnCompiler struct {
	file  string
	total int
	ids   map[string]string // id -> where first used
	callN int
}

// turnFailer makes the error of a turn's field.
type turnFailer func(field string, err error) error

// turn compiles turn ti.
func (tc *turnCompiler) turn(ti int, t *Turn) (*plan, error) {
	fail := func(field string, err error) error {
		line := t.lines[field]
		if line == 0 {
			line = t.Line
		}
		return &ScriptError{File: tc.file, Line: line, Turn: ti + 1, Field: field, Err: err}
	}
	p := &plan{
		turn: ti, total: tc.total, line: t.Line, file: tc.file,
		expect: t.Expect, fault: t.Fault, reasoning: t.Reasoning, text: t.Text,
		reasoningIdx: -1, textIdx: -1,
	}
	if err := checkTurn(t, p, fail); err != nil {
		return nil, err
	}
	next, err := turnTextDeltas(t, p, fail)
	if err != nil {
		return nil, err
	}
	if err := tc.calls(ti, t, p, next, fail); err != nil {
		return nil, err
	}
	p.finish = t.Finish
	if p.finish == "" {
		p.finish = llm.FinishStop
		if len(t.ToolCalls) > 0 {
			p.finish = llm.FinishToolCalls
		}
	}
	if !validFinish(p.finish) {
		return nil, fail("finish", fmt.Errorf("unknown finish %q (want stop, tool-calls, length or content-filter)", t.Finish))
	}
	return p, nil
}

// checkTurn checks a turn's usage, fault, chunk size and expectations,
// setting p's usage.
func checkTurn(t *Turn, p *plan, fail turnFailer) error {
	if t.Usage != nil {
		p.usage = *t.Usage
		if p.usage.InputTokens < 0 || p.usage.OutputTokens < 0 || p.usage.CacheReadTokens < 0 || p.usage.ReasoningTokens < 0 {
			return fail("usage", errors.New("token counts must not be negative"))
		}
	}
	switch t.Fault {
	case FaultNone, FaultCloseMidStream, FaultHTTP500, FaultHang:
	default:
		return fail("fault", fmt.Errorf("unknown fault %q (want %s, %s or %s)", t.Fault, FaultCloseMidStream, FaultHTTP500, FaultHang))
	}
	if t.ChunkSize < 0 {
		return fail("chunkSize", fmt.Errorf("must be positive, got %d", t.ChunkSize))
	}
	if e := t.Expect; e != nil {
		if e.LastMessage != "" && !validLastRole(e.LastMessage) {
			return fail("expect.lastMessage", fmt.Errorf("unknown role %q (want tool, user, assistant or system)", e.LastMessage))
		}
		for i, n := range e.ToolsInclude {
			if n == "" {
				return fail(fmt.Sprintf("expect.toolsInclude[%d]", i), errors.New("empty tool name"))
			}
		}
	}
	return nil
}

// turnTextDeltas adds the reasoning and text deltas of a turn to p; next
// is the index of the block after them.
func turnTextDeltas(t *Turn, p *plan, fail turnFailer) (next int, err error) {
	next = 1
	if t.Reasoning != "" {
		p.reasoningIdx = 0
		pieces, err := givenPieces(t.ReasoningDeltas, t.Reasoning, splitWords)
		if err != nil {
			return 0, fail("reasoningDeltas", err)
		}
		for _, w := range pieces {
			p.deltas = append(p.deltas, delta{kind: deltaReasoning, text: w})
		}
	} else if len(t.ReasoningDeltas) > 0 {
		return 0, fail("reasoningDeltas", errors.New("set without reasoning"))
	}
	if t.Text != "" {
		p.textIdx = next
		next++
		pieces, err := givenPieces(t.TextDeltas, t.Text, splitWords)
		if err != nil {
			return 0, fail("textDeltas", err)
		}
		for _, w := range pieces {
			p.deltas = append(p.deltas, delta{kind: deltaText, text: w})
		}
	} else if len(t.TextDeltas) > 0 {
		return 0, fail("textDeltas", errors.New("set without text"))
	}
	return next, nil
}

// calls adds the tool calls of turn ti to p, from block next on.
func (tc *turnCompiler) calls(ti int, t *Turn, p *plan, next int, fail turnFailer) error {
	size := t.ChunkSize
	if size == 0 {
		size = DefaultChunkSize
	}
	for ci, call := range t.ToolCalls {
		tc.callN++
		field := fmt.Sprintf("toolCalls[%d]", ci)
		if call.Name == "" {
			return fail(field+".name", errors.New("missing tool name"))
		}
		id := callID(call, tc.callN)
		here := fmt.Sprintf("turn %d %s", ti+1, field)
		if prev, dup := tc.ids[id]; dup {
			return fail(field+".id", fmt.Errorf("duplicate tool call id %q (also %s)", id, prev))
		}
		tc.ids[id] = here
		args, err := argumentsJSON(call)
		if err != nil {
			return fail(field+".arguments", err)
		}
		p.calls = append(p.calls, planCall{id: id, name: call.Name, args: args, block: next})
		next++
		p.deltas = append(p.deltas, delta{kind: deltaCallStart, call: ci})
		pieces, err := givenPieces(call.ArgumentDeltas, args, func(s string) []string { return splitBytes(s, size) })
		if err != nil {
			return fail(field+".argumentDeltas", err)
		}
		for _, piece := range pieces {
			p.deltas = append(p.deltas, delta{kind: deltaCallArgs, call: ci, text: piece})
		}
	}
	return nil
}

// givenPieces returns the pieces to stream whole: given (without empty
// pieces) when set, which must join to whole; split(whole) otherwise.
func givenPieces(given []string, whole string, split func(string) []string) ([]string, error) {
	if len(given) == 0 {
		return split(whole), nil
	}
	out := make([]string, 0, len(given))
	for _, g := range given {
		if g != "" {
			out = append(out, g)
		}
	}
	if joined := strings.Join(out, ""); joined != whole {
		return nil, fmt.Errorf("the deltas join to %q, not to %q", textcut.Truncate(joined, 60), textcut.Truncate(whole, 60))
	}
	return out, nil
}

// argumentsJSON renders a tool call's arguments as compact JSON.
func argumentsJSON(tc ToolCall) (string, error) {
	if tc.RawArguments != "" {
		return tc.RawArguments, nil
	}
	if tc.Arguments == nil {
		return "{}", nil
	}
	b, err := jsonx.Marshal(tc.Arguments)
	if err != nil {
		return "", fmt.Errorf("cannot encode as JSON: %w", err)
	}
	if len(b) == 0 || b[0] != '{' {
		return "", fmt.Errorf("must be a JSON object, got %s", textcut.Truncate(string(b), 40))
	}
	return string(b), nil
}

// splitWords splits text into word-sized pieces, each a run of whitespace
// followed by a run of non-whitespace (" user", " wants"), like the token
// deltas of a real model. Concatenating the pieces gives s back.
func splitWords(s string) []string {
	var out []string
	start := 0
	inWord := false
	for i, r := range s {
		space := r == ' ' || r == '\n' || r == '\t' || r == '\r'
		if space && inWord {
			out = append(out, s[start:i])
			start = i
			inWord = false
		} else if !space {
			inWord = true
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// splitBytes splits s into pieces of about size bytes, never inside a UTF-8
// sequence (a piece may be longer than size to finish a rune).
func splitBytes(s string, size int) []string {
	var out []string
	for len(s) > 0 {
		n := size
		if n >= len(s) {
			out = append(out, s)
			break
		}
		for n < len(s) && !isRuneStart(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
