package acp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/todoharness/todoharness/harness/agent"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/tools"
)

// AgentName is the name the bridge gives in initialize's agentInfo.
const AgentName = "todoharness"

// Version is the reference agent's version, sent in agentInfo.
const Version = "0.1.0"

// ProtocolVersion is the ACP protocol version the bridge speaks.
const ProtocolVersion = sdk.ProtocolVersion(1)

// Bridge is an ACP agent (the agent side of the protocol) over the reference
// harness: one Bridge serves one connection. Sessions persist in
// Config.Sessions; every session/update it sends is the Mapper's view of a
// session event.
type Bridge struct {
	cfg   Config
	tools *tools.Registry
	log   *slog.Logger
	// handler serves the connection's requests: the bridge itself, or a
	// layer around it. present turns events into the updates sent.
	handler sdk.Agent
	present presenter

	conn *sdk.AgentSideConnection
	out  *lineWriter

	// base is the connection's lifetime; notifications are sent under it so
	// that a cancelled prompt still reports how its last tool call ended. It
	// ends after every handler returned. closing ends when shutdown starts.
	base        context.Context
	stop        context.CancelFunc
	closing     context.Context
	stopClosing context.CancelFunc
	inflight    work

	// surf is the surface initialize negotiated (a surface); negotiated
	// is set by the first initialize (read and written by the input
	// filter's goroutine only).
	surf       atomic.Uint32
	negotiated bool

	mu       sync.Mutex
	sessions map[string]*liveSession
	loading  map[string]chan struct{} // ids being loaded; closed when done
	closed   bool
}

// liveSession is a session this bridge has open.
type liveSession struct {
	id    string
	log   *session.Log
	agent *agent.Agent
	turn  chan struct{} // one prompt at a time; holds a token while busy

	mu     sync.Mutex
	cancel context.CancelFunc // of the running prompt, nil when idle
}

// Serve speaks ACP (JSON-RPC lines) reading requests from in and writing
// answers and notifications to out, until in ends or ctx is done. Then it
// cancels running prompts, waits for them, and flushes and closes every
// session log. It does not close out. A Bridge serves once.
func (b *Bridge) Serve(ctx context.Context, in io.Reader, out io.Writer) error {
	b.mu.Lock()
	if b.conn != nil || b.closed {
		b.mu.Unlock()
		return errors.New("acp bridge: Serve called twice")
	}
	pr, pw := io.Pipe()
	var stalled atomic.Pointer[error]
	b.out = newLineWriter(out, b.cfg.WriteTimeout, func(err error) {
		stalled.Store(&err)
		b.log.Error("ending the connection", "cause", err)
		_ = pr.CloseWithError(err)
	})
	if b.cfg.IdleReport != nil {
		r := &idleReporter{w: b.cfg.IdleReport}
		b.out.written = func() { r.report(b) }
		b.inflight.idle = func() { r.report(b) }
	}
	b.base, b.stop = context.WithCancel(context.WithoutCancel(ctx))
	b.closing, b.stopClosing = context.WithCancel(b.base)
	b.conn = sdk.NewAgentSideConnection(b.handler, b.out, pr)
	b.conn.SetLogger(b.log)
	b.mu.Unlock()

	inErr := make(chan error, 1)
	go func() { inErr <- filterInput(in, pw, b.out, b.log, b.route) }()

	select {
	case <-b.conn.Done():
		b.log.Info("client disconnected")
	case <-ctx.Done():
		b.log.Info("stopping", "cause", context.Cause(ctx))
		_ = pr.CloseWithError(ctx.Err())
	}
	err := b.shutdown()
	if e := stalled.Load(); e != nil {
		err = errors.Join(*e, err)
	}
	select {
	case e := <-inErr:
		if e != nil && !errors.Is(e, io.ErrClosedPipe) {
			err = errors.Join(fmt.Errorf("read input: %w", e), err)
		}
	default: // still blocked reading in (ctx ended): nothing to report
	}
	return err
}

// shutdown cancels running prompts, waits for every handler, then closes the
// session logs (which flushes them).
func (b *Bridge) shutdown() error {
	b.mu.Lock()
	b.closed = true
	live := make([]*liveSession, 0, len(b.sessions))
	for _, s := range b.sessions {
		live = append(live, s)
	}
	b.mu.Unlock()
	b.stopClosing() // releases hang-on-prompt and a pending late replay
	for _, s := range live {
		s.cancelPrompt()
	}
	b.inflight.Wait()
	b.stop()
	var errs []error
	for _, s := range live {
		if err := s.log.Close(); err != nil {
			errs = append(errs, fmt.Errorf("close session %s: %w", s.id, err))
		}
	}
	return errors.Join(errs...)
}

