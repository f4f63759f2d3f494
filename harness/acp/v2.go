package acp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/internal/textcut"
)

// ProtocolVersion2 is ACP version 2 (a Draft since 2026-07-20), which the
// bridge speaks to a client that offers 2 or later in initialize; a client
// that offers 1 gets version 1 exactly as before.
const ProtocolVersion2 = sdk.ProtocolVersion(2)

// Method names of version 2 beyond v1's.
const (
	methodSessionResume = "session/resume"
	methodSessionList   = "session/list"
	methodSessionClose  = "session/close"
)

// surface returns the surface the connection negotiated (v1 until an
// initialize said otherwise).
func (b *Bridge) surface() surface { return surface(b.surf.Load()) }

// route is the input filter's hook, offered every forwarded line. The
// first initialize decides the connection's surface: a protocolVersion of
// 2 or more makes it a v2 connection, whose lines the bridge serves itself
// from then on (serveV2: the SDK speaks v1 only); otherwise the line goes
// to the SDK as before, and a clientCapabilities.plan object selects v1's
// plan operations (plan_update in place of plan). An initialize whose
// version cannot be read is left to the SDK, which answers it.
func (b *Bridge) route(line []byte, msg message) bool {
	if b.surface() == surfaceV2 {
		b.serveV2(line, msg)
		return true
	}
	if b.negotiated || msg.method != sdkMethodInitialize {
		return false
	}
	var req struct {
		Params struct {
			ProtocolVersion    json.RawMessage `json:"protocolVersion"`
			ClientCapabilities struct {
				Plan json.RawMessage `json:"plan"`
			} `json:"clientCapabilities"`
		} `json:"params"`
	}
	var version uint16
	if json.Unmarshal(line, &req) != nil || json.Unmarshal(req.Params.ProtocolVersion, &version) != nil {
		return false
	}
	b.negotiated = true
	if version >= uint16(ProtocolVersion2) {
		b.surf.Store(uint32(surfaceV2))
		b.serveV2(line, msg)
		return true
	}
	var plan map[string]json.RawMessage
	if json.Unmarshal(req.Params.ClientCapabilities.Plan, &plan) == nil && plan != nil {
		b.surf.Store(uint32(surfaceV1PlanOps))
	}
	return false
}

// v2Handler serves one v2 request; it calls reply once (a later call does
// nothing), and may go on working after it (session/prompt).
type v2Handler func(ctx context.Context, params json.RawMessage, reply func(result any, err error))

// serveV2 serves one line of a v2 connection: initialize and
// session/cancel at once, every other request in its own goroutine (as
// the SDK serves v1's), counted as in flight until its work ends. A
// response from the client is dropped (the bridge sends no requests); an
// unknown method is answered -32601.
func (b *Bridge) serveV2(line []byte, msg message) {
	if msg.method == "" {
		b.log.Info("v2: response from the client dropped", "id", string(msg.id))
		return
	}
	var req struct {
		Params json.RawMessage `json:"params"`
	}
	_ = json.Unmarshal(line, &req) // checkMessage read the line as an object
	var h v2Handler
	switch msg.method {
	case sdkMethodInitialize:
		b.answerV2(msg, b.initializeV2(), nil)
		return
	case sdk.AgentMethodSessionCancel:
		var p struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(req.Params, &p) == nil {
			_ = b.handler.Cancel(b.closing, sdk.CancelNotification{SessionId: sdk.SessionId(p.SessionID)})
		}
		return
	case sdk.AgentMethodSessionNew:
		h = b.newSessionV2
	case sdk.AgentMethodSessionPrompt:
		h = b.promptV2
	case methodSessionResume:
		h = b.resumeV2
	case methodSessionList:
		h = b.listV2
	case methodSessionClose:
		h = b.closeV2
	default:
		if msg.hasID {
			b.answerV2(msg, nil, sdk.NewMethodNotFound(msg.method))
		}
		return
	}
	if err := b.enter(); err != nil {
		b.answerV2(msg, nil, err)
		return
	}
	var once sync.Once
	reply := func(result any, err error) { once.Do(func() { b.answerV2(msg, result, err) }) }
	go func() {
		defer b.inflight.Done()
		h(b.closing, req.Params, reply)
		reply(nil, sdk.NewInternalError(map[string]any{"error": "the request was not served"}))
	}()
}

