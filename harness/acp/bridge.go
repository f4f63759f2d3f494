package acp

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/todoharness/todoharness/harness/agent"
	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/todo"
	"github.com/todoharness/todoharness/harness/tools"
)

// AgentName is the name the bridge gives in initialize's agentInfo.
const AgentName = "todoharness"

// Version is the reference agent's version, sent in agentInfo.
const Version = "0.1.0"

// ProtocolVersion is the ACP protocol version the bridge speaks.
const ProtocolVersion = sdk.ProtocolVersion(1)

// Config configures a Bridge.
type Config struct {
	// Sessions is where sessions are created and loaded from (required).
	Sessions session.Dir
	// Model answers every prompt (required).
	Model llm.Model
	// ModelName, System and MaxSteps are passed to the agent loop.
	ModelName string
	System    string
	MaxSteps  int
	// Tools is the tool registry offered to the model and used to present
	// tool calls (required; builtin.Compose builds the shipped one).
	Tools *tools.Registry
	// Name and Version are sent as agentInfo (defaults AgentName, Version).
	Name, Version string
	// Logger receives diagnostics (default: discard). Never stdout.
	Logger *slog.Logger
	// Faults breaks behaviours on purpose, for conformance tests only.
	Faults Faults
	// NewSessionID makes the id of a new session (default: a random UUID).
	NewSessionID func() string
	// LogOptions are passed to every session log (e.g. session.WithClock).
	LogOptions []session.Option
	// Exit is called by FaultCrashOnPrompt (default os.Exit).
	Exit func(code int)
	// WriteTimeout bounds each write to the client (0:
	// DefaultWriteTimeout; negative: none): a write that cannot complete
	// by then (the client stopped reading) ends the connection, logged,
	// and Serve returns ErrClientStalled.
	WriteTimeout time.Duration
}

// DefaultWriteTimeout is how long a write to the client may take before
// the bridge gives the client up (Config.WriteTimeout).
const DefaultWriteTimeout = time.Minute

