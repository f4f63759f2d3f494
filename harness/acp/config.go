package acp

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/tools"
)

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
	// IdleReport, when set, is told each time the bridge becomes idle
	// (Bridge.Idle) with what it has written to the client by then: a
	// line with the byte count, after every write made while idle (an
	// answer) and when the last handler's work ends. The conformance
	// runner reads it (driver.IdleFDEnv) to end its settle without
	// waiting for quiet.
	IdleReport io.Writer
}

// DefaultWriteTimeout is how long a write to the client may take before
// the bridge gives the client up (Config.WriteTimeout).
const DefaultWriteTimeout = time.Minute

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
	b := &Bridge{
		cfg: cfg, tools: cfg.Tools, log: cfg.Logger, present: plainPresenter{cfg.Tools},
		sessions: map[string]*liveSession{}, loading: map[string]chan struct{}{},
	}
	b.handler = b
	if err := injectFaults(b, cfg.Faults); err != nil {
		return nil, fmt.Errorf("acp bridge: %w", err)
	}
	return b, nil
}

// newUUID returns a random RFC 4122 version 4 UUID.
func newUUID() string {
	var u [16]byte
	_, _ = rand.Read(u[:])
	u[6] = u[6]&0x0f | 0x40
	u[8] = u[8]&0x3f | 0x80
	h := fmt.Sprintf("%x", u[:])
	return strings.Join([]string{h[0:8], h[8:12], h[12:16], h[16:20], h[20:32]}, "-")
}
