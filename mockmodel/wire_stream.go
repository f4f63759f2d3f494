package mockmodel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/todoharness/todoharness/internal/textcut"
)

// What the wires share: an SSE writer, the walk of a turn's deltas as
// blocks (open, deltas, close), the faults, and the retry hint on errors.

// sseWriter writes server-sent events and flushes each one.
type sseWriter struct {
	w   http.ResponseWriter
	rc  *http.ResponseController
	buf bytes.Buffer
	// sep ends an event: "\n\n", or "\r\n\r\n" as Gemini sends it.
	sep string
}

// newSSE answers 200 text/event-stream.
func newSSE(w http.ResponseWriter, sep string) *sseWriter {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sseWriter{w: w, rc: http.NewResponseController(w), sep: sep}
}

// send writes one event: an "event:" line when event is not empty, and v as
// JSON on one "data:" line. It reports whether the write succeeded.
func (s *sseWriter) send(event string, v any) bool {
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	return s.sendRaw(event, b)
}

func (s *sseWriter) sendRaw(event string, data []byte) bool {
	s.buf.Reset()
	nl := "\n"
	if s.sep == "\r\n\r\n" {
		nl = "\r\n"
	}
	if event != "" {
		s.buf.WriteString("event: ")
		s.buf.WriteString(event)
		s.buf.WriteString(nl)
	}
	s.buf.WriteString("data: ")
	s.buf.Write(data)
	s.buf.WriteString(s.sep)
	if _, err := s.w.Write(s.buf.Bytes()); err != nil {
		return false
	}
	return s.rc.Flush() == nil
}

// blockRef names one block of a turn: its reasoning, its text, or one of
// its tool calls.
type blockRef struct {
	kind deltaKind // deltaReasoning, deltaText or deltaCallStart
	call int       // index into plan.calls for a tool call
}

// blockSink receives a turn as blocks. Each method reports whether its
// write succeeded; false stops the walk.
type blockSink interface {
	open(b blockRef) bool
	// delta is not called for the empty first delta of a tool call (its
	// open carries the id and the name).
	delta(b blockRef, text string) bool
	close(b blockRef) bool
}

// walk sends the first upto deltas of p to sink as blocks: a block opens
// at its first delta and closes when the next one opens; if complete, the
// last block is closed too. It stops, returning false, when ctx is done or
// the sink fails.
func (p *plan) walk(ctx context.Context, upto int, complete bool, sink blockSink) bool {
	var cur blockRef
	open := false
	for _, d := range p.deltas[:upto] {
		if ctx.Err() != nil {
			return false
		}
		b := blockRef{kind: d.kind}
		if d.kind == deltaCallStart || d.kind == deltaCallArgs {
			b = blockRef{kind: deltaCallStart, call: d.call}
		}
		if !open || b != cur {
			if open && !sink.close(cur) {
				return false
			}
			cur, open = b, true
			if !sink.open(b) {
				return false
			}
		}
		if d.kind != deltaCallStart && !sink.delta(b, d.text) {
			return false
		}
	}
	if complete && open {
		return sink.close(cur)
	}
	return true
}

// streamTurn walks pl through sink, honouring the turn's fault: a
// close-mid-stream turn sends the first half of its deltas and drops the
// connection, a hang sends them and waits for the request to be
// cancelled. A complete turn closes its last block and calls finish.
func streamTurn(r *http.Request, pl *plan, sink blockSink, finish func() bool) {
	ctx := r.Context()
	if pl.fault == FaultCloseMidStream || pl.fault == FaultHang {
		if !pl.walk(ctx, pl.cut(), false, sink) {
			return
		}
		if h, ok := sink.(interface{ flushHeld() bool }); ok && !h.flushHeld() {
			return
		}
		if pl.fault == FaultHang {
			<-ctx.Done()
			return
		}
		// Drop the connection without finishing the chunked body.
		panic(http.ErrAbortHandler)
	}
	if pl.walk(ctx, len(pl.deltas), true, sink) {
		finish()
	}
}

// completeTurn writes a non-streaming answer body, honouring the turn's
// fault: close-mid-stream writes half of it and drops the connection, hang
// sends the headers and waits for the request to be cancelled.
func completeTurn(w http.ResponseWriter, r *http.Request, pl *plan, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	switch pl.fault {
	case FaultCloseMidStream:
		w.Header().Set("Content-Length", strconv.Itoa(len(b)))
		w.WriteHeader(http.StatusOK)
		_, _ = w.Write(b[:len(b)/2])
		_ = http.NewResponseController(w).Flush()
		panic(http.ErrAbortHandler)
	case FaultHang:
		w.WriteHeader(http.StatusOK)
		_ = http.NewResponseController(w).Flush()
		<-r.Context().Done()
		return
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// noRetry tells the SDKs that honour it (OpenAI's and Anthropic's) not to
// retry a refusal: retrying would consume the next turns of the script. An
// injected http-500 fault stays retryable, as a real 500 is.
func noRetry(w http.ResponseWriter, e *RequestError) {
	if e.Code != CodeFault {
		w.Header().Set("x-should-retry", "false")
	}
}

// objectArgs is the error of a turn whose tool-call arguments are not a
// JSON object, on a wire that sends them as one (Anthropic's non-streaming
// input, Gemini's args).
func objectArgs(pl *plan) error {
	for _, c := range pl.calls {
		if !isJSONObject(c.args) {
			return errors.New("tool call " + c.id + ": rawArguments " + strconv.Quote(textcut.Truncate(c.args, 40)) + " is not a JSON object, and this wire sends arguments as an object")
		}
	}
	return nil
}

func isJSONObject(s string) bool {
	b := bytes.TrimSpace([]byte(s))
	return len(b) > 0 && b[0] == '{' && json.Valid(b)
}

// textPart is one element of a list-of-parts content: OpenAI's content
// parts, Anthropic's blocks.
type textPart struct {
	Type string  `json:"type"`
	Text *string `json:"text"`
}

// How the wires name the elements of a list content in errors: OpenAI's
// "content part"s, Anthropic's "block"s.
const (
	partNoun  = "part"
	blockNoun = "block"
)

// contentText is the text of a content value every wire accepts in the
// same three shapes: a string, null (no text), or a list of parts whose
// text is joined. A part whose type is not one of textTypes, or that has no
// text, is an error naming its index: the mock reads text only.
func contentText(raw json.RawMessage, noun string, textTypes ...string) (string, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	if raw[0] == '"' {
		var s string
		err := json.Unmarshal(raw, &s)
		return s, err
	}
	var parts []textPart
	if err := json.Unmarshal(raw, &parts); err != nil {
		return "", fmt.Errorf("want a string or a list of content %ss: %w", noun, err)
	}
	var b strings.Builder
	for i, p := range parts {
		if p.Text == nil || !slices.Contains(textTypes, p.Type) {
			kind := noun
			if noun == partNoun {
				kind = "content part"
			}
			return "", fmt.Errorf("%s %d: unsupported %s type %q (the mock reads text %ss only)", noun, i, kind, p.Type, noun)
		}
		b.WriteString(*p.Text)
	}
	return b.String(), nil
}

// compactJSON compacts raw JSON (the arguments an agent sent back), or
// returns it as is if it is not valid JSON.
func compactJSON(raw []byte) string {
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return string(raw)
	}
	return buf.String()
}
