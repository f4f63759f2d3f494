package agent

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/tools"
)

// DefaultMaxSteps bounds the steps of one turn when Config.MaxSteps is 0.
const DefaultMaxSteps = 25

// Config wires an agent to its model and tools.
type Config struct {
	Model     llm.Model
	Tools     *tools.Registry
	ModelName string
	System    string
	MaxSteps  int
}

// Agent runs turns on one session log. One turn runs at a time.
type Agent struct {
	cfg  Config
	log  *session.Log
	turn sync.Mutex
}

// New returns an agent that owns log.
func New(log *session.Log, cfg Config) *Agent {
	if cfg.MaxSteps <= 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.Tools == nil {
		cfg.Tools = tools.NewRegistry()
	}
	return &Agent{cfg: cfg, log: log}
}

// Session returns the agent's session log (the agent is the owner of its
// tool calls: see tools.Agent).
func (a *Agent) Session() *session.Log { return a.log }

// Tools returns the agent's tool registry.
func (a *Agent) Tools() *tools.Registry { return a.cfg.Tools }

// ErrBusy is returned by Prompt while another turn is running.
var ErrBusy = errors.New("agent: a turn is already running")

// Prompt runs one turn for a user message and returns how it ended. The
// returned error is set only when the log itself refused an event (an
// invariant violation or a failed write); model errors and cancellation are
// turn outcomes (reason error / cancelled), not Go errors.
func (a *Agent) Prompt(ctx context.Context, content []llm.Part) (session.TurnEndReason, error) {
	if !a.turn.TryLock() {
		return session.TurnEndReason{}, ErrBusy
	}
	defer a.turn.Unlock()

	_, _, last := a.log.OpenTurn()
	turn := last + 1
	if _, err := a.log.Append(session.TypeTurnStart, session.TurnStart{
		Turn: turn, Trigger: session.Trigger{Kind: "message", Source: &session.Source{Kind: "user"}},
	}); err != nil {
		return session.TurnEndReason{}, err
	}
	if _, err := a.log.Append(session.TypeUserMessage, session.UserMessage{
		Content: content, Source: &session.Source{Kind: "user"},
	}); err != nil {
		return a.endTurn(turn, session.TurnEndReason{Kind: session.TurnError, Message: err.Error()}, err)
	}
	for step := 1; step <= a.cfg.MaxSteps; step++ {
		more, reason, err := a.runStep(ctx, turn, step)
		if err != nil || reason != nil {
			if reason == nil {
				reason = &session.TurnEndReason{Kind: session.TurnError, Message: err.Error()}
			}
			return a.endTurn(turn, *reason, err)
		}
		if !more {
			return a.endTurn(turn, session.TurnEndReason{Kind: session.TurnCompleted}, nil)
		}
	}
	return a.endTurn(turn, session.TurnEndReason{
		Kind: session.TurnMaxSteps, Message: fmt.Sprintf("stopped after %d steps", a.cfg.MaxSteps),
	}, nil)
}

func (a *Agent) endTurn(turn int, reason session.TurnEndReason, cause error) (session.TurnEndReason, error) {
	if _, err := a.log.Append(session.TypeTurnEnd, session.TurnEnd{Turn: turn, Reason: reason}); err != nil {
		return reason, errors.Join(cause, err)
	}
	return reason, cause
}

// runStep runs one model call and its tool calls. more reports whether the
// model called tools (so another step follows); reason is set when the turn
// must end now (model error, cancellation); err when the log refused.
func (a *Agent) runStep(ctx context.Context, turn, step int) (more bool, reason *session.TurnEndReason, err error) {
	if _, err := a.log.Append(session.TypeStepStart, session.Step{Turn: turn, Step: step}); err != nil {
		return false, nil, err
	}
	endStep := func() error {
		_, err := a.log.Append(session.TypeStepEnd, session.Step{Turn: turn, Step: step})
		return err
	}
	if err := ctx.Err(); err != nil {
		return false, &session.TurnEndReason{Kind: session.TurnCancelled}, endStep()
	}
	req := llm.Request{
		Model:    a.cfg.ModelName,
		System:   a.cfg.System,
		Messages: a.log.DeriveMessages(),
		Tools:    a.cfg.Tools.Specs(),
	}
	var chunkSeqs []int
	var logErr error
	resp, merr := a.cfg.Model.Stream(ctx, req, func(c llm.Chunk) error {
		ev, err := a.log.Append(session.TypeAssistantChunk, session.AssistantChunk{Turn: turn, Step: step, Chunk: c})
		if err != nil {
			logErr = err
			return err
		}
		chunkSeqs = append(chunkSeqs, ev.Seq)
		return nil
	})
	if logErr != nil {
		return false, nil, logErr
	}
	if merr != nil {
		r := &session.TurnEndReason{Kind: session.TurnError, Message: merr.Error()}
		if ctx.Err() != nil {
			r = &session.TurnEndReason{Kind: session.TurnCancelled}
		}
		return false, r, endStep()
	}
	msg, err := a.log.Append(session.TypeAssistantMessage, session.AssistantMessage{
		Turn: turn, Step: step, Content: resp.Content, Usage: resp.Usage,
	}, session.WithSourceEventSeqs(chunkSeqs...))
	if err != nil {
		return false, nil, err
	}
	_ = msg
	calls := resp.ToolCalls()
	for _, c := range calls {
		callEv, err := a.log.Append(session.TypeToolCall, session.ToolCall{
			Turn: turn, Step: step, CallID: c.ID, Name: c.Name, Arguments: c.Arguments,
		})
		if err != nil {
			return false, nil, err
		}
		res := a.cfg.Tools.Execute(ctx, tools.Exec{Agent: a, CallID: c.ID, Turn: turn, Step: step}, c.Name, c.Arguments)
		if _, err := a.log.Append(session.TypeToolResult, session.ToolResult{
			Turn: turn, Step: step, CallID: c.ID, Content: res.Content, IsError: res.IsError,
		}, session.WithSourceEventSeqs(callEv.Seq)); err != nil {
			return false, nil, err
		}
	}
	if err := endStep(); err != nil {
		return false, nil, err
	}
	if len(calls) > 0 && ctx.Err() != nil {
		return false, &session.TurnEndReason{Kind: session.TurnCancelled}, nil
	}
	return len(calls) > 0, nil, nil
}
