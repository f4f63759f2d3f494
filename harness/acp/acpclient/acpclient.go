package acpclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/todoharness/todoharness/harness/acp"
)

// Client is an ACP client that records every session/update it receives.
// It offers no file system, terminal or permission capability.
type Client struct {
	mu      sync.Mutex
	updates []sdk.SessionNotification
}

// SessionUpdate records n.
func (c *Client) SessionUpdate(ctx context.Context, n sdk.SessionNotification) error {
	c.mu.Lock()
	c.updates = append(c.updates, n)
	c.mu.Unlock()
	return nil
}

// Updates returns the updates received so far, in order.
func (c *Client) Updates() []sdk.SessionNotification {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]sdk.SessionNotification(nil), c.updates...)
}

// Reset forgets the updates received so far.
func (c *Client) Reset() {
	c.mu.Lock()
	c.updates = nil
	c.mu.Unlock()
}

// Plans returns the plan updates received so far, in order.
func (c *Client) Plans() []*sdk.SessionUpdatePlan {
	var out []*sdk.SessionUpdatePlan
	for _, n := range c.Updates() {
		if n.Update.Plan != nil {
			out = append(out, n.Update.Plan)
		}
	}
	return out
}

var errUnsupported = errors.New("acpclient: not supported")

// ReadTextFile is not supported.
func (c *Client) ReadTextFile(context.Context, sdk.ReadTextFileRequest) (sdk.ReadTextFileResponse, error) {
	return sdk.ReadTextFileResponse{}, errUnsupported
}

// WriteTextFile is not supported.
func (c *Client) WriteTextFile(context.Context, sdk.WriteTextFileRequest) (sdk.WriteTextFileResponse, error) {
	return sdk.WriteTextFileResponse{}, errUnsupported
}

// RequestPermission always cancels.
func (c *Client) RequestPermission(context.Context, sdk.RequestPermissionRequest) (sdk.RequestPermissionResponse, error) {
	return sdk.RequestPermissionResponse{Outcome: sdk.RequestPermissionOutcome{Cancelled: &sdk.RequestPermissionOutcomeCancelled{}}}, nil
}

// CreateTerminal is not supported.
func (c *Client) CreateTerminal(context.Context, sdk.CreateTerminalRequest) (sdk.CreateTerminalResponse, error) {
	return sdk.CreateTerminalResponse{}, errUnsupported
}

// KillTerminal is not supported.
func (c *Client) KillTerminal(context.Context, sdk.KillTerminalRequest) (sdk.KillTerminalResponse, error) {
	return sdk.KillTerminalResponse{}, errUnsupported
}

// TerminalOutput is not supported.
func (c *Client) TerminalOutput(context.Context, sdk.TerminalOutputRequest) (sdk.TerminalOutputResponse, error) {
	return sdk.TerminalOutputResponse{}, errUnsupported
}

// ReleaseTerminal is not supported.
func (c *Client) ReleaseTerminal(context.Context, sdk.ReleaseTerminalRequest) (sdk.ReleaseTerminalResponse, error) {
	return sdk.ReleaseTerminalResponse{}, errUnsupported
}

// WaitForTerminalExit is not supported.
func (c *Client) WaitForTerminalExit(context.Context, sdk.WaitForTerminalExitRequest) (sdk.WaitForTerminalExitResponse, error) {
	return sdk.WaitForTerminalExitResponse{}, errUnsupported
}

var _ sdk.Client = (*Client)(nil)

// Wire is the raw agent-to-client stream, line by line, as the client read
// it.
type Wire struct {
	mu    sync.Mutex
	lines [][]byte
	part  []byte
}

// Write records p (called by the tee on the client's reader).
func (w *Wire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.part = append(w.part, p...)
	for {
		i := bytes.IndexByte(w.part, '\n')
		if i < 0 {
			break
		}
		if line := bytes.TrimSpace(w.part[:i]); len(line) > 0 {
			w.lines = append(w.lines, append([]byte(nil), line...))
		}
		w.part = w.part[i+1:]
	}
	return len(p), nil
}

// Lines returns the complete lines read so far.
func (w *Wire) Lines() [][]byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([][]byte, len(w.lines))
	copy(out, w.lines)
	return out
}

// Len returns the number of complete lines read so far.
func (w *Wire) Len() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.lines)
}

// Conn is a client connection to an agent with its recorder and wire tee.
type Conn struct {
	*sdk.ClientSideConnection
	Client *Client
	Wire   *Wire

	toAgent io.WriteCloser
	wmu     sync.Mutex
}

