package acptest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"

	"github.com/todoharness/todoharness/harness/acp"
)

// Msg is one JSON-RPC line the agent sent.
type Msg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
	// Raw is the line as read; Answers is, for a response, the method of
	// the request it answers.
	Raw     []byte `json:"-"`
	Answers string `json:"-"`
}

// Update is the params of a session/update line.
type Update struct {
	SessionID string         `json:"sessionId"`
	Update    map[string]any `json:"update"`
}

// Kind is the update's sessionUpdate discriminator.
func (u Update) Kind() string { s, _ := u.Update["sessionUpdate"].(string); return s }

// AsUpdate decodes a session/update line (ok false for any other line).
func (m Msg) AsUpdate() (Update, bool, error) {
	if m.Method != "session/update" {
		return Update{}, false, nil
	}
	var u Update
	if err := json.Unmarshal(m.Params, &u); err != nil {
		return Update{}, false, fmt.Errorf("session/update params: %w: %s", err, m.Raw)
	}
	return u, true, nil
}

// IsIdle reports whether m is v2's idle state_update.
func (m Msg) IsIdle() bool {
	u, ok, _ := m.AsUpdate()
	return ok && u.Kind() == "state_update" && u.Update["state"] == "idle"
}

// RawConn is a client of a bridge served in process that speaks raw
// JSON-RPC lines, whatever the version (the SDK's client speaks v1 only):
// it sends what it is given and reads the agent's lines one by one. Check,
// when set, judges every line read (a v2 schema, say); its first error is
// returned by the read that met it.
type RawConn struct {
	in    io.WriteCloser
	lines chan []byte
	stop  func() error

	// Check judges each line the agent sends.
	Check func(Msg) error

	mu      sync.Mutex
	nextID  int
	methods map[string]string // request id -> method
	seen    [][]byte
}

// ServeRaw serves b on pipes until ctx ends or Close, which then returns
// Serve's error.
func ServeRaw(ctx context.Context, b *acp.Bridge) *RawConn {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() {
		served <- b.Serve(ctx, inR, outW)
		_ = outW.Close()
	}()
	return connectRaw(inW, outR, func() error { return <-served })
}

// ConnectRaw is a RawConn writing to toAgent (the agent's stdin) and
// reading fromAgent (its stdout), as of a process; Close closes toAgent
// and reads fromAgent to its end.
func ConnectRaw(toAgent io.WriteCloser, fromAgent io.Reader) *RawConn {
	return connectRaw(toAgent, fromAgent, func() error { return nil })
}

// connectRaw starts reading fromAgent; wait is what Close waits for once
// the agent's output ended.
func connectRaw(toAgent io.WriteCloser, fromAgent io.Reader, wait func() error) *RawConn {
	c := &RawConn{in: toAgent, lines: make(chan []byte, 1024), methods: map[string]string{}}
	go func() {
		defer close(c.lines)
		sc := bufio.NewScanner(fromAgent)
		sc.Buffer(nil, acp.MaxLine+1)
		for sc.Scan() {
			c.lines <- append([]byte(nil), sc.Bytes()...)
		}
	}()
	var once sync.Once
	var err error
	c.stop = func() error {
		once.Do(func() {
			_ = toAgent.Close()
			for l := range c.lines { // the agent may still be writing
				c.keep(l)
			}
			err = wait()
		})
		return err
	}
	return c
}

// Close ends the agent's input and waits for the bridge to stop, keeping
// what it still wrote (Lines); it returns Serve's error.
func (c *RawConn) Close(ctx context.Context) error {
	done := make(chan error, 1)
	go func() { done <- c.stop() }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return fmt.Errorf("close the agent's input: the bridge did not stop: %w", ctx.Err())
	}
}

func (c *RawConn) keep(l []byte) {
	c.mu.Lock()
	c.seen = append(c.seen, l)
	c.mu.Unlock()
}

// Lines returns every line the agent sent that was read, in order.
func (c *RawConn) Lines() [][]byte {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([][]byte(nil), c.seen...)
}

// Send writes one message to the agent.
func (c *RawConn) Send(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode: %w", err)
	}
	if _, err := c.in.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write to the agent: %w", err)
	}
	return nil
}

// Notify sends a notification.
func (c *RawConn) Notify(method string, params any) error {
	return c.Send(map[string]any{"jsonrpc": "2.0", "method": method, "params": params})
}

