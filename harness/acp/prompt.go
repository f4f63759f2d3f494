package acp

import (
	"context"
	"errors"
	"fmt"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/todo"
)

// Prompt runs one agent turn, streaming an update for every event the turn
// appends, and answers with the stop reason: end_turn (turn completed),
// cancelled (session/cancel), max_turn_requests (the step limit was hit). A
// model error is answered with a JSON-RPC error (-32603, "model error: …"):
// ACP has no stop reason for a failed model call, and an error tells the
// client the turn did not complete. The turn/end event in the log keeps the
// reason either way.
func (b *Bridge) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	s, leave, err := b.enterSession(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	defer leave()
	return b.startTurn(ctx, s, p.Prompt, b.turn)
}

// enterSession registers an in-flight handler (leave ends it) for the live
// session id; an unknown id answers not found.
func (b *Bridge) enterSession(sid sdk.SessionId) (s *liveSession, leave func(), err error) {
	if err := b.enter(); err != nil {
		return nil, nil, err
	}
	id := string(sid)
	s, ok := b.session(id)
	if !ok {
		b.inflight.Done()
		return nil, nil, notFound(id, nil)
	}
	return s, b.inflight.Done, nil
}

// turnRunner runs a prompt turn of s, holding the turn token its caller
// took (and giving it back), and answers the prompt.
type turnRunner func(ctx context.Context, s *liveSession, content []llm.Part) (sdk.PromptResponse, error)

// startTurn reads the prompt's blocks and, one prompt at a time per
// session, runs the turn: a new prompt waits for the previous one (which
// the SDK has already cancelled) to finish.
func (b *Bridge) startTurn(ctx context.Context, s *liveSession, blocks []sdk.ContentBlock, run turnRunner) (sdk.PromptResponse, error) {
	content, err := promptParts(blocks)
	if err != nil {
		return sdk.PromptResponse{}, sdk.NewInvalidParams(map[string]any{"error": err.Error()})
	}
	select {
	case s.turn <- struct{}{}:
	case <-ctx.Done():
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	}
	return run(ctx, s, content)
}

// turn is the turnRunner of the correct agent: the turn runs in the
// handler, cancelled with it or by session/cancel.
func (b *Bridge) turn(ctx context.Context, s *liveSession, content []llm.Part) (sdk.PromptResponse, error) {
	return b.acceptedTurn(ctx, s, content, nil)
}

// acceptedTurn is turn calling accepted, when set, once a session/cancel
// reaches the turn (v2 answers the prompt there).
func (b *Bridge) acceptedTurn(ctx context.Context, s *liveSession, content []llm.Part, accepted func()) (sdk.PromptResponse, error) {
	defer func() { <-s.turn }()
	turnCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.setCancel(cancel)
	defer s.setCancel(nil)
	if accepted != nil {
		accepted()
	}
	return b.runTurn(turnCtx, s, content, nil)
}

// runTurn runs one agent turn of s, holding its turn token, streaming an
// update for every event the turn appends, and returns the answer to the
// prompt. beforeTodo, if set, is called (once per event, before its
// updates are sent) for each todo_write tool call event. On v2 the turn's
// user_message is followed by state_update running, and the turn ends
// with the idle state_update carrying its stop reason (endForeground).
func (b *Bridge) runTurn(turnCtx context.Context, s *liveSession, content []llm.Part, beforeTodo func()) (sdk.PromptResponse, error) {
	id := s.id
	v2 := b.surface() == surfaceV2
	running := false
	m := b.present.mapper(false, b.surface())
	out := b.present.turnSender(func(u Update) error { return b.send(id, u) })
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
		if v2 && !running && e.Type == session.TypeUserMessage {
			running = true
			ups = append(ups, stateUpdate("running", "", ""))
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
	if v2 {
		b.endForeground(id, reason, err)
	}
	if err != nil {
		b.log.Error("prompt failed", "session", id, "err", err)
		return sdk.PromptResponse{}, sdk.NewInternalError(map[string]any{"error": err.Error()})
	}
	b.log.Info("turn ended", "session", id, "reason", reason.Kind, "message", reason.Message)
	return promptResponse(reason)
}

// promptResponse is the answer to a prompt whose turn ended for reason.
func promptResponse(reason session.TurnEndReason) (sdk.PromptResponse, error) {
	switch reason.Kind {
	case session.TurnCompleted:
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	case session.TurnCancelled:
		return sdk.PromptResponse{StopReason: sdk.StopReasonCancelled}, nil
	case session.TurnMaxSteps:
		return sdk.PromptResponse{StopReason: sdk.StopReasonMaxTurnRequests}, nil
	}
	return sdk.PromptResponse{}, &sdk.RequestError{
		Code: -32603, Message: "model error: " + reason.Message,
		Data: map[string]any{"turnEnd": reason},
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
	if s, ok := b.session(string(p.SessionId)); ok && s.cancelPrompt() {
		b.log.Info("prompt cancelled", "session", p.SessionId)
	}
	return nil
}
