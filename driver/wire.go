package driver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/todoharness/todoharness/harness/acp/transcript"
	"github.com/todoharness/todoharness/internal/textcut"
	"io"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Directions on the ACP wire, seen from the runner (the client).
const (
	Sent     = "client->agent"
	Received = "agent->client"
)

// Message kinds.
const (
	KindRequest      = "request"
	KindResponse     = "response"
	KindNotification = "notification"
	KindInvalid      = "invalid"
)

// WireMsg is one line on the ACP wire, kept raw (the checks read the raw
// JSON: SDK decoders misfile update kinds they do not know).
type WireMsg struct {
	// Seq orders every message of a case, both directions, both processes.
	Seq int `json:"seq"`
	// Proc is the agent process (0, then 1 after a restart, ...).
	Proc int    `json:"proc"`
	Dir  string `json:"dir"`
	// At is the time since the case started; Time the same as a clock
	// reading (comparable with the model journal's times).
	At   time.Duration `json:"at"`
	Time time.Time     `json:"time"`
	// Line is the line as written (without the newline).
	Line string `json:"line"`

	Kind   string          `json:"kind"`
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	// ReplyTo is, for a response, the method of the request it answers.
	ReplyTo string `json:"replyTo,omitempty"`
	// Problem says why an invalid line is not a JSON-RPC 2.0 message.
	Problem string `json:"problem,omitempty"`
	// Capped: the line was longer than MaxWireLine and was not parsed;
	// Line holds at most its first wireLinePrefix bytes (cut between
	// UTF-8 characters), Size its length.
	Capped bool `json:"capped,omitempty"`
	Size   int  `json:"size,omitempty"`

	// update is the sessionUpdate kind of a session/update the runner
	// received, read once as it was recorded (updateRead): the judge asks
	// UpdateKind of every message many times. A message without it (read
	// from saved evidence) has its line decoded again.
	update     string
	updateRead bool
}

// Memory bounds of a case's wire.
const (
	// MaxWireLine is the longest line parsed; a longer one is kept as its
	// first wireLinePrefix bytes, marked Capped (an invalid message).
	MaxWireLine    = 16 << 20
	wireLinePrefix = 4 << 10
	// MaxWireMsgs and MaxWireBytes bound a case's wire log (both
	// directions); an agent that sends past either is killed and the case
	// does not complete. MaxWireBytes counts each line as a JSON string
	// takes it (StoredLen: a control byte is six), so the wire of a
	// case's evidence.json stays within it whatever the agent sent.
	MaxWireMsgs  = 20_000
	MaxWireBytes = 64 << 20
)

// wireLog is a case's ACP wire, shared by its processes, bounded by
// MaxWireMsgs and MaxWireBytes.
type wireLog struct {
	mu      sync.Mutex
	start   time.Time
	msgs    []WireMsg
	bytes   int
	dropped int // messages past the cap, not kept
}

func newWireLog(start time.Time) *wireLog { return &wireLog{start: start} }

// add records m and returns it with its position; past the cap it keeps
// nothing and returns Seq -1 and full.
func (w *wireLog) add(m WireMsg) (_ WireMsg, full bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	m.Time = time.Now()
	m.At = m.Time.Sub(w.start)
	size := StoredLen(m.Line)
	if w.dropped > 0 || len(w.msgs) >= MaxWireMsgs || w.bytes+size > MaxWireBytes {
		w.dropped++
		m.Seq = -1
		return m, true
	}
	m.Seq = len(w.msgs)
	w.bytes += size
	w.msgs = append(w.msgs, m)
	return m, false
}

// StoredLen is the length of s as a JSON string without HTML escaping
// (evidence.json, wire.jsonl): its quotes, a quote, a backslash, \b, \f,
// \n, \r and \t two bytes, another control byte, an invalid UTF-8 byte,
// U+2028 and U+2029 six (\u00XX, \ufffd, \u2028), any other character
// its own bytes.
func StoredLen(s string) int {
	n := 2
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
				n += 2
			case c < 0x20:
				n += 6
			default:
				n++
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && size == 1) || r == '\u2028' || r == '\u2029' {
			n += 6
		} else {
			n += size
		}
		i += size
	}
	return n
}

// capNote says how the cap was hit ("" when it was not).
func (w *wireLog) capNote() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.dropped == 0 {
		return ""
	}
	return fmt.Sprintf("the wire log reached the runner's cap of %d messages or %d bytes per case (as stored in JSON) after %d messages (%d bytes)", MaxWireMsgs, MaxWireBytes, len(w.msgs), w.bytes)
}

func (w *wireLog) snapshot() []WireMsg {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]WireMsg(nil), w.msgs...)
}

