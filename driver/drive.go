package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/todoharness/todoharness/driver/acpnorm"
)

// DriveConfig is one run of an agent through steps for Drive.
type DriveConfig struct {
	// Env is the run's environment (a mock model's Script, or the
	// ModelURL of a recording proxy).
	Env EnvConfig
	// Steps are sent in order: initialize, newSession, prompt.
	Steps []Step
	// Timeout bounds the run, agent start-up included (0:
	// DefaultTimeout); Grace is the shutdown grace (0: DefaultGrace).
	Timeout, Grace time.Duration
	// ErrorAnswerFails makes a step answered with an error fail the run
	// (DriveResult.Failed); otherwise only a step that could not be sent
	// does.
	ErrorAnswerFails bool
	// Prepared, when set, is called once the environment exists, before
	// the agent starts.
	Prepared func(*Env)
	// Offer is what the initialize step offers (the zero value: protocol
	// version 1). When the agent negotiates version 2, each prompt step
	// waits for the idle state_update that ends its turn (the answer only
	// acknowledges the prompt), and initialize's info names the agent.
	Offer Offer
}

// DriveResult is what Drive observed.
type DriveResult struct {
	// Stdout is the agent's stdout, normalised (acpnorm).
	Stdout []byte
	// Notes are worth a look: steps answered with an error or not sent,
	// and, when the run failed or the agent did not exit once its stdin
	// closed, how it ended and its stderr tail.
	Notes []string
	// Failed: a step could not be sent (or, with ErrorAnswerFails, was
	// answered with an error).
	Failed bool
	// AgentInfo is the initialize answer's agentInfo, "name version".
	AgentInfo string
	// Cwd and Home are the run's folders (removed unless KeepDirs).
	Cwd, Home string
	// ModelErrors are the mock model's refusals; Unasked the number of its
	// script's turns never asked for (a mock model only).
	ModelErrors []string
	Unasked     int
}

// Drive runs the agent in a fresh environment through the steps, as an
// editor would: each step is sent whatever the one before answered (an
// error answer is noted; a step that cannot be sent ends the steps), then
// the agent is stopped as an editor stops it and its stdout normalised. An
// error means the agent could not be run at all, or its stdout not
// normalised (the result is then returned too).
func Drive(ctx context.Context, cfg DriveConfig) (*DriveResult, error) {
	timeout, grace := cmpOr(cfg.Timeout, DefaultTimeout), cmpOr(cfg.Grace, DefaultGrace)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	env, err := NewEnv(cfg.Env)
	defer env.Close()
	if err != nil {
		return nil, err
	}
	if cfg.Prepared != nil {
		cfg.Prepared(env)
	}
	agent, err := env.Start(ctx)
	if err != nil {
		return nil, fmt.Errorf("start the agent: %w", err)
	}
	agent.offer = cfg.Offer
	res := &DriveResult{Cwd: env.Cwd, Home: env.Home}
	sessionIDs := res.sendSteps(ctx, agent, cfg)
	how, stderr := agent.Stop(grace)
	if res.Failed || !strings.HasPrefix(how, "exited after stdin closed") {
		res.Notes = append(res.Notes, "the agent "+how)
		if tail := strings.TrimSpace(stderr); tail != "" {
			res.Notes = append(res.Notes, "stderr (tail): "+tail[max(0, len(tail)-600):])
		}
	}
	if env.Server != nil {
		for _, e := range env.Server.Journal().Errors() {
			res.ModelErrors = append(res.ModelErrors, fmt.Sprintf("model request %d: %s", e.Index+1, e.Error))
		}
		res.Unasked = env.Server.Remaining()
	}
	var aliases []string
	if real, err := filepath.EvalSymlinks(env.Cwd); err == nil && real != env.Cwd {
		aliases = append(aliases, real)
	}
	norm := acpnorm.Normalizer{Cwd: env.Cwd, CwdAliases: aliases, SessionIDs: sessionIDs}
	if res.Stdout, err = norm.Normalize(agent.Stdout()); err != nil {
		return res, fmt.Errorf("normalise the agent's stdout: %w", err)
	}
	return res, nil
}

// sendSteps sends the steps and returns the session ids the agent issued.
func (res *DriveResult) sendSteps(ctx context.Context, agent *Agent, cfg DriveConfig) (sessionIDs []string) {
	sessionID := ""
	for i, st := range cfg.Steps {
		result, err := agent.Step(ctx, st.Op, st.Text, sessionID)
		if err != nil {
			var rpc *RPCError
			if errors.As(err, &rpc) {
				res.Failed = res.Failed || cfg.ErrorAnswerFails
				res.Notes = append(res.Notes, fmt.Sprintf("step %d (%s) was answered with %v", i+1, st.Op, rpc))
				continue
			}
			res.Failed = true
			res.Notes = append(res.Notes, fmt.Sprintf("step %d (%s): %v; the steps after it were not sent", i+1, st.Op, err))
			return sessionIDs
		}
		switch st.Op {
		case OpInitialize:
			type implementation struct {
				Name    string `json:"name"`
				Version string `json:"version"`
			}
			var in struct {
				AgentInfo implementation `json:"agentInfo"`
				Info      implementation `json:"info"` // protocol version 2's
			}
			if json.Unmarshal(result, &in) == nil {
				for _, i := range []implementation{in.AgentInfo, in.Info} {
					if i.Name != "" {
						res.AgentInfo = strings.TrimSpace(i.Name + " " + i.Version)
						break
					}
				}
			}
		case OpNewSession:
			var ns struct {
				SessionID string `json:"sessionId"`
			}
			if json.Unmarshal(result, &ns) == nil && ns.SessionID != "" {
				sessionID = ns.SessionID
				sessionIDs = append(sessionIDs, ns.SessionID)
			}
		}
	}
	return sessionIDs
}

func cmpOr(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}