// answerV2 writes the response to a v2 request (nothing for a
// notification): result, or err as a JSON-RPC error (its code when it is
// a *sdk.RequestError, else -32603).
func (b *Bridge) answerV2(msg message, result any, err error) {
	if !msg.hasID {
		return
	}
	var werr error
	if err != nil {
		var re *sdk.RequestError
		if !errors.As(err, &re) {
			re = sdk.NewInternalError(map[string]any{"error": err.Error()})
		}
		werr = b.out.writeJSON(rpcError{JSONRPC: "2.0", ID: msg.id, Error: rpcErrorBody{Code: re.Code, Message: re.Message, Data: re.Data}})
	} else {
		werr = b.out.writeJSON(struct {
			JSONRPC string          `json:"jsonrpc"`
			ID      json.RawMessage `json:"id"`
			Result  any             `json:"result"`
		}{"2.0", msg.id, result})
	}
	if werr != nil {
		b.log.Warn("v2: answer", "method", msg.method, "err", werr)
	}
}

// invalidParams answers params that do not decode: -32602 with the reason.
func invalidParams(method string, err error) error {
	return &sdk.RequestError{Code: -32602, Message: fmt.Sprintf("Invalid params: %s: %v", method, err),
		Data: map[string]any{"method": method, "error": err.Error()}}
}

// initializeV2 is v2's initialize result: protocolVersion 2, info, and the
// session capability (the baseline methods: session/new, list, resume,
// close, prompt, cancel, update; no prompt or MCP extensions).
func (b *Bridge) initializeV2() any {
	b.log.Info("initialize", "protocolVersion", int(ProtocolVersion2))
	type implementation struct {
		Name    string `json:"name"`
		Version string `json:"version"`
	}
	return struct { // keys sorted, as the SDK's v1 answer's are
		AuthMethods  []struct{} `json:"authMethods"`
		Capabilities struct {
			Session struct{} `json:"session"`
		} `json:"capabilities"`
		Info            implementation `json:"info"`
		ProtocolVersion int            `json:"protocolVersion"`
	}{AuthMethods: []struct{}{}, Info: implementation{b.cfg.Name, b.cfg.Version}, ProtocolVersion: int(ProtocolVersion2)}
}

// sessionParams are the parameters of v2's session requests the bridge
// reads (session/new, resume, prompt, close, list).
type sessionParams struct {
	SessionID  string             `json:"sessionId"`
	Cwd        string             `json:"cwd"`
	Prompt     []sdk.ContentBlock `json:"prompt"`
	ReplayFrom *struct {
		Type string `json:"type"`
	} `json:"replayFrom"`
}

func decodeParams(method string, raw json.RawMessage) (sessionParams, error) {
	var p sessionParams
	if len(raw) == 0 {
		return p, invalidParams(method, errors.New("no params"))
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return p, invalidParams(method, err)
	}
	return p, nil
}

// newSessionV2 serves session/new: v1's (a persisted session, cwd checked).
func (b *Bridge) newSessionV2(ctx context.Context, raw json.RawMessage, reply func(any, error)) {
	p, err := decodeParams(sdk.AgentMethodSessionNew, raw)
	if err != nil {
		reply(nil, err)
		return
	}
	resp, err := b.handler.NewSession(ctx, sdk.NewSessionRequest{Cwd: p.Cwd, McpServers: []sdk.McpServer{}})
	if err != nil {
		reply(nil, err)
		return
	}
	reply(struct {
		SessionID string `json:"sessionId"`
	}{string(resp.SessionId)}, nil)
}

// promptV2 serves session/prompt: the answer ({}) only acknowledges the
// prompt, once its turn holds the session (a prompt waits for the one
// before it); the turn then streams its updates, user_message and
// state_update running first, and ends with the idle state_update
// carrying its stop reason (runTurn). A prompt refused before its turn
// (an unknown session, unsupported content) is answered with the error.
func (b *Bridge) promptV2(ctx context.Context, raw json.RawMessage, reply func(any, error)) {
	p, err := decodeParams(sdk.AgentMethodSessionPrompt, raw)
	if err != nil {
		reply(nil, err)
		return
	}
	s, leave, err := b.enterSession(sdk.SessionId(p.SessionID))
	if err != nil {
		reply(nil, err)
		return
	}
	defer leave()
	accepted := false
	_, err = b.startTurn(ctx, s, p.Prompt, func(ctx context.Context, s *liveSession, content []llm.Part) (sdk.PromptResponse, error) {
		if live, ok := b.session(s.id); !ok || live != s { // closed while the prompt waited
			<-s.turn
			return sdk.PromptResponse{}, notFound(s.id, errors.New("the session was closed"))
		}
		return b.acceptedTurn(ctx, s, content, func() {
			accepted = true
			reply(struct{}{}, nil)
		})
	})
	if !accepted {
		if err == nil {
			err = sdk.NewInternalError(map[string]any{"error": "agent is shutting down"})
		}
		reply(nil, err)
	}
}