// Request sends a request and returns its id.
func (c *RawConn) Request(method string, params any) (string, error) {
	c.mu.Lock()
	c.nextID++
	n := c.nextID
	id := strconv.Itoa(n)
	c.methods[id] = method
	c.mu.Unlock()
	return id, c.Send(map[string]any{"jsonrpc": "2.0", "id": n, "method": method, "params": params})
}

// Next reads the agent's next line.
func (c *RawConn) Next(ctx context.Context) (Msg, error) {
	select {
	case l, ok := <-c.lines:
		if !ok {
			return Msg{}, errors.New("the agent closed its output")
		}
		c.keep(l)
		var m Msg
		if err := json.Unmarshal(l, &m); err != nil {
			return Msg{}, fmt.Errorf("agent line is not JSON: %w: %s", err, l)
		}
		m.Raw = l
		if m.Method == "" {
			c.mu.Lock()
			m.Answers = c.methods[string(m.ID)]
			c.mu.Unlock()
		}
		if c.Check != nil {
			if err := c.Check(m); err != nil {
				return m, err
			}
		}
		return m, nil
	case <-ctx.Done():
		return Msg{}, fmt.Errorf("waiting for the agent's next line: %w", ctx.Err())
	}
}

// Until reads lines until stop holds for one and returns the updates read,
// that line's included when it is one.
func (c *RawConn) Until(ctx context.Context, stop func(Msg) bool) ([]Update, error) {
	var ups []Update
	for {
		m, err := c.Next(ctx)
		if err != nil {
			return ups, err
		}
		u, ok, err := m.AsUpdate()
		if err != nil {
			return ups, err
		}
		if ok {
			ups = append(ups, u)
		}
		if stop(m) {
			return ups, nil
		}
	}
}

// Call sends a request and reads until its response, which it returns
// with the updates read before it.
func (c *RawConn) Call(ctx context.Context, method string, params any) (Msg, []Update, error) {
	id, err := c.Request(method, params)
	if err != nil {
		return Msg{}, nil, err
	}
	var resp Msg
	ups, err := c.Until(ctx, func(m Msg) bool {
		if m.Method == "" && string(m.ID) == id {
			resp = m
			return true
		}
		return false
	})
	return resp, ups, err
}

// Result is Call failing on an error response.
func (c *RawConn) Result(ctx context.Context, method string, params any) (json.RawMessage, []Update, error) {
	resp, ups, err := c.Call(ctx, method, params)
	if err != nil {
		return nil, ups, err
	}
	if resp.Error != nil {
		return nil, ups, fmt.Errorf("%s: error %s", method, resp.Error)
	}
	return resp.Result, ups, nil
}

// InitV2 initializes the connection offering protocol version 2.
func (c *RawConn) InitV2(ctx context.Context) (json.RawMessage, error) {
	res, _, err := c.Result(ctx, "initialize", map[string]any{
		"protocolVersion": 2, "info": map[string]any{"name": "acptest", "version": "0"}, "capabilities": map[string]any{},
	})
	return res, err
}

// NewSession makes a session in cwd and returns its id.
func (c *RawConn) NewSession(ctx context.Context, cwd string) (string, error) {
	res, _, err := c.Result(ctx, "session/new", map[string]any{"cwd": cwd, "mcpServers": []any{}})
	if err != nil {
		return "", err
	}
	var r struct {
		SessionID string `json:"sessionId"`
	}
	if err := json.Unmarshal(res, &r); err != nil || r.SessionID == "" {
		return "", fmt.Errorf("session/new result %s: no sessionId (%v)", res, err)
	}
	return r.SessionID, nil
}

// PromptV2 sends a text prompt on a v2 connection and reads its turn to
// the idle state_update: it returns the prompt's answer and the updates
// read (before the answer, and the turn's).
func (c *RawConn) PromptV2(ctx context.Context, sid, text string) (json.RawMessage, []Update, error) {
	res, before, err := c.Result(ctx, "session/prompt", TextPrompt(sid, text))
	if err != nil {
		return res, before, err
	}
	ups, err := c.Until(ctx, Msg.IsIdle)
	return res, append(before, ups...), err
}

// TextPrompt is the params of session/prompt with one text block.
func TextPrompt(sid, text string) map[string]any {
	return map[string]any{"sessionId": sid, "prompt": []any{map[string]any{"type": "text", "text": text}}}
}

// ResumeFromStart is the params of v2's session/resume replaying the
// whole history.
func ResumeFromStart(sid, cwd string) map[string]any {
	return map[string]any{"sessionId": sid, "cwd": cwd, "replayFrom": map[string]any{"type": "start"}}
}