// since returns the messages kept from position from on.
func (w *wireLog) since(from int) []WireMsg {
	w.mu.Lock()
	defer w.mu.Unlock()
	if from >= len(w.msgs) {
		return nil
	}
	return append([]WireMsg(nil), w.msgs[from:]...)
}

// last returns the position and time of the latest message (-1 when none).
func (w *wireLog) last() (int, time.Time) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.msgs) == 0 {
		return -1, time.Time{}
	}
	m := w.msgs[len(w.msgs)-1]
	return m.Seq, m.Time
}

func (w *wireLog) len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.msgs)
}

// Envelope is a JSON-RPC message, loosely.
type Envelope struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *RPCError       `json:"error,omitempty"`
}

// RPCError is a JSON-RPC error object.
type RPCError struct {
	Code    int             `json:"code"`
	Message string          `json:"message"`
	Data    json.RawMessage `json:"data,omitempty"`
}

func (e *RPCError) Error() string {
	s := fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message)
	if len(e.Data) > 0 && string(e.Data) != "null" {
		s += " (" + Truncate(string(e.Data), 200) + ")"
	}
	return s
}

// Classify parses one line into its kind, id and method.
func Classify(line []byte) (Envelope, WireMsg) { return classify(line, envelopeOf) }

// classify is Classify, reading the Envelope from the line's members with
// members where it can (false: the line is decoded as an Envelope).
func classify(line []byte, members func(map[string]json.RawMessage) (Envelope, bool)) (Envelope, WireMsg) {
	m := WireMsg{Line: string(line)}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(line, &raw); err != nil {
		m.Kind, m.Problem = KindInvalid, "not a JSON object: "+err.Error()
		return Envelope{}, m
	}
	env, ok := members(raw)
	if !ok {
		if err := json.Unmarshal(line, &env); err != nil {
			m.Kind, m.Problem = KindInvalid, "not a JSON-RPC message: "+err.Error()
			return Envelope{}, m
		}
	}
	_, hasID := raw["id"]
	_, hasResult := raw["result"]
	_, hasError := raw["error"]
	m.ID, m.Method = env.ID, env.Method
	switch {
	case env.JSONRPC != "2.0":
		m.Kind, m.Problem = KindInvalid, `"jsonrpc" is not "2.0"`
	case env.Method != "" && hasID:
		m.Kind = KindRequest
	case env.Method != "":
		m.Kind = KindNotification
	case hasID && (hasResult || hasError):
		m.Kind = KindResponse
	default:
		m.Kind, m.Problem = KindInvalid, "neither a request, a notification nor a response"
	}
	return env, m
}

// envelopeOf reads the Envelope from a message's members, as
// json.Unmarshal of the whole line into an Envelope does, without decoding
// the line a second time (the runner classifies every line); false where
// the two could differ, for Classify to decode the line: a member whose
// name is a field's only ignoring case (the decoder takes it, and the
// order of two such decides), an "error" member (two are merged), a
// jsonrpc or method that is null (a null keeps an earlier duplicate's
// value) or not a string (the decoder's error names the field).
func envelopeOf(raw map[string]json.RawMessage) (Envelope, bool) {
	var env Envelope
	for k, v := range raw {
		switch k {
		case "jsonrpc", "method":
			var s string
			if string(v) == "null" || json.Unmarshal(v, &s) != nil {
				return Envelope{}, false
			}
			if k == "method" {
				env.Method = s
			} else {
				env.JSONRPC = s
			}
		case "id":
			env.ID = v
		case "params":
			env.Params = v
		case "result":
			env.Result = v
		default:
			for _, f := range [...]string{"jsonrpc", "id", "method", "params", "result", "error"} {
				if strings.EqualFold(k, f) {
					return Envelope{}, false
				}
			}
		}
	}
	return env, true
}

// idKey normalizes a JSON-RPC id for matching.
func idKey(id json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, id) != nil {
		return string(id)
	}
	return b.String()
}

// ClientRequest is a request the agent made to the runner, and the answer.
type ClientRequest struct {
	Method string `json:"method"`
	// Detail says what was asked and chosen: the path of an fs request,
	// the option picked for a permission request.
	Detail string `json:"detail,omitempty"`
	Answer string `json:"answer"`
}