// Bridge is an ACP agent (the agent side of the protocol) over the reference
// harness: one Bridge serves one connection. Sessions persist in
// Config.Sessions; every session/update it sends is the Mapper's view of a
// session event.
type Bridge struct {
	cfg   Config
	tools *tools.Registry
	log   *slog.Logger

	conn *sdk.AgentSideConnection
	out  *lineWriter

	// base is the connection's lifetime; notifications are sent under it so
	// that a cancelled prompt still reports how its last tool call ended. It
	// ends after every handler returned. closing ends when shutdown starts.
	base        context.Context
	stop        context.CancelFunc
	closing     context.Context
	stopClosing context.CancelFunc
	inflight    sync.WaitGroup

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

// New checks cfg and returns a bridge ready to Serve.
func New(cfg Config) (*Bridge, error) {
	if cfg.Sessions.Path == "" {
		return nil, errors.New("acp bridge: no sessions directory")
	}
	if cfg.Model == nil {
		return nil, errors.New("acp bridge: no model")
	}
	if cfg.Tools == nil {
		return nil, errors.New("acp bridge: no tool registry")
	}
	if cfg.Name == "" {
		cfg.Name = AgentName
	}
	if cfg.Version == "" {
		cfg.Version = Version
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.NewSessionID == nil {
		cfg.NewSessionID = newUUID
	}
	if cfg.Exit == nil {
		cfg.Exit = os.Exit
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	reg, err := faultyTools(cfg.Tools, cfg.Faults)
	if err != nil {
		return nil, fmt.Errorf("acp bridge: %w", err)
	}
	if len(cfg.Faults) > 0 {
		cfg.Logger.Warn("faults injected: this agent is broken on purpose", "faults", cfg.Faults.String())
	}
	return &Bridge{cfg: cfg, tools: reg, log: cfg.Logger, sessions: map[string]*liveSession{}, loading: map[string]chan struct{}{}}, nil
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
	b.base, b.stop = context.WithCancel(context.WithoutCancel(ctx))
	b.closing, b.stopClosing = context.WithCancel(b.base)
	b.conn = sdk.NewAgentSideConnection(b, b.out, pr)
	b.conn.SetLogger(b.log)
	b.mu.Unlock()

	inErr := make(chan error, 1)
	go func() { inErr <- filterInput(in, pw, b.out, b.log) }()

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
		return b.conn.SessionUpdate(b.base, sdk.SessionNotification{SessionId: sdk.SessionId(sessionID), Update: u.SDK})
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

// ErrCodeResourceNotFound is ACP's "resource not found" error code, used for
// an unknown session id.
const ErrCodeResourceNotFound = -32002

// MaxSessionIDLen is the longest session id the bridge looks up; a longer
// one is not found (it could not name a file).
const MaxSessionIDLen = 200

func notFound(id string, reason error) error {
	data := map[string]any{"sessionId": id}
	if reason != nil {
		data["error"] = reason.Error()
	}
	return &sdk.RequestError{Code: ErrCodeResourceNotFound, Message: fmt.Sprintf("session not found: %s", shortID(id)), Data: data}
}

// shortID is id for a message, cut when it is absurdly long.
func shortID(id string) string {
	if len(id) <= MaxSessionIDLen {
		return id
	}
	return fmt.Sprintf("%s… (%d bytes)", id[:64], len(id))
}

// checkID refuses, as not found, an id that cannot name a session file.
func (b *Bridge) checkID(id string) error {
	if len(id) > MaxSessionIDLen {
		return notFound(id, fmt.Errorf("session id of %d bytes is longer than %d", len(id), MaxSessionIDLen))
	}
	if _, err := b.cfg.Sessions.File(id); err != nil {
		return notFound(id, err)
	}
	return nil
}

// LoadSession opens a stored session (or the one already open), replays
// every stored event through the Mapper (replay flavour) and only then
// answers. A session opened here becomes live (prompts reach it) only after
// its replay succeeded. An unknown id answers -32002 "session not found:
// <id>"; a log that cannot be read or breaks an invariant answers -32603
// with the reason, which names the file line; a relative cwd answers -32602.
func (b *Bridge) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	if err := b.enter(); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	defer b.inflight.Done()
	if err := checkCwd(p.Cwd); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	id := string(p.SessionId)
	release, err := b.loadTurn(ctx, id)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	defer release()
	s, live := b.session(id)
	if !live {
		if err := b.checkID(id); err != nil {
			return sdk.LoadSessionResponse{}, err
		}
		log, warnings, err := b.cfg.Sessions.Open(id, b.cfg.LogOptions...)
		for _, w := range warnings {
			b.log.Warn("session log", "session", id, "warning", w)
		}
		if err != nil {
			if errors.Is(err, session.ErrNotFound) {
				return sdk.LoadSessionResponse{}, notFound(id, nil)
			}
			if le := (*session.LockedError)(nil); errors.As(err, &le) {
				return sdk.LoadSessionResponse{}, lockedError(id, le)
			}
			return sdk.LoadSessionResponse{}, &sdk.RequestError{
				Code: -32603, Message: fmt.Sprintf("cannot load session %s: %v", id, err),
				Data: map[string]any{"sessionId": id, "error": err.Error()},
			}
		}
		s = b.newLive(id, log)
	}
	if h := s.log.Header(); h.Cwd != "" && h.Cwd != p.Cwd {
		b.log.Info("session loaded with another cwd", "session", id, "stored", h.Cwd, "requested", p.Cwd)
	}
	switch {
	case b.cfg.Faults.Has(FaultNoLoadReplay):
		b.log.Info("session loaded (fault: no replay)", "session", id)
	case b.cfg.Faults.Has(FaultReplayAfterResponse):
		n, _ := b.out.count()
		b.inflight.Add(1)
		go func() {
			defer b.inflight.Done()
			// The response is the next line written after this handler returns.
			if b.out.waitPast(b.closing, n) == nil {
				_ = b.replay(b.base, s)
			}
		}()
	default:
		if err := b.replay(ctx, s); err != nil {
			if !live {
				if cerr := s.log.Close(); cerr != nil {
					b.log.Warn("close session after a failed replay", "session", id, "err", cerr)
				}
			}
			return sdk.LoadSessionResponse{}, &sdk.RequestError{
				Code: -32603, Message: fmt.Sprintf("cannot load session %s: %v", id, err),
				Data: map[string]any{"sessionId": id, "error": err.Error()},
			}
		}
	}
	if !live {
		if _, err := b.register(s); err != nil {
			return sdk.LoadSessionResponse{}, err
		}
	}
	return sdk.LoadSessionResponse{}, nil
}

// lockedError answers a load of a session another process holds: -32603
// (ACP has no code for a busy resource) with a message naming the holder.
func lockedError(id string, le *session.LockedError) error {
	who := "a process that did not record itself"
	data := map[string]any{"sessionId": id, "error": le.Error(), "path": le.Path}
	if h := le.Holder; h != nil {
		who = fmt.Sprintf("pid %d", h.PID)
		if h.Command != "" {
			who += fmt.Sprintf(" (%s)", h.Command)
		}
		data["holder"] = h
	}
	return &sdk.RequestError{
		Code:    -32603,
		Message: fmt.Sprintf("session %s is in use by another process: %s holds its log; stop it or continue the session there", id, who),
		Data:    data,
	}
}

// loadTurn waits until no other load of id is running in this bridge and
// marks one running: two loads of one session do not both open its log
// (the second finds it live). release ends the mark.
func (b *Bridge) loadTurn(ctx context.Context, id string) (release func(), err error) {
	for {
		b.mu.Lock()
		busy, ok := b.loading[id]
		if !ok {
			done := make(chan struct{})
			b.loading[id] = done
			b.mu.Unlock()
			return func() {
				b.mu.Lock()
				delete(b.loading, id)
				b.mu.Unlock()
				close(done)
			}, nil
		}
		b.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return nil, fmt.Errorf("load session %s: %w", id, ctx.Err())
		}
	}
}

// replay sends the updates of every stored event of s, in order.
func (b *Bridge) replay(ctx context.Context, s *liveSession) error {
	m := NewMapper(b.tools, b.cfg.Faults, true)
	var err error
	sent := 0
	s.log.Range(func(e session.Event) bool {
		if err = ctx.Err(); err != nil {
			return false
		}
		var ups []Update
		ups, err = m.Map(e)
		if err != nil {
			err = fmt.Errorf("replay session %s: %w", s.id, err)
			return false
		}
		for _, u := range ups {
			if err = b.send(replayTarget(b.cfg.Faults, s.id), u); err != nil {
				err = fmt.Errorf("replay session %s: %w", s.id, err)
				return false
			}
			sent++
		}
		return true
	})
	b.log.Info("session replayed", "session", s.id, "events", s.log.Len(), "updates", sent, "err", err)
	return err
}

// --- prompt ---

// Prompt runs one agent turn, streaming an update for every event the turn
// appends, and answers with the stop reason: end_turn (turn completed),
// cancelled (session/cancel), max_turn_requests (the step limit was hit). A
// model error is answered with a JSON-RPC error (-32603, "model error: …"):
// ACP has no stop reason for a failed model call, and an error tells the
// client the turn did not complete. The turn/end event in the log keeps the
// reason either way.
func (b *Bridge) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	if err := b.enter(); err != nil {
		return sdk.PromptResponse{}, err
	}
	defer b.inflight.Done()
	id := string(p.SessionId)
	s, ok := b.session(id)
	if !ok {
		return sdk.PromptResponse{}, notFound(id, nil)
	}
	if b.cfg.Faults.Has(FaultCrashOnPrompt) {
		b.log.Error("fault crash-on-prompt: exiting with status 3")
		b.cfg.Exit(3)
		return sdk.PromptResponse{}, sdk.NewInternalError(map[string]any{"error": "crashed"})
	}
	if b.cfg.Faults.Has(FaultHangOnPrompt) {
		b.log.Warn("fault hang-on-prompt: never answering", "session", id)
		<-b.closing.Done()
		return sdk.PromptResponse{}, sdk.NewInternalError(map[string]any{"error": "agent shut down"})
	}
	content, err := promptParts(p.Prompt)
	if err != nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}

	// One prompt at a time per session: a new prompt waits for the previous
	// one (which the SDK has already cancelled) to finish.
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	if b.cfg.Faults.Has(FaultUpdatesAfterResponse) {
		return b.promptAnswerEarly(ctx, s, content)
	}
	defer func() { <-s.turn }()
	turnCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.setCancel(cancel)
	defer s.setCancel(nil)
	return b.runTurn(turnCtx, s, content, nil)
}