// work counts the handlers running and the work they leave running after
// their answer (a late replay, the rest of an early-answered turn).
type work struct {
	wg sync.WaitGroup
	n  atomic.Int64
	// idle, when set, is called each time the count drops to zero.
	idle func()
}

func (w *work) Add(d int) { w.n.Add(int64(d)); w.wg.Add(d) }
func (w *work) Wait()     { w.wg.Wait() }
func (w *work) Done() {
	if w.n.Add(-1) == 0 && w.idle != nil {
		w.idle()
	}
	w.wg.Done()
}

// idleReporter writes Config.IdleReport's lines: the bytes written to the
// client, each time the bridge is idle after a write or a handler's end
// (never a smaller count after a larger one).
type idleReporter struct {
	mu   sync.Mutex
	w    io.Writer
	last int64
}

func (r *idleReporter) report(b *Bridge) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !b.Idle() {
		return
	}
	// Idle before and after the count: no handler ran across reading it.
	if n := b.out.total(); n > r.last && b.Idle() {
		r.last = n
		_, _ = fmt.Fprintf(r.w, "%d\n", n)
	}
}

// Idle reports whether the bridge has nothing to send until its next
// request: no handler of a session request runs, and none left work
// running after its answer. A handler's work ends before its answer is
// written, so once the client has read an answer and Idle holds, every
// update of that request is on the wire (Config.IdleReport tells the
// conformance runner so, which then need not wait for quiet).
func (b *Bridge) Idle() bool { return b.inflight.n.Load() == 0 }

// enter registers an in-flight handler; it fails once the bridge is closing.
func (b *Bridge) enter() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return sdk.NewInternalError(map[string]any{"error": "agent is shutting down"})
	}
	b.inflight.Add(1)
	return nil
}

// send writes one session/update notification. SDK updates go through the
// SDK; raw ones are framed here, byte for byte as the SDK frames them, and
// written through the same line writer, so the order of the wire is the
// order of the calls.
func (b *Bridge) send(sessionID string, u Update) error {
	if u.Raw == nil {
		raw, ok := encodeSDKUpdate(u.SDK)
		if !ok {
			return b.conn.SessionUpdate(b.base, sdk.SessionNotification{SessionId: sdk.SessionId(sessionID), Update: u.SDK})
		}
		// The SDK's bytes, framed here: the errors are the SDK's.
		if err := b.base.Err(); err != nil {
			return sdk.NewInternalError(map[string]any{"error": err.Error()})
		}
		if _, err := b.out.Write(appendNotification(nil, sessionID, raw)); err != nil {
			return sdk.NewInternalError(map[string]any{"error": err.Error()})
		}
		return nil
	}
	if err := b.base.Err(); err != nil {
		return fmt.Errorf("send update: %w", err)
	}
	line := appendNotification(nil, sessionID, u.Raw)
	if _, err := b.out.Write(line); err != nil {
		return fmt.Errorf("send update: %w", err)
	}
	return nil
}

// appendNotification appends the session/update line for a raw update.
func appendNotification(dst []byte, sessionID string, update json.RawMessage) []byte {
	q, err := json.Marshal(sessionID)
	if err != nil { // a Go string always encodes
		panic(err)
	}
	dst = append(dst, `{"jsonrpc":"2.0","method":"`+sdk.ClientMethodSessionUpdate+`","params":{"sessionId":`...)
	dst = append(dst, q...)
	dst = append(dst, `,"update":`...)
	dst = append(dst, update...)
	return append(dst, "}}\n"...)
}

// --- initialize ---

// Initialize answers with protocol version 1 and loadSession: true.
func (b *Bridge) Initialize(ctx context.Context, p sdk.InitializeRequest) (sdk.InitializeResponse, error) {
	b.log.Info("initialize", "clientProtocolVersion", p.ProtocolVersion)
	return sdk.InitializeResponse{
		ProtocolVersion: ProtocolVersion,
		AgentCapabilities: sdk.AgentCapabilities{
			LoadSession:        true,
			PromptCapabilities: sdk.PromptCapabilities{},
		},
		AgentInfo:   &sdk.Implementation{Name: b.cfg.Name, Version: b.cfg.Version},
		AuthMethods: []sdk.AuthMethod{},
	}, nil
}

// Authenticate accepts anything: the agent needs no authentication.
func (b *Bridge) Authenticate(ctx context.Context, p sdk.AuthenticateRequest) (sdk.AuthenticateResponse, error) {
	return sdk.AuthenticateResponse{}, nil
}

// --- sessions ---

