package fromlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"sync"
	"time"

	vcr "gopkg.in/dnaeon/go-vcr.v3/cassette"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/llm/cassette"
	"github.com/todoharness/todoharness/harness/llm/cassette/record"
	"github.com/todoharness/todoharness/harness/llm/openaichat"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/internal/jsonx"
)

// Options configures Rebuild.
type Options struct {
	// Log is the session log to rebuild from (session.LoadFile).
	Log *session.Loaded
	// LogName names the log in the provenance ("todo-plan/session.jsonl").
	LogName string
	// Out is the cassette file to write (must end in .yaml).
	Out string
	// Tools are the tools every request offers (the shipped composition's
	// specs: builtin.Compose("")).
	Tools []llm.ToolSpec
	// Model is the model of every request (openaichat.DefaultModel when empty).
	Model string
	// BaseURL is the API the requests are addressed to (openaichat.DefaultBaseURL
	// when empty); replay must use the same.
	BaseURL string
	// System is the system prompt of every request ("" sends none, as the
	// reference agent does).
	System string
	// RecordedBy completes the provenance description: "rebuilt from
	// session log <LogName> recorded by <RecordedBy>".
	RecordedBy string
	// RealModelOutput says the log's assistant chunks were produced by a
	// real model (true for the interop DeepSeek log).
	RealModelOutput bool
	// Scenario names the e2e scenario the cassette belongs to, if any.
	Scenario string
}

// Result describes a rebuilt cassette.
type Result struct {
	Provenance cassette.Provenance
	// Steps is the number of exchanges written (one per model step).
	Steps int
	// Warnings are differences worth a look that did not stop the rebuild
	// (a step without chunks, chunk sequences the client emits differently).
	Warnings []string
}

// logStep is one model step of a session log.
type logStep struct {
	turn, step int
	index      int   // index of the step/start event
	time       int64 // of the step/start event (Unix ms)
	last       int64 // of the last chunk
	// In logs without times (the original's committed-fixture format) the
	// only timing is the packed rows' per-chunk dt, which the reader turns
	// into times counted from 0 in each row: relative sums the increases,
	// prev is the last chunk's time.
	relative, prev int64
	chunks         []llm.Chunk
	message        *session.AssistantMessage
}

// Step is one model step of a session log, for tools that replay a
// log's model answers another way (snapshot run serves them from the mock
// model): its chunks (packed chunk rows arrive expanded by the session
// reader) and its assistant/message.
type Step struct {
	Turn, Step int
	// Index is the index in the log's events of the step/start event.
	Index int
	// Duration runs from the step's start to its last chunk (zero in logs
	// without times).
	Duration time.Duration
	Chunks   []llm.Chunk
	// Message is the step's assistant/message (nil when the log has none).
	Message *session.AssistantMessage
}

// Steps returns the model steps of a log that have assistant/chunk
// events, in order, and a warning for each step left out (no chunks: a
// failed model call).
func Steps(events []session.Event) ([]Step, []string, error) {
	steps, warnings, err := logSteps(events)
	if err != nil {
		return nil, nil, err
	}
	out := make([]Step, len(steps))
	for i, s := range steps {
		out[i] = Step{Turn: s.turn, Step: s.step, Index: s.index, Duration: s.duration(), Chunks: s.chunks, Message: s.message}
	}
	return out, warnings, nil
}

