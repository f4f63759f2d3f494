package driver

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"time"

	"github.com/todoharness/todoharness/mockmodel"
)

// EnvConfig is the environment one drive of an agent needs.
type EnvConfig struct {
	// Target is the agent.
	Target Target
	// Name is the case's or scenario's name, offered as {{.Case}};
	// DirPrefix starts the names of its temporary folders.
	Name      string
	DirPrefix string
	// TempDir is where the folders are made (default: the system's);
	// KeepDirs keeps them when the Env is closed.
	TempDir  string
	KeepDirs bool
	// Model is offered as {{.Model}}.
	Model string
	// Script, when set, is served by a mock model server the Env starts;
	// otherwise ModelURL is the model's address (a recording proxy) and
	// ModelBase the base path {{.BaseURL}} adds to it.
	Script *mockmodel.Script
	// ScriptLater starts the mock model without its script (Script nil):
	// Server.Play gives it, and a model request waits for it until then.
	ScriptLater bool
	ModelURL    string
	ModelBase   string
	// Pooled starts a pooled mock model (mockmodel.NewPooledServer): a
	// Pool's process serves the cases that lease it. Tenant, instead, is
	// a case's share of such a model, at ModelURL: the case's script is
	// played there (Script, or later).
	Pooled bool
	Tenant *mockmodel.Tenant
	// Start is the zero of the wire log's times (default: now).
	Start time.Time
}

// Env is one drive's environment: a temporary working directory and, beside
// it (never inside: agents scan their cwd), a throw-away home, kept across
// the agent's restarts; the model server; the template variables; the
// target resolved against them; and the wire log every agent process
// started in it writes to. Close releases it.
type Env struct {
	Cwd, Home string
	Vars      Vars
	// Server is the mock model (nil when EnvConfig.Script was nil and
	// ScriptLater unset).
	Server *mockmodel.Server

	// model is what the case's script plays on: Server, or the Tenant.
	model model

	cfg     EnvConfig
	target  resolved
	wire    *wireLog
	started int
}

// NewEnv makes the folders and starts the mock model. On an error the Env
// returned (nil when nothing was made) still needs Close.
func NewEnv(cfg EnvConfig) (*Env, error) {
	if cfg.Start.IsZero() {
		cfg.Start = time.Now()
	}
	e := &Env{cfg: cfg}
	var err error
	if e.Cwd, err = os.MkdirTemp(cfg.TempDir, cfg.DirPrefix+"-"); err != nil {
		return nil, fmt.Errorf("make working directory: %w", err)
	}
	if e.Home, err = os.MkdirTemp(cfg.TempDir, cfg.DirPrefix+"-home-"); err != nil {
		return e, fmt.Errorf("make home directory: %w", err)
	}
	if cfg.Target.HomeFrom != "" {
		if err := copyHome(cfg.Target.HomeFrom, e.Home, MaxHomeCopy); err != nil {
			return e, fmt.Errorf("copy the prepared home %s: %w", cfg.Target.HomeFrom, err)
		}
	}
	modelURL, baseURL := cfg.ModelURL, cfg.ModelURL+cfg.ModelBase
	switch {
	case cfg.Tenant != nil:
		e.model = cfg.Tenant
		if cfg.Script != nil {
			if err := cfg.Tenant.Play(cfg.Script); err != nil {
				return e, err
			}
		}
	case cfg.Pooled:
		e.Server = mockmodel.NewPooledServer()
		modelURL, baseURL = e.Server.URL, e.Server.BaseURL()
	case cfg.Script != nil || cfg.ScriptLater:
		e.Server = mockmodel.NewServer(cfg.Script)
		e.model = e.Server
		modelURL, baseURL = e.Server.URL, e.Server.BaseURL()
	}
	u, _ := url.Parse(modelURL)
	e.Vars = Vars{BaseURL: baseURL, URL: modelURL, Host: u.Hostname(), Port: u.Port(),
		Cwd: e.Cwd, Home: e.Home, Case: cfg.Name, Model: cfg.Model}
	return e, nil
}

// model is the mock model a case's script plays on: a server of its own
// (*mockmodel.Server) or its share of a pooled one (*mockmodel.Tenant).
type model interface {
	Journal() *mockmodel.Journal
	Activity() mockmodel.Activity
	SetHold(func(ctx context.Context, e mockmodel.JournalEntry))
	Play(*mockmodel.Script) error
}

// Resolve expands the target's templates and writes its files (once; Start
// does it when it was not done).
func (e *Env) Resolve() error {
	if e.wire != nil {
		return nil
	}
	t, err := e.cfg.Target.resolve(e.Vars)
	if err != nil {
		return err
	}
	e.target, e.wire = t, newWireLog(e.cfg.Start)
	return nil
}

// Start starts a fresh agent process in the working directory; processes
// are numbered in the wire log in the order they start. When ctx ends the
// agent's process group is killed.
func (e *Env) Start(ctx context.Context) (*Agent, error) {
	if err := e.Resolve(); err != nil {
		return nil, err
	}
	p, err := startProc(ctx, e.target, e.Cwd)
	if err != nil {
		return nil, err
	}
	idx := e.started
	e.started++
	return &Agent{p: p, c: newConn(p, e.wire, idx, e.Cwd), wire: e.wire, cwd: e.Cwd,
		argv: e.target.argv, inProcess: e.target.inproc != nil}, nil
}

// Wire returns every message of the wire log so far (nil before Resolve).
func (e *Env) Wire() []WireMsg {
	if e.wire == nil {
		return nil
	}
	return e.wire.snapshot()
}

// Close stops the mock model and removes the folders (unless KeepDirs).
// The mock's journal stays readable.
func (e *Env) Close() {
	if e == nil {
		return
	}
	if e.Server != nil {
		e.Server.Close()
	}
	if !e.cfg.KeepDirs {
		for _, d := range []string{e.Cwd, e.Home} {
			if d != "" {
				_ = os.RemoveAll(d)
			}
		}
	}
}