// conn drives one agent process over ACP as a client.
type conn struct {
	p    *proc
	log  *wireLog
	idx  int
	root string // the case cwd: fs requests must stay inside it

	// writeSem is the write lock (one line at a time), taken with a
	// context; writeErr, once set, fails every later write (a line was
	// abandoned half written: the stream is broken).
	writeSem     chan struct{}
	writeErr     error
	overflowOnce sync.Once
	mu           sync.Mutex
	nextID       int
	pending      map[string]chan reply
	methods      map[string]string // id -> method of our requests
	done         chan struct{}     // reader reached EOF
	// drained counts the bytes of stdout whose lines are on the wire log.
	drained atomic.Int64

	clientReqs []ClientRequest
}

func newConn(p *proc, log *wireLog, idx int, root string) *conn {
	c := &conn{
		p: p, log: log, idx: idx, root: root,
		pending: map[string]chan reply{}, methods: map[string]string{},
		done: make(chan struct{}), writeSem: make(chan struct{}, 1),
	}
	go c.read()
	return c
}

// read tees every stdout line into the wire log and dispatches it.
func (c *conn) read() {
	defer close(c.done)
	in := &countingReader{r: c.p.stdout}
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, size, err := readLine(r, MaxWireLine)
		switch {
		case size > MaxWireLine:
			c.record(WireMsg{Line: string(textcut.Prefix(line, wireLinePrefix)), Kind: KindInvalid, Capped: true, Size: size,
				Problem: fmt.Sprintf("a line of %d bytes, over the runner's cap of %d bytes: not parsed (its first %d bytes at most kept, cut between characters)", size, MaxWireLine, wireLinePrefix)})
		case len(bytes.TrimSpace(line)) > 0:
			c.dispatch(line)
		}
		c.drained.Store(in.n - int64(r.Buffered()))
		if err != nil {
			return // EOF, or the runner closed the pipe after the process exited
		}
	}
}

// agentIdle reports whether the agent's last idle report (it has nothing
// more to send until its next request) counts every byte read from its
// stdout onto the wire log.
func (c *conn) agentIdle() bool {
	at := c.p.idleAt.Load()
	return at >= 0 && at == c.drained.Load()
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64 // only the reader's goroutine uses it
}

func (cr *countingReader) Read(p []byte) (int, error) {
	n, err := cr.r.Read(p)
	cr.n += int64(n)
	return n, err
}