// Connect starts a recording client that writes to toAgent (the agent's
// stdin) and reads from fromAgent (the agent's stdout).
func Connect(toAgent io.WriteCloser, fromAgent io.Reader) *Conn {
	c := &Conn{Client: &Client{}, Wire: &Wire{}}
	c.toAgent = &lockedWriteCloser{w: toAgent, mu: &c.wmu}
	// The SDK's reader goroutine starts at once and reads the logger that
	// SetLogger writes: hold its first read until the logger is set.
	gate := &gatedReader{r: io.TeeReader(fromAgent, c.Wire), open: make(chan struct{})}
	c.ClientSideConnection = sdk.NewClientSideConnection(c.Client, c.toAgent, gate)
	c.SetLogger(slog.New(slog.DiscardHandler))
	close(gate.open)
	return c
}

type gatedReader struct {
	r    io.Reader
	open chan struct{}
}

func (g *gatedReader) Read(p []byte) (int, error) {
	<-g.open
	return g.r.Read(p)
}

// WriteRaw writes one raw line (a newline is added) to the agent, for tests
// of malformed input.
func (c *Conn) WriteRaw(line string) error {
	_, err := c.toAgent.Write([]byte(line + "\n"))
	return err
}

// CloseInput closes the agent's input, as an editor does on shutdown.
func (c *Conn) CloseInput() error { return c.toAgent.Close() }

type lockedWriteCloser struct {
	w  io.WriteCloser
	mu *sync.Mutex
}

func (l *lockedWriteCloser) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriteCloser) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Close()
}

// ErrAgentStopped is the error of a write to a served bridge that has
// returned from Serve.
var ErrAgentStopped = errors.New("acpclient: the agent stopped serving")

// Served is an in-process bridge serving a Conn over io.Pipe pairs.
type Served struct {
	*Conn
	done     chan error
	fromPipe *io.PipeWriter

	closeMu  sync.Mutex
	closed   bool
	closeErr error
}

// Serve runs b on pipes and connects a recording client to it.
func Serve(ctx context.Context, b *acp.Bridge) *Served {
	toAgentR, toAgentW := io.Pipe()
	fromAgentR, fromAgentW := io.Pipe()
	s := &Served{Conn: Connect(toAgentW, fromAgentR), done: make(chan error, 1), fromPipe: fromAgentW}
	go func() {
		err := b.Serve(ctx, toAgentR, fromAgentW)
		// Nothing reads the agent's input any more: the client's writes
		// (a request, the SDK's cancel when a call's context ends) fail
		// instead of blocking for ever on the pipe.
		_ = toAgentR.CloseWithError(ErrAgentStopped)
		s.done <- err
	}()
	return s
}

// Close closes the agent's input, waits for the bridge to return (it flushes
// and closes its session logs), then closes the agent's output. It returns
// Serve's error. Calling it again returns the first result.
func (s *Served) Close(ctx context.Context) error {
	s.closeMu.Lock()
	defer s.closeMu.Unlock()
	if s.closed {
		return s.closeErr
	}
	_ = s.CloseInput()
	select {
	case err := <-s.done:
		_ = s.fromPipe.Close()
		s.closed, s.closeErr = true, err
		return err
	case <-ctx.Done():
		_ = s.fromPipe.CloseWithError(ctx.Err())
		return fmt.Errorf("bridge did not stop: %w", ctx.Err())
	}
}

// NewSession is NewSession with cwd and an empty (not null) mcpServers.
func (c *Conn) NewSessionIn(ctx context.Context, cwd string) (string, error) {
	r, err := c.NewSession(ctx, sdk.NewSessionRequest{Cwd: cwd, McpServers: []sdk.McpServer{}})
	return string(r.SessionId), err
}

// Load is LoadSession with an empty (not null) mcpServers.
func (c *Conn) Load(ctx context.Context, id, cwd string) error {
	_, err := c.LoadSession(ctx, sdk.LoadSessionRequest{SessionId: sdk.SessionId(id), Cwd: cwd, McpServers: []sdk.McpServer{}})
	return err
}

// PromptText sends one text prompt and returns the stop reason.
func (c *Conn) PromptText(ctx context.Context, id, text string) (sdk.StopReason, error) {
	r, err := c.Prompt(ctx, sdk.PromptRequest{SessionId: sdk.SessionId(id), Prompt: []sdk.ContentBlock{sdk.TextBlock(text)}})
	return r.StopReason, err
}

// Initialize sends initialize with protocol version 1.
func (c *Conn) Init(ctx context.Context) (sdk.InitializeResponse, error) {
	return c.Initialize(ctx, sdk.InitializeRequest{ProtocolVersion: sdk.ProtocolVersionNumber})
}
