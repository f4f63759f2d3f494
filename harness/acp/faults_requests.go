package acp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
)

// faultyAgent is the request layer of the faults: it serves the
// connection in the bridge's place, breaking session/new and
// session/prompt (shared-todo-list), session/prompt (crash-on-prompt,
// hang-on-prompt, updates-after-response),
// session/cancel (hang-on-prompt) and session/load (no-load-replay,
// replay-after-response, replay-other-session, refuse-live-load), and passes every other
// request to the bridge.
type faultyAgent struct {
	*Bridge
	faults Faults
	// shared is the process's one list (shared-todo-list).
	shared *sharedTodos
}

var (
	_ sdk.Agent       = (*faultyAgent)(nil)
	_ sdk.AgentLoader = (*faultyAgent)(nil)
)

// sharedTodos is the todo list of FaultSharedTodoList: the process's,
// the last one any of its sessions wrote.
type sharedTodos struct {
	mu   sync.Mutex
	list []session.TodoItem
	held bool
	// inherited are the lists the sessions were opened with, not shown
	// yet.
	inherited map[string][]session.TodoItem
}

// NewSession is Bridge.NewSession; under shared-todo-list the new session
// starts with the process's list, when it holds one.
func (f *faultyAgent) NewSession(ctx context.Context, p sdk.NewSessionRequest) (sdk.NewSessionResponse, error) {
	resp, err := f.Bridge.NewSession(ctx, p)
	if err != nil || !f.faults.Has(FaultSharedTodoList) {
		return resp, err
	}
	f.shared.mu.Lock()
	defer f.shared.mu.Unlock()
	if f.shared.held {
		f.shared.inherited[string(resp.SessionId)] = f.shared.list
		f.log.Warn("fault shared-todo-list: a new session starts with the process's list", "session", resp.SessionId, "items", len(f.shared.list))
	}
	return resp, nil
}

// sharedTurn runs a prompt under shared-todo-list: a session opened with
// the process's list shows it first, as a plan, and the list the session
// holds after the turn is the process's.
func (f *faultyAgent) sharedTurn(ctx context.Context, s *liveSession, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	f.shared.mu.Lock()
	list, show := f.shared.inherited[s.id]
	delete(f.shared.inherited, s.id)
	f.shared.mu.Unlock()
	if show {
		if err := f.showList(s, list); err != nil {
			return sdk.PromptResponse{}, err
		}
	}
	resp, err := f.startTurn(ctx, s, p.Prompt, f.turn)
	if list, ok := s.log.CurrentTodos(); ok {
		f.shared.mu.Lock()
		f.shared.list, f.shared.held = list, true
		f.shared.mu.Unlock()
	}
	return resp, err
}

// showList sends the plan of list to session s, as a write of it shows.
func (f *faultyAgent) showList(s *liveSession, list []session.TodoItem) error {
	data, err := json.Marshal(session.TodoWrite{Todos: list})
	if err != nil {
		return err
	}
	ups, err := f.present.mapper(false, f.surface()).Map(session.Event{Type: session.TypeTodoWrite, Data: data})
	if err != nil {
		return err
	}
	for _, u := range ups {
		if err := f.send(s.id, u); err != nil {
			return err
		}
	}
	return nil
}

// Prompt is Bridge.Prompt with the prompt faults.
func (f *faultyAgent) Prompt(ctx context.Context, p sdk.PromptRequest) (sdk.PromptResponse, error) {
	s, leave, err := f.enterSession(p.SessionId)
	if err != nil {
		return sdk.PromptResponse{}, err
	}
	defer leave()
	switch {
	case f.faults.Has(FaultCrashOnPrompt):
		f.log.Error("fault crash-on-prompt: exiting with status 3")
		f.cfg.Exit(3)
		return sdk.PromptResponse{}, sdk.NewInternalError(map[string]any{"error": "crashed"})
	case f.faults.Has(FaultHangOnPrompt):
		f.log.Warn("fault hang-on-prompt: never answering", "session", s.id)
		<-f.closing.Done()
		return sdk.PromptResponse{}, sdk.NewInternalError(map[string]any{"error": "agent shut down"})
	case f.faults.Has(FaultUpdatesAfterResponse):
		return f.startTurn(ctx, s, p.Prompt, f.answerEarly)
	case f.faults.Has(FaultSharedTodoList):
		return f.sharedTurn(ctx, s, p)
	}
	return f.startTurn(ctx, s, p.Prompt, f.turn)
}