// readLine reads one line without its line end. A line longer than max is
// read to its end, but only its first max+1 bytes are returned; size is
// the length of the whole line.
func readLine(r *bufio.Reader, max int) (line []byte, size int, err error) {
	for {
		chunk, err := r.ReadSlice('\n')
		size += len(chunk)
		if room := max + 1 - len(line); room > 0 {
			line = append(line, chunk[:min(room, len(chunk))]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil {
			size--
			if size <= max {
				line = line[:size]
			}
			if n := len(line); n > 0 && size <= max && line[n-1] == '\r' {
				line, size = line[:n-1], size-1
			}
		}
		return line, size, err
	}
}

// record adds a received message to the wire log; the first one past the
// cap kills the agent (the case does not complete, and says why).
func (c *conn) record(m WireMsg) WireMsg {
	m.Proc, m.Dir = c.idx, Received
	m, full := c.log.add(m)
	if full {
		c.overflow()
	}
	return m
}

// overflow kills the agent once the wire log is full.
func (c *conn) overflow() {
	c.overflowOnce.Do(func() {
		go c.p.kill("killed (process group): " + c.log.capNote())
	})
}

func (c *conn) dispatch(line []byte) {
	env, m := Classify(line)
	m.readUpdateKind()
	m.Proc, m.Dir = c.idx, Received
	if m.Kind == KindResponse {
		c.mu.Lock()
		m.ReplyTo = c.methods[idKey(env.ID)]
		c.mu.Unlock()
	}
	var echoOf chan reply
	switch m.Kind {
	case KindResponse:
		if m.ReplyTo == "" {
			m.Problem = fmt.Sprintf("a response to id %s, which the runner never issued", Truncate(string(env.ID), 40))
		}
	case KindRequest:
		// The runner's own request coming back (an agent that echoes its
		// input): never served, and the call it came from fails plainly.
		c.mu.Lock()
		if sent, ok := c.methods[idKey(env.ID)]; ok && sent == env.Method {
			m.Problem = "the runner's own request echoed back"
			echoOf = c.pending[idKey(env.ID)]
			delete(c.pending, idKey(env.ID))
		}
		c.mu.Unlock()
	}
	m = c.record(m)
	switch {
	case echoOf != nil:
		echoOf <- reply{seq: m.Seq, err: fmt.Errorf("the agent sent the runner's own %s request (id %s) back instead of answering it: it echoes its input, it does not speak ACP", env.Method, Truncate(string(env.ID), 40))}
	case m.Problem != "":
		// An echo of an already answered request, or a response to nothing.
	case m.Kind == KindResponse:
		c.mu.Lock()
		ch := c.pending[idKey(env.ID)]
		delete(c.pending, idKey(env.ID))
		c.mu.Unlock()
		if ch != nil {
			ch <- reply{env: env, seq: m.Seq}
		}
	case m.Kind == KindRequest:
		c.answer(env)
	}
}

// answer serves a request the agent made to the client.
func (c *conn) answer(env Envelope) {
	result, detail, rerr := c.serve(env.Method, env.Params)
	resp := map[string]any{"jsonrpc": "2.0", "id": env.ID}
	ans := "ok"
	if rerr != nil {
		resp["error"] = rerr
		ans = rerr.Error()
	} else {
		resp["result"] = result
	}
	c.mu.Lock()
	c.clientReqs = append(c.clientReqs, ClientRequest{Method: env.Method, Detail: detail, Answer: ans})
	c.mu.Unlock()
	_, _ = c.writeMsg(c.p.ctx, resp, "", env.Method)
}

// serve answers one client-side request: the result or a JSON-RPC error,
// and a detail for the transcript. session/request_permission picks an
// allow option (allow_once, else allow_always: kinds match exactly) and
// answers cancelled when there is none, never a reject option; the fs
// methods work inside the case's cwd only; anything else is method not
// found.
func (c *conn) serve(method string, params json.RawMessage) (any, string, *RPCError) {
	switch method {
	case "session/request_permission":
		var p struct {
			Options []struct {
				OptionID string `json:"optionId"`
				Kind     string `json:"kind"`
			} `json:"options"`
		}
		if err := json.Unmarshal(params, &p); err != nil || len(p.Options) == 0 {
			return nil, "", &RPCError{Code: -32602, Message: "invalid params: no permission options"}
		}
		choice, kind := "", ""
		for _, want := range []string{"allow_once", "allow_always"} {
			for _, o := range p.Options {
				if choice == "" && o.Kind == want {
					choice, kind = o.OptionID, o.Kind
				}
			}
		}
		if choice == "" {
			return map[string]any{"outcome": map[string]any{"outcome": "cancelled"}}, "no allow option: cancelled", nil
		}
		return map[string]any{"outcome": map[string]any{"outcome": "selected", "optionId": choice}},
			fmt.Sprintf("picked %q (%s)", choice, kind), nil
	case "fs/read_text_file":
		var p struct {
			Path  string `json:"path"`
			Line  *int   `json:"line"`
			Limit *int   `json:"limit"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, "", &RPCError{Code: -32602, Message: "invalid params: " + err.Error()}
		}
		data, rerr := c.readInside(p.Path)
		if rerr != nil {
			return nil, p.Path, rerr
		}
		text := string(data)
		if p.Line != nil || p.Limit != nil {
			lines := strings.SplitAfter(text, "\n")
			start := 0
			if p.Line != nil && *p.Line > 1 {
				start = min(*p.Line-1, len(lines))
			}
			end := len(lines)
			if p.Limit != nil && *p.Limit >= 0 {
				end = min(start+*p.Limit, len(lines))
			}
			text = strings.Join(lines[start:end], "")
		}
		return map[string]any{"content": text}, p.Path, nil
	case "fs/write_text_file":
		var p struct {
			Path    string  `json:"path"`
			Content *string `json:"content"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, "", &RPCError{Code: -32602, Message: "invalid params: " + err.Error()}
		}
		if p.Content == nil {
			return nil, p.Path, &RPCError{Code: -32602, Message: `invalid params: no "content" (a string) to write`}
		}
		if rerr := c.writeInside(p.Path, []byte(*p.Content)); rerr != nil {
			return nil, p.Path, rerr
		}
		return map[string]any{}, fmt.Sprintf("%s (%d bytes)", p.Path, len(*p.Content)), nil
	default:
		return nil, "", &RPCError{Code: -32601, Message: "Method not found: " + method}
	}
}

// reply is a response and its wire position, or why there is none (err).
type reply struct {
	env Envelope
	seq int
	err error
}

// writeMsg writes one JSON line to the agent and records it; it returns
// the message's wire position. It gives up when ctx ends, whether waiting
// for an earlier write or blocked in its own (an agent that stops reading
// its stdin fills the pipe).
func (c *conn) writeMsg(ctx context.Context, v any, method, replyTo string) (int, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return -1, fmt.Errorf("conformance: encode: %w", err)
	}
	select {
	case c.writeSem <- struct{}{}:
	case <-ctx.Done():
		return -1, fmt.Errorf("conformance: write to agent: an earlier write is still blocked: %w", context.Cause(ctx))
	}
	defer func() { <-c.writeSem }()
	if c.writeErr != nil {
		return -1, c.writeErr
	}
	_, m := Classify(b)
	m.Proc, m.Dir, m.ReplyTo = c.idx, Sent, replyTo
	if method != "" {
		m.Method = method
	}
	m, full := c.log.add(m)
	if full {
		c.overflow()
	}
	// An ended context unblocks the write (a past deadline); the process
	// watchdog kills the agent besides.
	stop := context.AfterFunc(ctx, func() { _ = c.p.stdin.SetWriteDeadline(time.Now()) })
	_, err = c.p.stdin.Write(append(b, '\n'))
	stop()
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("abandoned (the agent did not read its stdin): %w", context.Cause(ctx))
		}
		c.writeErr = fmt.Errorf("conformance: write to agent: an earlier write failed: %w", err)
		return m.Seq, fmt.Errorf("conformance: write to agent: %w", err)
	}
	return m.Seq, nil
}

