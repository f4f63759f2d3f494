package acp

import (
	"context"
	"errors"
	"fmt"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/internal/textcut"
)

// ErrCodeResourceNotFound is ACP's "resource not found" error code, used for
// an unknown session id.
const ErrCodeResourceNotFound = -32002

// MaxSessionIDLen is the longest session id the bridge looks up; a longer
// one is not found (it could not name a file).
const MaxSessionIDLen = 200

func notFound(id string, reason error) error {
	data := map[string]any{"sessionId": id}
	if reason != nil {
		data["error"] = reason.Error()
	}
	return &sdk.RequestError{Code: ErrCodeResourceNotFound, Message: fmt.Sprintf("session not found: %s", shortID(id)), Data: data}
}

// shortID is id for a message, cut when it is absurdly long.
func shortID(id string) string {
	if len(id) <= MaxSessionIDLen {
		return id
	}
	return fmt.Sprintf("%s… (%d bytes)", textcut.Prefix(id, 64), len(id))
}

// checkID refuses, as not found, an id that cannot name a session file.
func (b *Bridge) checkID(id string) error {
	if len(id) > MaxSessionIDLen {
		return notFound(id, fmt.Errorf("session id of %d bytes is longer than %d", len(id), MaxSessionIDLen))
	}
	if _, err := b.cfg.Sessions.File(id); err != nil {
		return notFound(id, err)
	}
	return nil
}

// LoadSession opens a stored session (or the one already open), replays
// every stored event through the Mapper (replay flavour) and only then
// answers. A session opened here becomes live (prompts reach it) only after
// its replay succeeded. An unknown id answers -32002 "session not found:
// <id>"; a log that cannot be read or breaks an invariant answers -32603
// with the reason, which names the file line; a relative cwd answers -32602.
func (b *Bridge) LoadSession(ctx context.Context, p sdk.LoadSessionRequest) (sdk.LoadSessionResponse, error) {
	return b.load(ctx, p, func(ctx context.Context, s *liveSession) error { return b.replay(ctx, s, s.id) })
}

// replayStep replays an opened session to the client before session/load
// is answered (or arranges its replay): a failure fails the load.
type replayStep func(ctx context.Context, s *liveSession) error

// load serves session/load, replaying the session with replay.
func (b *Bridge) load(ctx context.Context, p sdk.LoadSessionRequest, replay replayStep) (sdk.LoadSessionResponse, error) {
	if err := b.enter(); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	defer b.inflight.Done()
	if err := checkCwd(p.Cwd); err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	id := string(p.SessionId)
	release, err := b.loadTurn(ctx, id)
	if err != nil {
		return sdk.LoadSessionResponse{}, err
	}
	defer release()
	s, live := b.session(id)
	if !live {
		if s, err = b.open(id); err != nil {
			return sdk.LoadSessionResponse{}, err
		}
	}
	if h := s.log.Header(); h.Cwd != "" && h.Cwd != p.Cwd {
		b.log.Info("session loaded with another cwd", "session", id, "stored", h.Cwd, "requested", p.Cwd)
	}
	if err := replay(ctx, s); err != nil {
		if !live {
			if cerr := s.log.Close(); cerr != nil {
				b.log.Warn("close session after a failed replay", "session", id, "err", cerr)
			}
		}
		return sdk.LoadSessionResponse{}, loadError(id, err)
	}
	if !live {
		if _, err := b.register(s); err != nil {
			return sdk.LoadSessionResponse{}, err
		}
	}
	return sdk.LoadSessionResponse{}, nil
}

// open opens the stored session id for a load; it is not yet registered.
func (b *Bridge) open(id string) (*liveSession, error) {
	if err := b.checkID(id); err != nil {
		return nil, err
	}
	log, warnings, err := b.cfg.Sessions.Open(id, b.cfg.LogOptions...)
	for _, w := range warnings {
		b.log.Warn("session log", "session", id, "warning", w)
	}
	if err != nil {
		if errors.Is(err, session.ErrNotFound) {
			return nil, notFound(id, nil)
		}
		if le := (*session.LockedError)(nil); errors.As(err, &le) {
			return nil, lockedError(id, le)
		}
		return nil, loadError(id, err)
	}
	return b.newLive(id, log), nil
}

// loadError answers a load that failed: -32603 with the reason.
func loadError(id string, err error) error {
	return &sdk.RequestError{
		Code: -32603, Message: fmt.Sprintf("cannot load session %s: %v", id, err),
		Data: map[string]any{"sessionId": id, "error": err.Error()},
	}
}

// lockedError answers a load of a session another process holds: -32603
// (ACP has no code for a busy resource) with a message naming the holder.
func lockedError(id string, le *session.LockedError) error {
	who := "a process that did not record itself"
	data := map[string]any{"sessionId": id, "error": le.Error(), "path": le.Path}
	if h := le.Holder; h != nil {
		who = fmt.Sprintf("pid %d", h.PID)
		if h.Command != "" {
			who += fmt.Sprintf(" (%s)", h.Command)
		}
		data["holder"] = h
	}
	return &sdk.RequestError{
		Code:    -32603,
		Message: fmt.Sprintf("session %s is in use by another process: %s holds its log; stop it or continue the session there", id, who),
		Data:    data,
	}
}

// loadTurn waits until no other load of id is running in this bridge and
// marks one running: two loads of one session do not both open its log
// (the second finds it live). release ends the mark.
func (b *Bridge) loadTurn(ctx context.Context, id string) (release func(), err error) {
	for {
		b.mu.Lock()
		busy, ok := b.loading[id]
		if !ok {
			done := make(chan struct{})
			b.loading[id] = done
			b.mu.Unlock()
			return func() {
				b.mu.Lock()
				delete(b.loading, id)
				b.mu.Unlock()
				close(done)
			}, nil
		}
		b.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return nil, fmt.Errorf("load session %s: %w", id, ctx.Err())
		}
	}
}

// replay sends the updates of every stored event of s, in order, as
// updates of the session to.
func (b *Bridge) replay(ctx context.Context, s *liveSession, to string) error {
	m := b.present.mapper(true, b.surface())
	var err error
	sent := 0
	s.log.Range(func(e session.Event) bool {
		if err = ctx.Err(); err != nil {
			return false
		}
		var ups []Update
		ups, err = m.Map(e)
		if err != nil {
			err = fmt.Errorf("replay session %s: %w", s.id, err)
			return false
		}
		for _, u := range ups {
			if err = b.send(to, u); err != nil {
				err = fmt.Errorf("replay session %s: %w", s.id, err)
				return false
			}
			sent++
		}
		return true
	})
	b.log.Info("session replayed", "session", s.id, "events", s.log.Len(), "updates", sent, "err", err)
	return err
}