// runTurn runs one agent turn of s, holding its turn token, streaming an
// update for every event the turn appends, and returns the answer to the
// prompt. beforeTodo, if set, is called (once per event, before its
// updates are sent) for each todo_write tool call event.
func (b *Bridge) runTurn(turnCtx context.Context, s *liveSession, content []llm.Part, beforeTodo func()) (sdk.PromptResponse, error) {
	id := s.id
	m := NewMapper(b.tools, b.cfg.Faults, false)
	out := newStepSender(b.cfg.Faults, func(u Update) error { return b.send(id, u) })
	var mapMu sync.Mutex
	unsubscribe := s.log.Subscribe(func(e session.Event) {
		mapMu.Lock()
		defer mapMu.Unlock()
		if beforeTodo != nil && e.Type == session.TypeToolCall {
			var d session.ToolCall
			if e.Decode(&d) == nil && d.Name == todo.ToolName {
				beforeTodo()
			}
		}
		ups, err := m.Map(e)
		if err != nil {
			b.log.Error("map event", "session", id, "err", err)
			return
		}
		if err := out.event(e.Type, ups); err != nil {
			b.log.Warn("send update", "session", id, "err", err)
		}
	})
	reason, err := s.agent.Prompt(turnCtx, content)
	unsubscribe()
	mapMu.Lock()
	if err := out.flush(); err != nil {
		b.log.Warn("send update", "session", id, "err", err)
	}
	mapMu.Unlock()
	if err != nil {
		b.log.Error("prompt failed", "session", id, "err", err)
		return sdk.PromptResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	b.log.Info("turn ended", "session", id, "reason", reason.Kind, "message", reason.Message)
	switch reason.Kind {
	case session.TurnCompleted:
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	case session.TurnCancelled:
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	case session.TurnMaxSteps:
		return sdk.PromptResponse{StopReason: sdk.StopReasonMaxTurnRequests}, nil
	default:
		return sdk.PromptResponse{}, &sdk.RequestError{
			Code: -32603, Message: "model error: " + reason.Message,
			Data: map[string]any{"turnEnd": reason},
		}
	}
}

// promptAnswerEarly is FaultUpdatesAfterResponse: the turn runs beside the
// handler (holding the turn token s already took), and the prompt is
// answered end_turn as soon as the model calls todo_write; that call's
// updates and the rest of the turn go out after the answer (the next line
// written). A turn with no todo_write call is answered when it ends.
func (b *Bridge) promptAnswerEarly(ctx context.Context, s *liveSession, content []llm.Part) (sdk.PromptResponse, error) {
	turnCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.setCancel(cancel)
	early := make(chan struct{})
	var once sync.Once
	beforeTodo := func() {
		once.Do(func() {
			n, _ := b.out.count()
			close(early)
			b.log.Warn("fault updates-after-response: answered the prompt before the todo_write call ran", "session", s.id)
			_ = b.out.waitPast(b.closing, n) // the answer is the next line written
		})
	}
	type outcome struct {
		resp sdk.PromptResponse
		err  error
	}
	done := make(chan outcome, 1)
	b.inflight.Add(1)
	go func() {
		defer b.inflight.Done()
		defer func() { <-s.turn }()
		defer cancel()
		defer s.setCancel(nil)
		resp, err := b.runTurn(turnCtx, s, content, beforeTodo)
		done <- outcome{resp, err}
	}()
	select {
	case <-early:
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	case o := <-done:
		return o.resp, o.err
	}
}

func (s *liveSession) setCancel(c context.CancelFunc) {
	s.mu.Lock()
	s.cancel = c
	s.mu.Unlock()
}

func (s *liveSession) cancelPrompt() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cancel == nil {
		return false
	}
	s.cancel()
	return true
}