// Cancel is Bridge.Cancel, ignored under hang-on-prompt.
func (f *faultyAgent) Cancel(ctx context.Context, p sdk.CancelNotification) error {
	if f.faults.Has(FaultHangOnPrompt) {
		return nil
	}
	return f.Bridge.Cancel(ctx, p)
}

// LoadSession is Bridge.LoadSession with the load faults.
func (f *faultyAgent) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	if _, live := f.session(string(p.SessionId)); live && f.faults.Has(FaultRefuseLiveLoad) {
		return sdk.LoadSessionResponse{}, &sdk.RequestError{Code: -32602,
			Message: fmt.Sprintf("Invalid params: session %s is already loaded", shortID(string(p.SessionId)))}
	}
	return f.load(ctx, p, f.replayStep())
}

// replayStep is session/load's replay under the load faults: none
// (no-load-replay), after the answer (replay-after-response), to another
// session id (replay-other-session).
func (f *faultyAgent) replayStep() replayStep {
	to := func(id string) string { return replayTarget(f.faults, id) }
	switch {
	case f.faults.Has(FaultNoLoadReplay):
		return func(_ context.Context, s *liveSession) error {
			f.log.Info("session loaded (fault: no replay)", "session", s.id)
			return nil
		}
	case f.faults.Has(FaultReplayAfterResponse):
		return func(_ context.Context, s *liveSession) error {
			n, _ := f.out.count()
			f.inflight.Add(1)
			go func() {
				defer f.inflight.Done()
				// The response is the next line written after the handler returns.
				if f.out.waitPast(f.closing, n) == nil {
					_ = f.replay(f.base, s, to(s.id))
				}
			}()
			return nil
		}
	}
	return func(ctx context.Context, s *liveSession) error { return f.replay(ctx, s, to(s.id)) }
}

// replayTarget is the session id session/load's replay of id is sent to:
// id itself, another one under FaultReplayOtherSession.
func replayTarget(fs Faults, id string) string {
	if fs.Has(FaultReplayOtherSession) {
		return id + "-other"
	}
	return id
}

// answerEarly is the turnRunner of FaultUpdatesAfterResponse: the turn
// runs beside the handler (holding the turn token the caller took), and the
// prompt is answered end_turn as soon as the model calls todo_write; that
// call's updates and the rest of the turn go out after the answer (the
// next line written). A turn with no todo_write call is answered when it
// ends.
func (f *faultyAgent) answerEarly(ctx context.Context, s *liveSession, content []llm.Part) (sdk.PromptResponse, error) {
	turnCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s.setCancel(cancel)
	early := make(chan struct{})
	var once sync.Once
	beforeTodo := func() {
		once.Do(func() {
			n, _ := f.out.count()
			close(early)
			f.log.Warn("fault updates-after-response: answered the prompt before the todo_write call ran", "session", s.id)
			_ = f.out.waitPast(f.closing, n) // the answer is the next line written
		})
	}
	type outcome struct {
		resp sdk.PromptResponse
		err  error
	}
	done := make(chan outcome, 1)
	f.inflight.Add(1)
	go func() {
		defer f.inflight.Done()
		defer func() { <-s.turn }()
		defer cancel()
		defer s.setCancel(nil)
		resp, err := f.runTurn(turnCtx, s, content, beforeTodo)
		done <- outcome{resp, err}
	}()
	select {
	case <-early:
		return sdk.PromptResponse{StopReason: sdk.StopReasonEndTurn}, nil
	case o := <-done:
		return o.resp, o.err
	}
}
