package acp

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
)

// MaxLine is the longest JSON-RPC input line the agent accepts, its newline
// included: the SDK's reader holds at most 10 MiB (10,485,760 bytes), so a
// line is forwarded only when it and its newline fit. A longer line is read
// to its end without being kept and answered with -32600 naming this limit,
// carrying the request's id when one can be recovered; the agent keeps
// serving.
const MaxLine = 10 << 20

// maxIDLen caps the id recovered from an over-long line; a longer id is not
// recovered (the answer then carries id null).
const maxIDLen = 1024

// keepBuf is the largest line buffer kept between lines.
const keepBuf = 1 << 20

// Codes of the errors the input filter answers itself.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
)

// rpcError is a JSON-RPC error response the bridge writes itself.
type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcErrorBody    `json:"error"`
}

type rpcErrorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

var nullID = json.RawMessage("null")

// inputLine is one line of input.
type inputLine struct {
	// text is the line without its terminator; nil when over is set. It is
	// valid until the next call of next.
	text []byte
	// size is the number of bytes read for the line, terminator included.
	size int64
	// over is set when the line does not fit in the limit.
	over bool
	// id is, for an over-long line, the id recovered from it (nil: none).
	id json.RawMessage
}

// lineReader splits its input into lines of at most max bytes (newline
// included) without ever holding more than that of one line.
type lineReader struct {
	br  *bufio.Reader
	max int
	buf []byte
}

func newLineReader(in io.Reader, max int) *lineReader {
	return &lineReader{br: bufio.NewReaderSize(in, 64<<10), max: max}
}

