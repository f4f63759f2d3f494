package mockmodel

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/internal/textcut"
)

// CodeUnattributed: a pooled server (NewPooledServer) could not tell which
// scenario a request belongs to: its user messages carry no scenario's
// marker, or more than one.
const CodeUnattributed = "mock_request_unattributed"

// Tenant is one scenario's share of a pooled server (NewPooledServer): one
// agent process serves several scenarios, each in its own session, and
// the server answers each request from the script of the scenario whose
// marker the request's user messages carry. A tenant has its own script,
// journal and traffic, as a server of its own has.
type Tenant struct {
	// Marker is the text the scenario's first prompt carries: the agent
	// forwards it to the model with the user's text, in the first request
	// and in every later one of the conversation.
	Marker string

	p *player

	mu       sync.Mutex
	active   int
	requests int
	last     time.Time
	hold     func(ctx context.Context, e JournalEntry)
}

// NewPooledServer starts a server on 127.0.0.1:0 that plays no script of
// its own: AddTenant gives it one per scenario. A request it cannot
// attribute to exactly one tenant is refused (CodeUnattributed) and
// journaled in the server's own journal, with the request's user messages
// quoted: it is never answered from a guess.
func NewPooledServer() *Server {
	srv := NewUnstartedServer(nil)
	srv.tenants = map[string]*Tenant{}
	p := srv.p
	p.file, p.scriptErr = "pooled mock model", errors.New("a pooled mock model plays no script of its own")
	close(p.ready)
	srv.Start()
	return srv
}

// AddTenant adds a scenario to a pooled server: the requests whose user
// messages carry marker are answered from sc (nil: from the script Play
// gives it later; they wait for it). A marker must be new, and neither
// contain another tenant's nor be contained in one.
func (s *Server) AddTenant(marker string, sc *Script) (*Tenant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case s.tenants == nil:
		return nil, errors.New("mockmodel: AddTenant: the server is not pooled (NewPooledServer)")
	case strings.TrimSpace(marker) == "":
		return nil, errors.New("mockmodel: AddTenant: an empty marker")
	}
	for m := range s.tenants {
		if strings.Contains(m, marker) || strings.Contains(marker, m) {
			return nil, fmt.Errorf("mockmodel: AddTenant: marker %q and the marker %q of another scenario would be told apart by neither", marker, m)
		}
	}
	t := &Tenant{Marker: marker, p: newPlayer(sc)}
	s.tenants[marker] = t
	return t, nil
}

// attribute finds the tenant a request is for: the one whose marker its
// user messages carry. None, or several, is a refusal naming what the
// request carried.
func (s *Server) attribute(req request) (*Tenant, *RequestError) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var found []string
	var users []string
	for _, m := range req.messages {
		if m.Role != llm.RoleUser {
			continue
		}
		text := m.Text()
		users = append(users, fmt.Sprintf("%q", textcut.Truncate(text, 200)))
		for marker := range s.tenants {
			if !slices.Contains(found, marker) && strings.Contains(text, marker) {
				found = append(found, marker)
			}
		}
	}
	if len(found) == 1 {
		return s.tenants[found[0]], nil
	}
	slices.Sort(found)
	why := "no scenario's marker"
	if len(found) > 1 {
		why = fmt.Sprintf("the markers of %d scenarios (%s)", len(found), strings.Join(found, ", "))
	}
	if len(users) == 0 {
		users = append(users, "none")
	}
	const quoted = 5
	if n := len(users); n > quoted {
		users = append(users[:quoted:quoted], fmt.Sprintf("and %d more", n-quoted))
	}
	return nil, &RequestError{Code: CodeUnattributed, Status: http.StatusBadRequest, Turn: -1,
		Message: fmt.Sprintf("%s: request %d on %s carries %s in its user messages, so no scenario's script answers it (its user messages: %s; its last message: %s)",
			s.p.label(), s.p.journal.Len()+1, req.path, why, strings.Join(users, ", "), describeLast(req.messages))}
}

// begin and end count a request the tenant serves, as Server.ServeHTTP
// counts the server's.
func (t *Tenant) begin() func() {
	t.mu.Lock()
	t.active++
	t.requests++
	t.last = time.Now()
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		t.active--
		t.last = time.Now()
		t.mu.Unlock()
	}
}

// Play gives a tenant added without a script its script.
func (t *Tenant) Play(sc *Script) error {
	if sc == nil {
		return errors.New("mockmodel: Play: nil script")
	}
	if !t.p.play(sc) {
		return fmt.Errorf("mockmodel: Play %s: the scenario %s plays %s already", sc.label(), t.Marker, t.p.label())
	}
	return nil
}

// Journal returns the requests attributed to the tenant.
func (t *Tenant) Journal() *Journal { return t.p.journal }

// Remaining returns the number of the tenant's turns not yet used.
func (t *Tenant) Remaining() int { return t.p.remaining() }

// Activity reports the tenant's traffic so far (Server.Activity's, for the
// requests attributed to it).
func (t *Tenant) Activity() Activity {
	t.mu.Lock()
	a := Activity{InFlight: t.active, Requests: t.requests, Last: t.last}
	t.mu.Unlock()
	a.Taken = t.p.taken()
	a.Failed = t.p.journal.Failed()
	return a
}

// SetHold is Server.SetHold for the requests attributed to the tenant.
func (t *Tenant) SetHold(h func(ctx context.Context, e JournalEntry)) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.hold = h
}
