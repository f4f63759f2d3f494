package cli

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/harness/acp"
	"github.com/todoharness/todoharness/harness/builtin"
	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/llm/openaichat"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/internal/buildinfo"
	"github.com/todoharness/todoharness/mockmodel"
)

// SessionsEnv overrides the default sessions directory of `todoharness agent`.
const sessionsEnv = "TODOHARNESS_SESSIONS"

type agentFlags struct {
	composition string
	script      string
	modelURL    string
	model       string
	sessions    string
	maxSteps    int
	logLevel    string
	fsync       bool
}

func newAgentCmd() *cobra.Command {
	var f agentFlags
	cmd := &cobra.Command{
		Use:   "agent",
		Short: "Run the reference ACP agent on stdio (for Zed or any ACP client)",
		Long: `Run the reference harness as an ACP agent: JSON-RPC on stdin/stdout,
logs on stderr. The tools come from the shipped composition (or --composition).

Model, first match wins:
  --script FILE      the in-process scripted mock model (no network)
  --model-url URL    any OpenAI-compatible server, e.g. the mock server's
                     http://127.0.0.1:PORT/v1 (key: $DEEPSEEK_API_KEY or "mock")
  $DEEPSEEK_API_KEY  DeepSeek ($DEEPSEEK_BASE_URL, $DEEPSEEK_MODEL)

Sessions persist as <id>.jsonl under --sessions, else $` + sessionsEnv + `,
else $XDG_STATE_HOME/todoharness/sessions (~/.local/state/todoharness/sessions).

For tests only, $` + acp.FaultEnv + ` (comma-separated) breaks behaviours on
purpose: ` + faultNames() + `.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runAgent(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.composition, "composition", "", "composition file (default: the shipped one)")
	fl.StringVar(&f.script, "script", "", "mock model script (YAML): use the in-process scripted model")
	fl.StringVar(&f.modelURL, "model-url", "", "base URL of an OpenAI-compatible chat completions API")
	fl.StringVar(&f.model, "model", "", "model name (default $DEEPSEEK_MODEL or "+openaichat.DefaultModel+")")
	fl.StringVar(&f.sessions, "sessions", "", "sessions directory (default $"+sessionsEnv+" or the user state dir)")
	fl.BoolVar(&f.fsync, "fsync", true, "fsync each tool call, result, plan and turn boundary to the session log before any client is told of it; --fsync=false only writes it to the kernel (for sessions thrown away after the run, as conform's are: a power loss can lose what it wrote)")
	fl.IntVar(&f.maxSteps, "max-steps", 0, "steps per turn before the prompt stops with max_turn_requests (default 25)")
	fl.StringVar(&f.logLevel, "log-level", "info", "stderr log level: debug, info, warn, error")
	return cmd
}

func faultNames() string {
	var names []string
	for _, f := range acp.KnownFaults() { // SurfaceFaults among them
		names = append(names, string(f))
	}
	return strings.Join(names, ", ")
}

func runAgent(cmd *cobra.Command, f agentFlags) error {
	logger, err := newStderrLogger(cmd.ErrOrStderr(), f.logLevel)
	if err != nil {
		return err
	}
	env := environOf(cmd.Context())
	faults, err := acp.ParseFaults(env.getenv(acp.FaultEnv))
	if err != nil {
		return fmt.Errorf("$%s: %w", acp.FaultEnv, err)
	}
	composition, err := env.path(f.composition)
	if err != nil {
		return fmt.Errorf("--composition: %w", err)
	}
	reg, err := builtin.Compose(composition)
	if err != nil {
		return fmt.Errorf("composition: %w", err)
	}
	model, modelName, desc, err := agentModel(env, f)
	if err != nil {
		return err
	}
	dir, err := sessionsDir(env, f.sessions)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("sessions directory: %w", err)
	}
	idle, err := idleReport(env)
	if err != nil {
		return err
	}
	b, err := acp.New(acp.Config{
		Sessions:  session.Dir{Path: dir, NoFsync: !f.fsync},
		Model:     model,
		ModelName: modelName,
		MaxSteps:  f.maxSteps,
		Tools:     reg,
		Logger:    logger,
		Faults:    faults,
		Exit:      env.exitFunc(),
		// The conformance runner's idle pipe, when it opened one.
		IdleReport: idle,
		// agentInfo says what --version says.
		Version: buildinfo.Version(),
	})
	if err != nil {
		return err
	}
	logger.Info("todoharness agent ready", "version", buildinfo.Version(), "model", desc, "sessions", dir, "fsync", f.fsync, "tools", reg.Names())
	if err := b.Serve(cmd.Context(), cmd.InOrStdin(), cmd.OutOrStdout()); err != nil {
		logger.Error("shutdown", "err", err)
		return err
	}
	logger.Info("todoharness agent stopped")
	return nil
}

// agentModel picks the model: --script, then --model-url, then DeepSeek when
// DEEPSEEK_API_KEY is set.
func agentModel(env environ, f agentFlags) (model llm.Model, name, desc string, err error) {
	return modelChoice{script: f.script, modelURL: f.modelURL, model: f.model}.build(env,
		"no model: give --script FILE (the scripted mock model), --model-url URL (an OpenAI-compatible server such as `todoharness mock`), or set DEEPSEEK_API_KEY (DeepSeek)")
}

// modelChoice is the model flags shared by agent and chat. The first that is
// given wins: --script, --model-url, then DeepSeek when DEEPSEEK_API_KEY is set.
type modelChoice struct {
	script, modelURL, model string
}

// build makes the chosen model; missing is the error text when none is given.
func (c modelChoice) build(env environ, missing string) (model llm.Model, name, desc string, err error) {
	switch {
	case c.script != "":
		script, err := env.path(c.script)
		if err != nil {
			return nil, "", "", fmt.Errorf("--script: %w", err)
		}
		s, err := mockmodel.LoadScript(script)
		if err != nil {
			return nil, "", "", fmt.Errorf("--script: %w", err)
		}
		if err := s.Validate(); err != nil {
			return nil, "", "", fmt.Errorf("--script: %w", err)
		}
		return mockmodel.NewModel(s), c.model, "script " + c.script, nil
	case c.modelURL != "":
		cfg := openaichat.ConfigFromLookup(env.getenv, c.model)
		cfg.BaseURL = c.modelURL
		if cfg.APIKey == "" {
			cfg.APIKey = "mock"
		}
		cl, err := openaichat.NewClient(cfg)
		if err != nil {
			return nil, "", "", fmt.Errorf("--model-url: %w", err)
		}
		return cl, cfg.Model, fmt.Sprintf("%s at %s", cfg.Model, cfg.BaseURL), nil
	case env.getenv("DEEPSEEK_API_KEY") != "":
		cfg := openaichat.ConfigFromLookup(env.getenv, c.model)
		cl, err := openaichat.NewClient(cfg)
		if err != nil {
			return nil, "", "", fmt.Errorf("DeepSeek: %w", err)
		}
		return cl, cfg.Model, fmt.Sprintf("%s at %s", cfg.Model, cfg.BaseURL), nil
	}
	return nil, "", "", errors.New(missing)
}

// sessionsDir resolves the sessions directory: the flag, $TODOHARNESS_SESSIONS,
// $XDG_STATE_HOME/todoharness/sessions, ~/.local/state/todoharness/sessions.
func sessionsDir(env environ, flag string) (string, error) {
	if flag != "" {
		return env.abs(flag)
	}
	if d := env.getenv(sessionsEnv); d != "" {
		return env.abs(d)
	}
	if d := env.getenv("XDG_STATE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "todoharness", "sessions"), nil
	}
	home, err := env.userHome()
	if err != nil {
		return "", fmt.Errorf("sessions directory: no --sessions, $%s or $XDG_STATE_HOME, and %w", sessionsEnv, err)
	}
	return filepath.Join(home, ".local", "state", "todoharness", "sessions"), nil
}

func newStderrLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level: %w", err)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}

// idleReport is where the agent writes its idle reports for the
// conformance runner: in process its driver.ProcIO.IdleReport, as a
// process the file the runner opened (driver.IdleFDEnv); nil when there
// is neither.
func idleReport(env environ) (io.Writer, error) {
	if env.idleReport != nil {
		return env.idleReport, nil
	}
	v := env.getenv(driver.IdleFDEnv)
	if v == "" {
		return nil, nil
	}
	fd, err := strconv.Atoi(v)
	if err != nil || fd < 3 {
		return nil, fmt.Errorf("$%s: %q is not a file descriptor above 2", driver.IdleFDEnv, v)
	}
	return os.NewFile(uintptr(fd), "idle report"), nil
}