// next reads one line. At the end of the input it returns the last,
// unterminated line (possibly empty) with io.EOF.
func (r *lineReader) next() (inputLine, error) {
	var ln inputLine
	if cap(r.buf) > keepBuf {
		r.buf = nil
	}
	buf := r.buf[:0]
	var f *idFinder
	for {
		chunk, err := r.br.ReadSlice('\n')
		ln.size += int64(len(chunk))
		switch {
		case f != nil:
			f.feed(chunk)
		case len(buf)+len(chunk) <= r.max+1: // room for a "\r\n" terminator
			buf = append(buf, chunk...)
		default:
			f = &idFinder{}
			f.feed(buf)
			f.feed(chunk)
			buf = buf[:0]
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		r.buf = buf
		if f == nil {
			text := bytes.TrimRight(buf, "\r\n")
			if len(text)+1 <= r.max {
				ln.text = text
				return ln, err
			}
			f = &idFinder{}
			f.feed(text)
		}
		ln.over, ln.id = true, f.id()
		return ln, err
	}
}

// inputFilter stands between the peer and the SDK's reader. It forwards
// well-formed JSON-RPC lines and answers every other one itself, so that the
// agent keeps serving: the SDK only logs and drops a malformed line (leaving
// the client without an answer) and stops reading for good at a line longer
// than its buffer. It also refuses every request before initialize.
type inputFilter struct {
	max         int
	initialized bool
}

// verdict is what the filter does with one line.
type verdict struct {
	msg     message   // what the line is (when forwarded)
	forward []byte    // the line to pass on, newline included
	answer  *rpcError // the error to answer instead
	drop    string    // why a line is dropped unanswered (a notification before initialize)
}

// classify decides about one line (nothing at all for a blank one).
func (f *inputFilter) classify(ln inputLine) verdict {
	if ln.over {
		id := ln.id
		if id == nil {
			id = nullID
		}
		return verdict{answer: &rpcError{JSONRPC: "2.0", ID: id, Error: rpcErrorBody{
			Code:    codeInvalidRequest,
			Message: fmt.Sprintf("Invalid request: line of %d bytes is longer than the limit of %d bytes (10 MiB, newline included)", ln.size, f.max),
			Data:    map[string]any{"error": "line too long", "size": ln.size, "limit": f.max},
		}}}
	}
	if len(bytes.TrimSpace(ln.text)) == 0 {
		return verdict{}
	}
	msg, e := checkMessage(ln.text)
	if e != nil {
		return verdict{answer: e}
	}
	if msg.method != "" && !f.initialized {
		if msg.method != sdkMethodInitialize {
			if !msg.hasID {
				return verdict{drop: fmt.Sprintf("notification %s before initialize", msg.method)}
			}
			return verdict{answer: &rpcError{JSONRPC: "2.0", ID: msg.id, Error: rpcErrorBody{
				Code:    codeInvalidRequest,
				Message: fmt.Sprintf("Invalid request: %s before initialize (send initialize first)", msg.method),
				Data:    map[string]any{"error": "not initialized", "method": msg.method},
			}}}
		}
		f.initialized = true
	}
	return verdict{msg: msg, forward: append(ln.text, '\n')}
}

// filterInput copies the lines of in that the filter forwards to out (the
// SDK's reader) and writes its answers to lw. route, when set, is offered
// each line first and takes the ones it serves itself (a v2 connection's).
// It closes out when in ends, which tells the SDK the peer went away, and
// returns the error that ended the input (nil at its end).
func filterInput(in io.Reader, out *io.PipeWriter, lw *lineWriter, log *slog.Logger, route func(line []byte, msg message) bool) error {
	lr := newLineReader(in, MaxLine)
	f := &inputFilter{max: MaxLine}
	var err error
	for {
		var ln inputLine
		ln, err = lr.next()
		v := f.classify(ln)
		switch {
		case v.answer != nil:
			log.Warn("malformed JSON-RPC input answered with an error", "code", v.answer.Error.Code, "message", v.answer.Error.Message, "id", string(v.answer.ID), "bytes", ln.size)
			if werr := lw.writeJSON(v.answer); werr != nil {
				log.Error("answer malformed input", "err", werr)
			}
		case v.drop != "":
			log.Warn("input dropped", "reason", v.drop)
		case v.forward != nil && route != nil && route(v.forward, v.msg):
		case v.forward != nil:
			if _, werr := out.Write(v.forward); werr != nil {
				err = werr
			}
		}
		if err != nil {
			break
		}
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	out.CloseWithError(err)
	return err
}

// sdkMethodInitialize is the one method served before initialize.
const sdkMethodInitialize = "initialize"

// message is what checkMessage read of a well-formed line.
type message struct {
	method string
	id     json.RawMessage // null when absent
	hasID  bool
}

// checkMessage reads one line and returns the error response for a
// malformed one: -32700 for a line that is not JSON, -32600 for JSON that is
// not a request, notification or response object (with the request's id
// when one can be read).
func checkMessage(line []byte) (message, *rpcError) {
	var msg message
	msg.id = nullID
	if !json.Valid(line) {
		return msg, &rpcError{JSONRPC: "2.0", ID: nullID, Error: rpcErrorBody{Code: codeParseError, Message: "Parse error", Data: map[string]any{"error": "invalid JSON"}}}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		return msg, &rpcError{JSONRPC: "2.0", ID: nullID, Error: rpcErrorBody{Code: codeInvalidRequest, Message: "Invalid request", Data: map[string]any{"error": "a JSON-RPC message must be a JSON object"}}}
	}
	if raw, ok := obj["id"]; ok {
		msg.hasID = true
		if !validID(raw) {
			return msg, &rpcError{JSONRPC: "2.0", ID: nullID, Error: rpcErrorBody{Code: codeInvalidRequest, Message: "Invalid request", Data: map[string]any{"error": "id must be a string, a number or null"}}}
		}
		msg.id = raw
	}
	invalid := func(text string) *rpcError {
		return &rpcError{JSONRPC: "2.0", ID: msg.id, Error: rpcErrorBody{Code: codeInvalidRequest, Message: "Invalid request", Data: map[string]any{"error": text}}}
	}
	if raw, ok := obj["method"]; ok {
		if json.Unmarshal(raw, &msg.method) != nil || msg.method == "" {
			return msg, invalid("method must be a non-empty string")
		}
		if msg.hasID && bytes.Equal(bytes.TrimSpace(msg.id), nullID) {
			// JSON-RPC 2.0 discourages a null request id; a request with
			// one would otherwise be taken for a notification and never
			// answered.
			return msg, invalid("a request's id must be a string or a number, not null")
		}
		return msg, nil
	}
	_, hasResult := obj["result"]
	_, hasError := obj["error"]
	if msg.hasID && (hasResult || hasError) {
		return msg, nil // a response to one of our requests
	}
	return msg, invalid("neither a request, a notification nor a response")
}

// validID reports whether raw (valid JSON) is a JSON-RPC id: a string, a
// number or null.
func validID(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64, nil:
		return true
	}
	return false
}

// idFinder recovers the top-level "id" of a JSON object fed to it in pieces,
// holding at most maxIDLen bytes: it tracks nesting and strings, and keeps
// only the value of a top-level key spelt exactly "id". The last such key
// wins, as with encoding/json. A key written with escapes is not recognised.
type idFinder struct {
	st      findState
	depth   int  // nesting inside the value being skipped
	inStr   bool // inside a string of the value being skipped or the key
	esc     bool // after a backslash in such a string
	key     [3]byte
	keyLen  int
	keyOver bool
	capture bool // the current value is an id's
	val     []byte
	valOver bool
	found   json.RawMessage
}

type findState uint8

const (
	fsStart   findState = iota // before the top-level value
	fsKey                      // expecting a key or the end of the object
	fsInKey                    // inside a key string
	fsColon                    // after a key
	fsValue                    // expecting a value
	fsInValue                  // inside a value
	fsNext                     // after a value: ',' or '}'
	fsDone                     // the object ended, or the input is not an object
)

// feed consumes the next piece of the line.
func (f *idFinder) feed(p []byte) {
	for i := 0; i < len(p); i++ {
		if f.st == fsDone {
			return
		}
		// Skip through string contents fast when nothing is kept.
		if f.inStr && !f.esc && !f.capture && f.st == fsInValue {
			j := bytes.IndexAny(p[i:], `"\`)
			if j < 0 {
				return
			}
			i += j
		}
		f.step(p[i])
	}
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func (f *idFinder) step(c byte) {
	switch f.st {
	case fsStart:
		switch {
		case isSpace(c):
		case c == '{':
			f.st = fsKey
		default:
			f.st = fsDone
		}
	case fsKey:
		switch {
		case isSpace(c):
		case c == '"':
			f.st, f.keyLen, f.keyOver = fsInKey, 0, false
		default: // '}' ends the object; anything else is not JSON
			f.st = fsDone
		}
	case fsInKey:
		switch {
		case f.esc:
			f.esc, f.keyOver = false, true
		case c == '\\':
			f.esc = true
		case c == '"':
			f.st = fsColon
		case f.keyLen < len(f.key):
			f.key[f.keyLen] = c
			f.keyLen++
		default:
			f.keyOver = true
		}
	case fsColon:
		switch {
		case isSpace(c):
		case c == ':':
			f.st = fsValue
		default:
			f.st = fsDone
		}
	case fsValue:
		if isSpace(c) {
			return
		}
		f.capture = !f.keyOver && f.keyLen == 2 && f.key[0] == 'i' && f.key[1] == 'd'
		f.val, f.valOver = f.val[:0], false
		f.st, f.depth, f.inStr, f.esc = fsInValue, 0, false, false
		f.valueByte(c)
	case fsInValue:
		f.valueByte(c)
	case fsNext:
		switch {
		case isSpace(c):
		case c == ',':
			f.st = fsKey
		default:
			f.st = fsDone
		}
	}
}

// valueByte consumes one byte of a top-level value (or the byte just after
// it, which ends it).
func (f *idFinder) valueByte(c byte) {
	if f.inStr {
		switch {
		case f.esc:
			f.esc = false
		case c == '\\':
			f.esc = true
		case c == '"':
			f.inStr = false
		}
		f.keep(c)
		if !f.inStr && f.depth == 0 {
			f.endValue()
			f.st = fsNext
		}
		return
	}
	switch c {
	case '"':
		f.inStr = true
	case '{', '[':
		f.depth++
	case '}', ']':
		if f.depth == 0 { // the end of the top-level object
			f.endValue()
			f.st = fsDone
			return
		}
		f.depth--
		if f.depth == 0 {
			f.keep(c)
			f.endValue()
			f.st = fsNext
			return
		}
	case ',':
		if f.depth == 0 {
			f.endValue()
			f.st = fsKey
			return
		}
	}
	f.keep(c)
}

func (f *idFinder) keep(c byte) {
	if !f.capture || f.valOver {
		return
	}
	if len(f.val) >= maxIDLen {
		f.valOver = true
		return
	}
	f.val = append(f.val, c)
}

func (f *idFinder) endValue() {
	if !f.capture {
		return
	}
	f.capture = false
	v := bytes.TrimRight(f.val, " \t\r\n")
	if f.valOver || len(v) == 0 || !json.Valid(v) || !validID(v) {
		return
	}
	f.found = append(json.RawMessage(nil), v...)
}

// id returns the recovered id, nil when there is none. An id whose value
// runs to the end of the input (a truncated line) is taken when it is
// complete JSON.
func (f *idFinder) id() json.RawMessage {
	if f.st == fsInValue && f.capture && f.depth == 0 && !f.inStr {
		f.endValue()
	}
	return f.found
}
