package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/harness/acp"
	"github.com/todoharness/todoharness/harness/acp/acpclient"
	"github.com/todoharness/todoharness/harness/builtin"
	"github.com/todoharness/todoharness/harness/llm/openaichat"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/internal/safefile"
)

// Files of a scenario folder.
const (
	InputFile      = "input.json"
	CassetteFile   = "cassette.yaml"
	MockScriptFile = "mock-script.yaml"
)

// Step ops: those of driver.Step a scenario takes.
const (
	OpInitialize = driver.OpInitialize
	OpNewSession = driver.OpNewSession
	OpPrompt     = driver.OpPrompt
)

// Step is one ACP step of a scenario (driver's: a scenario's step never
// sets Cancel).
type Step = driver.Step

// Scenario is a loaded scenario folder.
type Scenario struct {
	Name string
	Dir  string
	// Description is the optional "description" of input.json.
	Description string
	Steps       []Step
	// MockScript is the path of mock-script.yaml, "" when there is none.
	MockScript string
}

// CassettePath is the scenario's cassette file.
func (s *Scenario) CassettePath() string { return filepath.Join(s.Dir, CassetteFile) }

// MaxInputBytes is the largest input.json Load reads.
const MaxInputBytes = 16 << 20

// Load reads the scenario in dir. Its input.json must be a regular file
// (never a FIFO or a device) of at most MaxInputBytes.
func Load(dir string) (*Scenario, error) {
	path := filepath.Join(dir, InputFile)
	data, err := safefile.ReadRegular(path, MaxInputBytes)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", dir, err)
	}
	var in struct {
		Description string `json:"description"`
		Steps       []Step `json:"steps"`
	}
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", path, err)
	}
	if len(in.Steps) == 0 {
		return nil, fmt.Errorf("scenario %s: no steps", path)
	}
	for i, st := range in.Steps {
		switch st.Op {
		case OpInitialize, OpNewSession:
		case OpPrompt:
			if st.Text == "" {
				return nil, fmt.Errorf("scenario %s: steps[%d]: prompt without text", path, i)
			}
		default:
			return nil, fmt.Errorf("scenario %s: steps[%d]: unknown op %q (want %s, %s or %s)", path, i, st.Op, OpInitialize, OpNewSession, OpPrompt)
		}
	}
	s := &Scenario{Name: filepath.Base(dir), Dir: dir, Description: in.Description, Steps: in.Steps}
	if _, err := os.Stat(filepath.Join(dir, MockScriptFile)); err == nil {
		s.MockScript = filepath.Join(dir, MockScriptFile)
	}
	return s, nil
}

// List returns the names of the scenario folders in dir (those holding an
// input.json), sorted.
func List(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("list scenarios: %w", err)
	}
	var out []string
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, e.Name(), InputFile)); err == nil {
			out = append(out, e.Name())
		}
	}
	sort.Strings(out)
	if len(out) == 0 {
		return nil, fmt.Errorf("list scenarios: no folder with an %s in %s", InputFile, dir)
	}
	return out, nil
}

// RunOptions configures one run of a scenario.
type RunOptions struct {
	// Client configures the llm client; its HTTPClient carries the model
	// requests (a cassette Recorder's Client()).
	Client openaichat.ClientConfig
	// System is the agent's system prompt ("" as `todoharness agent`).
	System string
	// CloseTimeout bounds the bridge's shutdown (default 10s).
	CloseTimeout time.Duration
}

// Result is what a run produced.
type Result struct {
	// Wire is the raw agent-to-client ACP stream, one line per message.
	Wire [][]byte
	// SessionID is the id of the session newSession created.
	SessionID string
	// Cwd is the working directory the session was created in.
	Cwd string
	// Log is the session log as stored on disk by the bridge.
	Log *session.Loaded
}

// Run drives the scenario's steps through a fresh bridge in a temporary
// folder (sessions and cwd), and returns the wire and the stored log. A
// prompt that fails (a model error, such as a cassette miss) makes Run fail
// with the bridge's error, after the bridge was shut down; the partial
// Result is returned alongside.
func Run(ctx context.Context, sc *Scenario, opts RunOptions) (*Result, error) {
	// The driver's environment: the session's cwd, and beside it the
	// bridge's home, where it keeps its sessions.
	env, err := driver.NewEnv(driver.EnvConfig{Name: sc.Name, DirPrefix: "todoharness-e2e-" + sc.Name})
	defer env.Close()
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	sessions, cwd := env.Home, env.Cwd
	model, err := openaichat.NewClient(opts.Client)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	reg, err := builtin.Compose("")
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	bridge, err := acp.New(acp.Config{
		Sessions: session.Dir{Path: sessions}, Model: model, ModelName: opts.Client.Model,
		System: opts.System, Tools: reg,
	})
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", sc.Name, err)
	}
	srv := acpclient.Serve(ctx, bridge)
	res := &Result{Cwd: cwd}
	stepErr := runSteps(ctx, srv.Conn, sc, res)
	timeout := opts.CloseTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	closeCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	closeErr := srv.Close(closeCtx)
	res.Wire = srv.Wire.Lines()
	if res.SessionID != "" {
		path, err := (session.Dir{Path: sessions}).File(res.SessionID)
		if err == nil {
			res.Log, err = session.LoadFile(path)
		}
		if err != nil && stepErr == nil {
			stepErr = fmt.Errorf("scenario %s: read the session log: %w", sc.Name, err)
		}
	}
	if err := errors.Join(stepErr, closeErr); err != nil {
		return res, err
	}
	return res, nil
}

func runSteps(ctx context.Context, c *acpclient.Conn, sc *Scenario, res *Result) error {
	for i, st := range sc.Steps {
		fail := func(err error) error {
			return fmt.Errorf("scenario %s: step %d (%s): %w", sc.Name, i+1, st.Op, err)
		}
		switch st.Op {
		case OpInitialize:
			if _, err := c.Init(ctx); err != nil {
				return fail(err)
			}
		case OpNewSession:
			id, err := c.NewSessionIn(ctx, res.Cwd)
			if err != nil {
				return fail(err)
			}
			res.SessionID = id
		case OpPrompt:
			if res.SessionID == "" {
				return fail(errors.New("prompt before newSession"))
			}
			if _, err := c.PromptText(ctx, res.SessionID, st.Text); err != nil {
				return fail(err)
			}
		}
	}
	return nil
}
