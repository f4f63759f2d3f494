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

// CancelledCallText is the error text of the result recorded for a tool call
// that was not run because the turn was cancelled first. Every tool call the
// model made gets a result, so the history stays well-formed for the next
// turn (OpenAI-compatible APIs reject a tool call without its answer).
const CancelledCallText = "tool call not run: the turn was cancelled"

// Prompt runs one turn for a user message and returns how it ended. The
// returned error is set only when the log itself refused an event (an
// invariant violation or a failed write); model errors and cancellation are
// turn outcomes (reason error / cancelled), not Go errors.
//
// Whatever happens after turn/start, the turn is closed: an open step gets
// its step/end and the turn its turn/end, so every event already written
// stays in a well-formed log.
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
		return a.endTurn(turn, errorReason(err), err)
	}
	reason, err := a.runSteps(ctx, turn)
	return a.endTurn(turn, reason, err)
}

// runSteps runs the steps of turn until the model stops calling tools, the
// turn is cancelled, the model fails, or MaxSteps steps have run.
func (a *Agent) runSteps(ctx context.Context, turn int) (session.TurnEndReason, error) {
	for step := 1; ; step++ {
		if ctx.Err() != nil {
			return session.TurnEndReason{Kind: session.TurnCancelled}, nil
		}
		if step > a.cfg.MaxSteps {
			return session.TurnEndReason{
				Kind: session.TurnMaxSteps, Message: fmt.Sprintf("stopped after %d steps", a.cfg.MaxSteps),
			}, nil
		}
		more, reason, err := a.runStep(ctx, turn, step)
		switch {
		case err != nil:
			return errorReason(err), err
		case reason != nil:
			return *reason, nil
		case !more:
			return session.TurnEndReason{Kind: session.TurnCompleted}, nil
		}
	}
}

func errorReason(err error) session.TurnEndReason {
	return session.TurnEndReason{Kind: session.TurnError, Message: err.Error()}
}

// endTurn closes a step left open by a refused append, then appends
// turn/end with reason.
func (a *Agent) endTurn(turn int, reason session.TurnEndReason, cause error) (session.TurnEndReason, error) {
	if t, s, _ := a.log.OpenTurn(); t == turn && s != 0 {
		if _, err := a.log.Append(session.TypeStepEnd, session.Step{Turn: turn, Step: s}); err != nil {
			cause = errors.Join(cause, err)
		}
	}
	if _, err := a.log.Append(session.TypeTurnEnd, session.TurnEnd{Turn: turn, Reason: reason}); err != nil {
		return reason, errors.Join(cause, err)
	}
	return reason, cause
}

// runStep runs one model call and its tool calls. more reports whether the
// model called tools (so another step follows); reason is set when the turn
// must end now (model error, cancellation); err when the log refused an event
// (the step may then be left open: endTurn closes it).
func (a *Agent) runStep(ctx context.Context, turn, step int) (more bool, reason *session.TurnEndReason, err error) {
	if _, err := a.log.Append(session.TypeStepStart, session.Step{Turn: turn, Step: step}); err != nil {
		return false, nil, err
	}
	req := llm.Request{
		Model:    a.cfg.ModelName,
		System:   a.cfg.System,
		Messages: a.log.DeriveMessages(),
		Tools:    a.cfg.Tools.Specs(),
	}
	var chunkSeqs []int
	var logErr error
	resp, merr := a.stream(ctx, req, func(c llm.Chunk) error {
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
	if merr == nil && resp.Finish.Kind == llm.FinishError {
		merr = errors.New("model stopped with finish reason error (generation interrupted by the provider)")
	}
	if merr != nil {
		r := errorReason(merr)
		if ctx.Err() != nil {
			r = session.TurnEndReason{Kind: session.TurnCancelled}
		}
		_, err := a.log.Append(session.TypeStepEnd, session.Step{Turn: turn, Step: step})
		return false, &r, err
	}
	content := fillCallIDs(resp.Content, turn, step)
	if _, err := a.log.Append(session.TypeAssistantMessage, session.AssistantMessage{
		Turn: turn, Step: step, Content: content, Usage: resp.Usage,
	}, session.WithSourceEventSeqs(chunkSeqs...)); err != nil {
		return false, nil, err
	}
	calls := llm.Response{Content: content}.ToolCalls()
	for _, c := range calls {
		callEv, err := a.log.Append(session.TypeToolCall, session.ToolCall{
			Turn: turn, Step: step, CallID: c.ID, Name: c.Name, Arguments: c.Arguments,
		})
		if err != nil {
			return false, nil, err
		}
		res := tools.ErrorResult(CancelledCallText)
		if ctx.Err() == nil {
			res = a.cfg.Tools.Execute(ctx, tools.Exec{Agent: a, CallID: c.ID, Turn: turn, Step: step}, c.Name, c.Arguments)
		}
		if _, err := a.log.Append(session.TypeToolResult, session.ToolResult{
			Turn: turn, Step: step, CallID: c.ID, Content: res.Content, IsError: res.IsError,
		}, session.WithSourceEventSeqs(callEv.Seq)); err != nil {
			return false, nil, err
		}
	}
	if _, err := a.log.Append(session.TypeStepEnd, session.Step{Turn: turn, Step: step}); err != nil {
		return false, nil, err
	}
	return len(calls) > 0, nil, nil
}

// stream calls the model, turning a panic into an error: a broken model
// ends the turn with reason error instead of taking the process down with
// the turn left open.
func (a *Agent) stream(ctx context.Context, req llm.Request, onChunk func(llm.Chunk) error) (resp llm.Response, err error) {
	defer func() {
		if p := recover(); p != nil {
			resp, err = llm.Response{}, fmt.Errorf("model panicked: %v", p)
		}
	}()
	return a.cfg.Model.Stream(ctx, req, onChunk)
}

// fillCallIDs gives every tool call without an id one (call_<turn>_<step>_<n>),
// so that its tool/call, tool/result and the history agree on it.
func fillCallIDs(content []llm.Part, turn, step int) []llm.Part {
	out := content
	copied := false
	for i, p := range content {
		if p.Type != llm.PartToolCall || p.ID != "" {
			continue
		}
		if !copied {
			out = append([]llm.Part(nil), content...)
			copied = true
		}
		out[i].ID = fmt.Sprintf("call_%d_%d_%d", turn, step, i)
	}
	return out
}