// ErrAgentExited is returned by a call the agent will never answer
// because its process is gone.
var ErrAgentExited = errors.New("the agent exited")

// callResult is the outcome of one request.
type callResult struct {
	Result  json.RawMessage
	ReqSeq  int // wire position of the request
	RespSeq int // wire position of the response (-1 when none)
}

// call sends a request and waits for its response, the process's exit or
// ctx. A JSON-RPC error response is returned as *RPCError.
func (c *conn) call(ctx context.Context, method string, params any) (callResult, error) {
	c.mu.Lock()
	c.nextID++
	id := c.nextID
	key := strconv.Itoa(id)
	ch := make(chan reply, 1)
	c.pending[key] = ch
	c.methods[key] = method
	c.mu.Unlock()
	out := callResult{RespSeq: -1}
	req := map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}
	seq, err := c.writeMsg(ctx, req, method, "")
	out.ReqSeq = seq
	if err != nil {
		return out, err
	}
	got := func(r reply) (callResult, error) {
		if r.err != nil {
			return out, r.err
		}
		out.RespSeq = r.seq
		if r.env.Error != nil {
			return out, r.env.Error
		}
		out.Result = r.env.Result
		return out, nil
	}
	select {
	case r := <-ch:
		return got(r)
	case <-ctx.Done():
		return out, fmt.Errorf("no answer to %s: %w", method, context.Cause(ctx))
	case <-c.done:
		// Stdout closed: the process is most likely exiting.
		waitFor(c.p.exited, 500*time.Millisecond)
	case <-c.p.exited:
		// Let the reader drain what the process wrote before it died.
		waitFor(c.done, 500*time.Millisecond)
	}
	select {
	case r := <-ch:
		return got(r)
	default:
	}
	if c.p.hasExited() {
		how := c.p.exitDescription()
		if k := c.p.killedHow(); k != "" {
			how += "; " + k
		}
		return out, fmt.Errorf("no answer to %s: %w (%s)", method, ErrAgentExited, how)
	}
	return out, fmt.Errorf("no answer to %s: the agent closed its stdout", method)
}

// requests returns the client-side requests the agent made.
func (c *conn) requests() []ClientRequest {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]ClientRequest(nil), c.clientReqs...)
}

// OneLine is s on one line (runs of white space as one space), cut to
// about n bytes.
func OneLine(s string, n int) string {
	return Truncate(strings.Join(strings.Fields(s), " "), n)
}

// Truncate cuts s to at most n bytes between UTF-8 characters, marking
// the cut with "…" (textcut.Truncate).
func Truncate(s string, n int) string { return textcut.Truncate(s, n) }

// TurnUpdate reports whether a sessionUpdate kind reports a prompt turn's
// progress (on protocol version 1 or 2); the others, such as
// available_commands_update or v2's state_update, are about the session
// and may come at any time.
func TurnUpdate(kind string) bool {
	switch kind {
	case "user_message_chunk", "agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan",
		"plan_update", "plan_removed", "user_message", "agent_message", "agent_thought", "tool_call_content_chunk",
		"terminal_update", "terminal_output_chunk":
		return true
	}
	return false
}

// UpdateKind returns the sessionUpdate kind of a session/update message
// ("" for any other message).
func (m WireMsg) UpdateKind() string {
	if m.Method != "session/update" {
		return ""
	}
	if m.updateRead {
		return m.update
	}
	kind, _, _ := transcript.UpdateKind([]byte(m.Line))
	return kind
}

// readUpdateKind keeps in m the sessionUpdate kind of a session/update
// (UpdateKind, read once).
func (m *WireMsg) readUpdateKind() {
	if m.Method == "session/update" {
		m.update, m.updateRead = m.UpdateKind(), true
	}
}