// endForeground sends, on v2, the end of a turn's foreground work: the
// idle state_update with the stop reason of reason (a model error, or a
// turn that could not run, is the extension reason _model_error with its
// text in _meta).
func (b *Bridge) endForeground(id string, reason session.TurnEndReason, err error) {
	stop, text := "", ""
	switch {
	case err != nil:
		stop, text = stopReasonModelError, err.Error()
	case reason.Kind == session.TurnCompleted:
		stop = string(sdk.StopReasonEndTurn)
	case reason.Kind == session.TurnCancelled:
		stop = string(sdk.StopReasonCancelled)
	case reason.Kind == session.TurnMaxSteps:
		stop = string(sdk.StopReasonMaxTurnRequests)
	default:
		stop, text = stopReasonModelError, reason.Message
	}
	for _, u := range b.present.idle(stop, text) {
		if err := b.send(id, u); err != nil {
			b.log.Warn("send update", "session", id, "err", err)
		}
	}
}

// resumeV2 serves session/resume. With replayFrom {type: "start"} it is
// v1's session/load (the history replayed as v2 updates, the plan
// included, before the answer; the load faults apply); without replayFrom
// (or null) the session is reattached without replay. Another cursor is
// refused: -32602 naming it.
func (b *Bridge) resumeV2(ctx context.Context, raw json.RawMessage, reply func(any, error)) {
	p, err := decodeParams(methodSessionResume, raw)
	if err != nil {
		reply(nil, err)
		return
	}
	req := sdk.LoadSessionRequest{SessionId: sdk.SessionId(p.SessionID), Cwd: p.Cwd, McpServers: []sdk.McpServer{}}
	switch {
	case p.ReplayFrom == nil:
		_, err = b.load(ctx, req, func(context.Context, *liveSession) error { return nil })
	case p.ReplayFrom.Type == "start":
		loader, ok := b.handler.(sdk.AgentLoader)
		if !ok { // the bridge and its fault layer both load
			err = sdk.NewInternalError(map[string]any{"error": "replay is not served"})
			break
		}
		_, err = loader.LoadSession(ctx, req)
	default:
		typ := textcut.Prefix(p.ReplayFrom.Type, 64) // the client's text, echoed: bounded
		err = &sdk.RequestError{Code: -32602,
			Message: fmt.Sprintf("Invalid params: replayFrom type %q is not supported (only \"start\")", typ),
			Data:    map[string]any{"field": "replayFrom.type", "error": "unsupported replay cursor", "type": typ}}
	}
	if err != nil {
		reply(nil, err)
		return
	}
	reply(struct{}{}, nil)
}

// sessionInfo is an entry of session/list's answer.
type sessionInfo struct {
	SessionID string `json:"sessionId"`
	Cwd       string `json:"cwd"`
}

// listV2 serves session/list: the sessions open on this connection (new
// or resumed), by id, filtered by cwd when one is given; one page, no
// cursor.
func (b *Bridge) listV2(_ context.Context, raw json.RawMessage, reply func(any, error)) {
	var p sessionParams
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &p); err != nil {
			reply(nil, invalidParams(methodSessionList, err))
			return
		}
	}
	b.mu.Lock()
	out := make([]sessionInfo, 0, len(b.sessions))
	for id, s := range b.sessions {
		if h := s.log.Header(); p.Cwd == "" || h.Cwd == p.Cwd {
			out = append(out, sessionInfo{SessionID: id, Cwd: h.Cwd})
		}
	}
	b.mu.Unlock()
	slices.SortFunc(out, func(x, y sessionInfo) int { return cmp.Compare(x.SessionID, y.SessionID) })
	reply(struct {
		Sessions []sessionInfo `json:"sessions"`
	}{out}, nil)
}

// closeV2 serves session/close: the session's running turn is cancelled
// and waited for, then its log is closed; it is no longer live (a resume
// opens it again), and a prompt that was waiting for the turn is refused
// as not found. An unknown id answers not found.
func (b *Bridge) closeV2(_ context.Context, raw json.RawMessage, reply func(any, error)) {
	p, err := decodeParams(methodSessionClose, raw)
	if err != nil {
		reply(nil, err)
		return
	}
	b.mu.Lock()
	s, ok := b.sessions[p.SessionID]
	delete(b.sessions, p.SessionID)
	b.mu.Unlock()
	if !ok {
		reply(nil, notFound(p.SessionID, nil))
		return
	}
	// The running turn, if any, was cancelled: it ends (and gives its
	// token back) without waiting on anything the client does.
	s.cancelPrompt()
	s.turn <- struct{}{}
	defer func() { <-s.turn }() // a prompt still waiting then finds it closed
	if err := s.log.Close(); err != nil {
		reply(nil, sdk.NewInternalError(map[string]any{"error": fmt.Sprintf("close session %s: %v", s.id, err)}))
		return
	}
	reply(struct{}{}, nil)
}