// Rebuild rebuilds the model's HTTP exchanges from a session log and writes
// them as a cassette. For each step with assistant/chunk events, the request
// is the model history derived from the surface events before the step
// (session.DeriveMessages) plus opts.Tools, opts.Model and opts.System, and
// the response is an SSE body rebuilt from the step's chunks:
// reasoning-delta -> delta.reasoning_content, text-delta -> delta.content,
// tool-call-delta -> delta.tool_calls (id, type and name on a call's first
// delta), then a last chunk with finish_reason and usage, then [DONE].
//
// The requests are produced by the llm client itself, through a recording
// Recorder whose real transport answers with the rebuilt bodies, so the
// cassette holds exactly the bytes the client sends and replays through the
// same matcher as a live recording. Each rebuilt answer is checked: what the
// client assembles from it must equal the step's assistant/message content.
func Rebuild(ctx context.Context, opts Options) (*Result, error) {
	if opts.Log == nil {
		return nil, errors.New("cassette from-log: no session log")
	}
	if opts.Model == "" {
		opts.Model = openaichat.DefaultModel
	}
	if opts.BaseURL == "" {
		opts.BaseURL = openaichat.DefaultBaseURL
	}
	steps, warnings, err := logSteps(opts.Log.Events)
	if err != nil {
		return nil, fmt.Errorf("cassette from-log %s: %w", opts.LogName, err)
	}
	if len(steps) == 0 {
		return nil, fmt.Errorf("cassette from-log %s: no model step with assistant/chunk events", opts.LogName)
	}
	bodies := make([][]byte, len(steps))
	for i, s := range steps {
		if bodies[i], err = sseBody(s, opts.Model, opts.Log.Header.ID); err != nil {
			return nil, fmt.Errorf("cassette from-log %s: turn %d step %d: %w", opts.LogName, s.turn, s.step, err)
		}
	}
	serve := &scriptedTransport{bodies: bodies}
	// The latency saved is the original's (step start to last chunk), not
	// the rebuild's, so the cassette is the same on every rebuild.
	latency := func(i *vcr.Interaction) error {
		if i.ID >= 0 && i.ID < len(steps) {
			i.Response.Duration = steps[i.ID].duration()
		}
		return nil
	}
	rec, err := record.Start(record.Options{Path: opts.Out, Provenance: provenanceOf(opts), RealTransport: serve, BeforeSave: latency})
	if err != nil {
		return nil, err
	}
	client, err := openaichat.NewClient(openaichat.ClientConfig{BaseURL: opts.BaseURL, Model: opts.Model, HTTPClient: rec.Client()})
	if err != nil {
		return nil, err
	}
	for _, s := range steps {
		warning, err := askStep(ctx, client, opts, s)
		if err != nil {
			return nil, err
		}
		if warning != "" {
			warnings = append(warnings, warning)
		}
	}
	if err := rec.Stop(); err != nil {
		return nil, err
	}
	return &Result{Provenance: rec.Provenance(), Steps: len(steps), Warnings: warnings}, nil
}

// provenanceOf is the provenance of a cassette rebuilt from opts.Log.
func provenanceOf(opts Options) cassette.Provenance {
	desc := "rebuilt from session log " + opts.LogName
	if opts.RecordedBy != "" {
		desc += " recorded by " + opts.RecordedBy
	}
	if !opts.RealModelOutput {
		desc += " (not claimed as real-model output)"
	}
	return cassette.Provenance{
		Source:          cassette.SourceSessionLog,
		RealModelOutput: opts.RealModelOutput,
		Description:     desc,
		BaseURL:         opts.BaseURL,
		Model:           opts.Model,
		RecordedAt:      time.UnixMilli(opts.Log.Header.CreatedAt).UTC().Format(time.RFC3339),
		Scenario:        opts.Scenario,
		SessionLog:      opts.LogName,
	}
}