// promptParts turns the prompt's content blocks into message parts. Text is
// kept; a resource link or an embedded text resource becomes text naming
// it; other blocks (image, audio) are refused, as initialize did not offer
// them.
func promptParts(blocks []sdk.ContentBlock) ([]llm.Part, error) {
	var parts []llm.Part
	for i, cb := range blocks {
		switch {
		case cb.Text != nil:
			parts = append(parts, llm.Part{Type: llm.PartText, Text: cb.Text.Text})
		case cb.ResourceLink != nil:
			parts = append(parts, llm.Part{Type: llm.PartText, Text: fmt.Sprintf("[%s](%s)", cb.ResourceLink.Name, cb.ResourceLink.Uri)})
		case cb.Resource != nil && cb.Resource.Resource.TextResourceContents != nil:
			r := cb.Resource.Resource.TextResourceContents
			parts = append(parts, llm.Part{Type: llm.PartText, Text: fmt.Sprintf("<resource uri=%q>\n%s\n</resource>", r.Uri, r.Text)})
		default:
			return nil, fmt.Errorf("prompt block %d: unsupported content type (only text and resources)", i)
		}
	}
	if len(parts) == 0 {
		return nil, errors.New("empty prompt")
	}
	return parts, nil
}

// Cancel cancels the session's running prompt, which then answers
// cancelled. Cancelling an idle session does nothing.
func (b *Bridge) Cancel(ctx context.Context, p sdk.CancelNotification) error {
	if b.cfg.Faults.Has(FaultHangOnPrompt) {
		return nil
	}
	if s, ok := b.session(string(p.SessionId)); ok && s.cancelPrompt() {
		b.log.Info("prompt cancelled", "session", p.SessionId)
	}
	return nil
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

// newUUID returns a random RFC 4122 version 4 UUID.
func newUUID() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := fmt.Sprintf("%x", u[:])
	return strings.Join([]string{h[0:8], h[8:12], h[12:16], h[16:20], h[20:32]}, "-")
}