// NewSession creates a persisted session whose header records the cwd,
// which must be an absolute path.
func (b *Bridge) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	if err := b.enter(); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	defer b.inflight.Done()
	if err := checkCwdDir(p.Cwd); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	id := b.cfg.NewSessionID()
	log, err := b.cfg.Sessions.Create(id, p.Cwd, b.cfg.LogOptions...)
	if err != nil {
		return sdk.NewSessionResponse{}, sdk.NewInternalError(map[string]any{"error": fmt.Sprintf("create session: %v", err)})
	}
	if _, err := b.register(b.newLive(id, log)); err != nil {
		return sdk.NewSessionResponse{}, err
	}
	b.log.Info("session created", "session", id, "cwd", p.Cwd)
	return sdk.NewSessionResponse{SessionId: sdk.SessionId(id)}, nil
}

// checkCwd refuses a cwd that is not an absolute path (ACP requires one).
func checkCwd(cwd string) error {
	if filepath.IsAbs(cwd) {
		return nil
	}
	return &sdk.RequestError{
		Code:    -32602,
		Message: fmt.Sprintf("Invalid params: cwd must be an absolute path, got %q", cwd),
		Data:    map[string]any{"field": "cwd", "error": "not an absolute path", "cwd": cwd},
	}
}

// checkCwdDir refuses, for a new session, a cwd that is not an absolute
// path, or that names something other than a folder here (a regular file
// such as /etc/passwd is no working directory). A path that does not exist
// on this machine is accepted: the client may see another file system.
func checkCwdDir(cwd string) error {
	if err := checkCwd(cwd); err != nil {
		return err
	}
	if fi, err := os.Stat(cwd); err != nil || fi.IsDir() {
		return nil
	}
	return &sdk.RequestError{
		Code:    -32602,
		Message: fmt.Sprintf("Invalid params: cwd must be a directory, %q is not one", cwd),
		Data:    map[string]any{"field": "cwd", "error": "not a directory", "cwd": cwd},
	}
}

// newLive makes the live state of an open session log; it is not yet
// registered.
func (b *Bridge) newLive(id string, log *session.Log) *liveSession {
	return &liveSession{
		id:  id,
		log: log,
		agent: agent.New(log, agent.Config{
			Model: b.cfg.Model, Tools: b.tools, ModelName: b.cfg.ModelName,
			System: b.cfg.System, MaxSteps: b.cfg.MaxSteps,
		}),
		turn: make(chan struct{}, 1),
	}
}

// register makes s live (prompts reach it) and returns the live session of
// its id: s, or the one another load registered first (s is then closed).
// Once the bridge is shutting down nothing is registered: s is closed and
// an error returned.
func (b *Bridge) register(s *liveSession) (*liveSession, error) {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, errors.Join(sdk.NewInternalError(map[string]any{"error": "agent is shutting down"}), s.log.Close())
	}
	if live, ok := b.sessions[s.id]; ok {
		b.mu.Unlock()
		if err := s.log.Close(); err != nil {
			b.log.Warn("close a second open of a session", "session", s.id, "err", err)
		}
		return live, nil
	}
	b.sessions[s.id] = s
	b.mu.Unlock()
	return s, nil
}

func (b *Bridge) session(id string) (*liveSession, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s, ok := b.sessions[id]
	return s, ok
}

// --- methods the reference agent does not offer ---

// CloseSession is not offered (no sessionCapabilities.close).
func (b *Bridge) CloseSession(ctx context.Context, p sdk.CloseSessionRequest) (sdk.CloseSessionResponse, error) {
	return sdk.CloseSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionClose)
}

// ListSessions is not offered (no sessionCapabilities.list).
func (b *Bridge) ListSessions(ctx context.Context, p sdk.ListSessionsRequest) (sdk.ListSessionsResponse, error) {
	return sdk.ListSessionsResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionList)
}

// ResumeSession is not offered (no sessionCapabilities.resume).
func (b *Bridge) ResumeSession(ctx context.Context, p sdk.ResumeSessionRequest) (sdk.ResumeSessionResponse, error) {
	return sdk.ResumeSessionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionResume)
}

// SetSessionConfigOption is not offered.
func (b *Bridge) SetSessionConfigOption(ctx context.Context, p sdk.SetSessionConfigOptionRequest) (sdk.SetSessionConfigOptionResponse, error) {
	return sdk.SetSessionConfigOptionResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionSetConfigOption)
}

// SetSessionMode is not offered (no modes).
func (b *Bridge) SetSessionMode(ctx context.Context, p sdk.SetSessionModeRequest) (sdk.SetSessionModeResponse, error) {
	return sdk.SetSessionModeResponse{}, sdk.NewMethodNotFound(sdk.AgentMethodSessionSetMode)
}

var (
	_ sdk.Agent       = (*Bridge)(nil)
	_ sdk.AgentLoader = (*Bridge)(nil)
)