// askStep makes the request of step s through client (which records it) and
// checks the rebuilt answer: what the client assembles must equal the
// step's assistant/message content (an error otherwise); a different chunk
// sequence is only a warning.
func askStep(ctx context.Context, client *openaichat.Client, opts Options, s *logStep) (warning string, err error) {
	req := llm.Request{
		Model:    opts.Model,
		System:   opts.System,
		Messages: session.DeriveMessages(flatSurface(opts.Log.Events[:s.index])),
		Tools:    opts.Tools,
	}
	var got []llm.Chunk
	resp, err := client.Stream(ctx, req, func(c llm.Chunk) error {
		got = append(got, c)
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("cassette from-log %s: turn %d step %d: the client cannot read the rebuilt answer: %w", opts.LogName, s.turn, s.step, err)
	}
	if s.message != nil && !sameContent(resp.Content, s.message.Content) {
		a, _ := json.Marshal(resp.Content)
		b, _ := json.Marshal(s.message.Content)
		return "", fmt.Errorf("cassette from-log %s: turn %d step %d: the rebuilt answer assembles to %s, the log's assistant/message is %s", opts.LogName, s.turn, s.step, a, b)
	}
	if !reflect.DeepEqual(normChunks(got), normChunks(s.chunks)) {
		return fmt.Sprintf("turn %d step %d: the client emits %d chunks for the rebuilt answer, the log has %d (same content)", s.turn, s.step, len(got), len(s.chunks)), nil
	}
	return "", nil
}

// duration is the time from the step's start to its last chunk; in logs
// without times, the sum of the packed rows' dt (zero when there are none).
func (s *logStep) duration() time.Duration {
	if s.time == 0 && s.relative > 0 {
		return time.Duration(s.relative) * time.Millisecond
	}
	if s.last <= s.time {
		return 0
	}
	return time.Duration(s.last-s.time) * time.Millisecond
}

// logSteps collects the model steps of a log, in order.
func logSteps(events []session.Event) ([]*logStep, []string, error) {
	var out []*logStep
	var warnings []string
	open := map[[2]int]*logStep{}
	for i, e := range events {
		switch e.Type {
		case session.TypeStepStart:
			var d session.Step
			if err := e.Decode(&d); err != nil {
				return nil, nil, err
			}
			s := &logStep{turn: d.Turn, step: d.Step, index: i, time: e.Time}
			open[[2]int{d.Turn, d.Step}] = s
			out = append(out, s)
		case session.TypeAssistantChunk:
			var d session.AssistantChunk
			if err := e.Decode(&d); err != nil {
				return nil, nil, err
			}
			s, ok := open[[2]int{d.Turn, d.Step}]
			if !ok {
				return nil, nil, fmt.Errorf("event seq %d: assistant/chunk for turn %d step %d outside that step", e.Seq, d.Turn, d.Step)
			}
			s.chunks = append(s.chunks, d.Chunk)
			s.last = e.Time
			if s.time == 0 {
				// A time below the previous one starts a new row.
				if e.Time >= s.prev {
					s.relative += e.Time - s.prev
				} else {
					s.relative += e.Time
				}
				s.prev = e.Time
			}
		case session.TypeAssistantMessage:
			var d session.AssistantMessage
			if err := e.Decode(&d); err != nil {
				return nil, nil, err
			}
			if len(d.Content) == 0 {
				// The original's committed-fixture format nests the
				// message: {"turn", "step", "message": {"role",
				// "content", ...}, "usage"}.
				var nested struct {
					Message struct {
						Content []llm.Part `json:"content"`
					} `json:"message"`
				}
				if err := json.Unmarshal(e.Data, &nested); err == nil {
					d.Content = nested.Message.Content
				}
			}
			if s, ok := open[[2]int{d.Turn, d.Step}]; ok {
				s.message = &d
			}
		}
	}
	kept := out[:0]
	for _, s := range out {
		if len(s.chunks) == 0 {
			warnings = append(warnings, fmt.Sprintf("turn %d step %d has no assistant/chunk events (a failed model call?): left out", s.turn, s.step))
			continue
		}
		kept = append(kept, s)
	}
	return kept, warnings, nil
}

// flatSurface rewrites the surface events the original's committed-fixture
// format nests ({"message": {"content": ...}} in assistant/message and
// tool/result, the result parts as tool-result parts) in today's flat shape,
// so that session.DeriveMessages derives the history the model saw. Events
// already flat are kept as they are.
func flatSurface(events []session.Event) []session.Event {
	type toolResultPart struct {
		Type       string     `json:"type"`
		ToolCallID string     `json:"toolCallId"`
		Content    []llm.Part `json:"content"`
		IsError    bool       `json:"isError"`
	}
	var nested struct {
		Turn    int `json:"turn"`
		Step    int `json:"step"`
		Message *struct {
			Content json.RawMessage `json:"content"`
		} `json:"message"`
		Usage *llm.Usage `json:"usage,omitempty"`
	}
	out := make([]session.Event, 0, len(events))
	for _, e := range events {
		if e.Type != session.TypeAssistantMessage && e.Type != session.TypeToolResult {
			out = append(out, e)
			continue
		}
		nested.Message, nested.Usage = nil, nil
		if json.Unmarshal(e.Data, &nested) != nil || nested.Message == nil {
			out = append(out, e)
			continue
		}
		if e.Type == session.TypeAssistantMessage {
			var content []llm.Part
			if json.Unmarshal(nested.Message.Content, &content) != nil {
				out = append(out, e)
				continue
			}
			d, err := json.Marshal(session.AssistantMessage{Turn: nested.Turn, Step: nested.Step, Content: content, Usage: nested.Usage})
			if err != nil {
				out = append(out, e)
				continue
			}
			e.Data = d
			out = append(out, e)
			continue
		}
		var parts []toolResultPart
		if json.Unmarshal(nested.Message.Content, &parts) != nil {
			out = append(out, e)
			continue
		}
		for _, p := range parts {
			if p.Type != "tool-result" {
				continue
			}
			d, err := json.Marshal(session.ToolResult{Turn: nested.Turn, Step: nested.Step, CallID: p.ToolCallID, Content: p.Content, IsError: p.IsError})
			if err != nil {
				continue
			}
			f := e
			f.Data = d
			out = append(out, f)
		}
	}
	return out
}

// sameContent compares assembled content ignoring empty parts' order-free
// details: the JSON forms must be equal.
func sameContent(a, b []llm.Part) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}

// normChunks renders chunks as JSON lines, for comparing sequences.
func normChunks(cs []llm.Chunk) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		b, _ := json.Marshal(c)
		out[i] = string(b)
	}
	return out
}

// wireFinish maps a finish kind back to an OpenAI finish_reason.
func wireFinish(kind string) string {
	switch kind {
	case llm.FinishToolCalls:
		return "tool_calls"
	case llm.FinishLength:
		return "length"
	case llm.FinishContentFilter:
		return "content_filter"
	case llm.FinishError:
		return "insufficient_system_resource"
	default:
		return "stop"
	}
}

// sseChunk is one chat.completion.chunk, fields in DeepSeek's order.
type sseChunk struct {
	ID      string      `json:"id"`
	Object  string      `json:"object"`
	Created int64       `json:"created"`
	Model   string      `json:"model"`
	Choices []sseChoice `json:"choices"`
	Usage   any         `json:"usage,omitempty"`
}

type sseChoice struct {
	Index        int            `json:"index"`
	Delta        map[string]any `json:"delta"`
	FinishReason *string        `json:"finish_reason"`
}

// sseBody rebuilds the SSE answer of one step from its chunks.
func sseBody(s *logStep, model, sessionID string) ([]byte, error) {
	w := &sseWriter{
		id:      fmt.Sprintf("rebuilt-%s-t%d-s%d", sessionID, s.turn, s.step),
		created: s.time / 1000, model: model, first: true, wireIdx: map[int]int{},
	}
	var usage *llm.Usage
	finish := ""
	for _, c := range s.chunks {
		switch c.Type {
		case llm.ChunkUsage:
			if c.Usage != nil {
				u := *c.Usage
				usage = &u
			}
		case llm.ChunkFinish:
			if c.Reason != nil {
				finish = c.Reason.Kind
			}
		default:
			if err := w.chunk(c); err != nil {
				return nil, err
			}
		}
	}
	if finish == "" {
		return nil, errors.New("no finish chunk: the step did not complete")
	}
	reason := wireFinish(finish)
	if err := w.write([]sseChoice{{Delta: map[string]any{}, FinishReason: &reason}}, wireUsage(usage)); err != nil {
		return nil, err
	}
	w.buf.WriteString("data: [DONE]\n\n")
	return w.buf.Bytes(), nil
}

// sseWriter writes the chat.completion.chunk events of one rebuilt answer.
type sseWriter struct {
	buf     bytes.Buffer
	id      string
	created int64
	model   string
	first   bool        // no delta written yet: the next carries the role
	wireIdx map[int]int // block index -> tool_calls index
}

// write writes one event.
func (w *sseWriter) write(choices []sseChoice, usage any) error {
	b, err := jsonx.Marshal(sseChunk{ID: w.id, Object: "chat.completion.chunk", Created: w.created, Model: w.model, Choices: choices, Usage: usage})
	if err != nil {
		return err
	}
	w.buf.WriteString("data: ")
	w.buf.Write(b)
	w.buf.WriteString("\n\n")
	return nil
}

// delta writes one delta event, the first with the assistant role.
func (w *sseWriter) delta(d map[string]any) error {
	if w.first {
		d["role"] = "assistant"
		w.first = false
	}
	return w.write([]sseChoice{{Delta: d}}, nil)
}

// chunk writes the delta of a reasoning, text or tool-call chunk (block
// starts and ends are derived by the client from the deltas: nothing on
// the wire).
func (w *sseWriter) chunk(c llm.Chunk) error {
	switch c.Type {
	case llm.ChunkReasoningDelta:
		return w.delta(map[string]any{"reasoning_content": c.Text})
	case llm.ChunkTextDelta:
		return w.delta(map[string]any{"content": c.Text})
	case llm.ChunkToolCallDelta:
		return w.delta(map[string]any{"tool_calls": []any{w.toolCall(c)}})
	case llm.ChunkBlockStart, llm.ChunkBlockEnd:
		return nil
	default:
		return fmt.Errorf("unknown chunk type %q", c.Type)
	}
}

// toolCall is the tool_calls entry of a tool-call delta: id, type and name
// on a call's first delta.
func (w *sseWriter) toolCall(c llm.Chunk) map[string]any {
	idx := 0
	if c.Index != nil {
		idx = *c.Index
	}
	args := ""
	if c.ArgumentsDelta != nil {
		args = *c.ArgumentsDelta
	}
	n, seen := w.wireIdx[idx]
	tc := map[string]any{}
	if !seen {
		n = len(w.wireIdx)
		w.wireIdx[idx] = n
		tc["id"] = c.ID
		tc["type"] = "function"
		tc["function"] = map[string]any{"name": c.Name, "arguments": args}
	} else {
		tc["function"] = map[string]any{"arguments": args}
	}
	tc["index"] = n
	return tc
}

// wireUsage is the usage of the last event in DeepSeek's shape (nil, left
// out, when the step reported none).
func wireUsage(usage *llm.Usage) any {
	if usage == nil {
		return nil
	}
	prompt := usage.InputTokens + usage.CacheReadTokens
	return map[string]any{
		"prompt_tokens":            prompt,
		"completion_tokens":        usage.OutputTokens,
		"total_tokens":             prompt + usage.OutputTokens,
		"prompt_cache_hit_tokens":  usage.CacheReadTokens,
		"prompt_cache_miss_tokens": usage.InputTokens,
		"prompt_tokens_details":    map[string]any{"cached_tokens": usage.CacheReadTokens},
		"completion_tokens_details": map[string]any{
			"reasoning_tokens": usage.ReasoningTokens,
		},
	}
}

// scriptedTransport answers the n-th request with the n-th body, as a
// DeepSeek chat-completions stream.
type scriptedTransport struct {
	mu     sync.Mutex
	bodies [][]byte
	n      int
}

func (t *scriptedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil {
		_, _ = io.Copy(io.Discard, req.Body)
		req.Body.Close()
	}
	t.mu.Lock()
	n := t.n
	t.n++
	t.mu.Unlock()
	if n >= len(t.bodies) {
		return nil, fmt.Errorf("cassette from-log: request %d but the log has only %d model steps", n+1, len(t.bodies))
	}
	h := http.Header{}
	h.Set("Content-Type", "text/event-stream; charset=utf-8")
	h.Set("Cache-Control", "no-cache")
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(t.bodies[n])), ContentLength: int64(len(t.bodies[n])),
		Request: req,
	}, nil
}
