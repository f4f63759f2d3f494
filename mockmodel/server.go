package mockmodel

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// Server is the HTTP face of a script, shaped like httptest.Server: it
// listens on 127.0.0.1 (an ephemeral port unless Listener is set before
// Start) and speaks the wire formats wires lists (Wires describes them),
// chosen by the request path.
type Server struct {
	// URL is the base URL, http://127.0.0.1:PORT, without a trailing slash:
	// URL + "/v1/chat/completions" is the chat endpoint. BaseURL() adds /v1
	// for OpenAI clients; Anthropic and Gemini clients take URL itself.
	URL string
	// Listener may be set on an unstarted server; Start listens on
	// 127.0.0.1:0 when it is nil.
	Listener net.Listener
	// Config may be changed on an unstarted server (timeouts, logging); its
	// Handler is set by Start.
	Config *http.Server

	p         *player
	mux       *http.ServeMux
	transport *http.Transport
	client    *http.Client
	baseCtx   context.Context
	cancel    context.CancelFunc

	mu       sync.Mutex
	started  bool
	closed   bool
	inflight sync.WaitGroup
	serveErr chan error
	// active, requests and last are the traffic Activity reports (under mu).
	active   int
	requests int
	last     time.Time
	// hold is SetHold's (under mu).
	hold func(ctx context.Context, e JournalEntry)
	// tenants are a pooled server's scenarios by marker (nil: the server
	// plays its own script); see NewPooledServer.
	tenants map[string]*Tenant
}

// SetHold has h called with each request the server takes a turn for,
// before it answers: the answer waits until h returns (nil: none). ctx
// ends when the client goes away. A runner uses it to act between a
// request and its answer (driver: the session/cancel of a case, once the
// model received the result of the write it waits for).
func (s *Server) SetHold(h func(ctx context.Context, e JournalEntry)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold = h
}

// Activity is a snapshot of a server's traffic: whether the agent is still
// talking to the model (see Server.Activity).
type Activity struct {
	// InFlight counts the requests being served now (a streamed answer is
	// in flight until its last byte is written).
	InFlight int
	// Requests counts the requests received so far; Last is when the
	// latest one arrived or was answered (zero before the first).
	Requests int
	Last     time.Time
	// Taken counts the script turns taken so far (side requests take none,
	// nor do refused ones past the end of the script).
	Taken int
	// Failed counts the requests answered with an error (a failed
	// expect, a request past the end of the script, a fault).
	Failed int
}

// Activity reports the server's traffic so far. It is safe to call while
// the server serves.
func (s *Server) Activity() Activity {
	s.mu.Lock()
	a := Activity{InFlight: s.active, Requests: s.requests, Last: s.last}
	s.mu.Unlock()
	a.Taken = s.p.taken()
	a.Failed = s.p.journal.Failed()
	return a
}

// maxBody bounds a request body.
const maxBody = 64 << 20

// NewServer starts a server playing s on 127.0.0.1:0. Like httptest it
// panics if it cannot listen. With a nil s the server listens at once and
// takes its script later (Play): a model request waits for it.
func NewServer(s *Script) *Server {
	srv := NewUnstartedServer(s)
	srv.Start()
	return srv
}

// NewUnstartedServer returns a server playing s that is not yet listening.
func NewUnstartedServer(s *Script) *Server {
	ctx, cancel := context.WithCancel(context.Background())
	srv := &Server{
		p:        newPlayer(s),
		mux:      http.NewServeMux(),
		baseCtx:  ctx,
		cancel:   cancel,
		Config:   &http.Server{ReadHeaderTimeout: 30 * time.Second},
		serveErr: make(chan error, 1),
	}
	srv.transport = &http.Transport{
		Proxy:               nil, // always talk to the loopback server directly
		DialContext:         (&net.Dialer{Timeout: 10 * time.Second}).DialContext,
		MaxIdleConns:        64,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     30 * time.Second,
	}
	srv.client = &http.Client{Transport: srv.transport}
	var served []string
	for _, w := range wires() {
		for _, r := range w.routes() {
			srv.mux.HandleFunc(r.path, srv.route(w, r))
			served = append(served, r.method+" "+r.path+r.suffix)
		}
	}
	list := strings.Join(served, ", ")
	srv.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodHead && r.URL.Path == "/" {
			// A client's reachability check (claude-agent-acp sends one
			// before its first request): answered as the real APIs'
			// hosts answer it, 200 and no body; no request of the
			// conversation, so not journaled.
			w.WriteHeader(http.StatusOK)
			return
		}
		body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
		e := &RequestError{Code: CodeNotFound, Status: http.StatusNotFound, Turn: -1,
			Message: fmt.Sprintf("%s: unknown endpoint %s %s (served: %s)", srv.p.label(), r.Method, r.URL.Path, list)}
		srv.p.refuse(request{path: r.URL.Path, raw: rawJSON(body)}, e)
		guessWire(r).writeError(w, e)
	})
	return srv
}

// Play gives a server made without a script (NewServer(nil)) its script;
// the requests waiting for one are then answered. It fails when the server
// has a script already.
func (s *Server) Play(sc *Script) error {
	if sc == nil {
		return errors.New("mockmodel: Play: nil script")
	}
	if !s.p.play(sc) {
		return fmt.Errorf("mockmodel: Play %s: the server plays %s already", sc.label(), s.p.label())
	}
	return nil
}

// route wraps a wire handler with the method check.
func (s *Server) route(wi wire, rt route) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != rt.method {
			body, _ := io.ReadAll(io.LimitReader(r.Body, maxBody))
			e := &RequestError{Code: CodeMethodNotAllow, Status: http.StatusMethodNotAllowed, Turn: -1,
				Message: fmt.Sprintf("%s: %s %s: method not allowed (want %s)", s.p.label(), r.Method, r.URL.Path, rt.method)}
			s.p.refuse(request{path: r.URL.Path, wire: wi.info().Name, raw: rawJSON(body)}, e)
			w.Header().Set("Allow", rt.method)
			wi.writeError(w, e)
			return
		}
		rt.handle(s, w, r)
	}
}

// ServeHTTP serves one request (the server's handler).
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		http.Error(w, "mock model server closed", http.StatusServiceUnavailable)
		return
	}
	s.inflight.Add(1)
	s.active++
	s.requests++
	s.last = time.Now()
	s.mu.Unlock()
	defer s.inflight.Done()
	defer func() {
		s.mu.Lock()
		s.active--
		s.last = time.Now()
		s.mu.Unlock()
	}()
	s.mux.ServeHTTP(w, r)
}

// Start starts serving. It panics if it cannot listen or was already
// started, like httptest.Server.Start.
func (s *Server) Start() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started {
		panic("mockmodel: Server already started")
	}
	if s.closed {
		panic("mockmodel: Server already closed")
	}
	if s.Listener == nil {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			panic(fmt.Sprintf("mockmodel: listen on 127.0.0.1:0: %v", err))
		}
		s.Listener = l
	}
	s.started = true
	s.URL = "http://" + s.Listener.Addr().String()
	s.Config.Handler = s
	s.Config.BaseContext = func(net.Listener) context.Context { return s.baseCtx }
	go func() {
		err := s.Config.Serve(s.Listener)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		s.serveErr <- err
	}()
}

// BaseURL is the base URL for OpenAI clients: URL + "/v1".
func (s *Server) BaseURL() string { return s.URL + "/v1" }

// Close stops the server: it cancels requests in flight (a hanging turn
// returns), closes every connection and waits for the handlers to finish.
// It is safe to call more than once.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	started := s.started
	s.mu.Unlock()
	s.cancel()
	if started {
		_ = s.Config.Close()
		<-s.serveErr
	} else if s.Listener != nil {
		_ = s.Listener.Close()
	}
	s.inflight.Wait()
	s.transport.CloseIdleConnections()
}

// Journal returns the server's request journal.
func (s *Server) Journal() *Journal { return s.p.journal }

// Remaining returns the number of turns not yet used.
func (s *Server) Remaining() int { return s.p.remaining() }

// Client returns an HTTP client for the server: no proxy, its own
// connection pool, idle connections closed by Close.
func (s *Server) Client() *http.Client { return s.client }

// turnCodec is what a wire supplies to serveTurn.
type turnCodec struct {
	wire wire
	// decode reads a body into the canonical request (stream, model,
	// system, messages, tools, errFrom).
	decode func(body []byte, r *http.Request) (request, error)
	// fits, if not nil, says why a turn cannot be said on this wire.
	fits func(*plan) error
	// answer writes the turn; index is the 1-based number of the request.
	answer func(w http.ResponseWriter, r *http.Request, pl *plan, req request, index int)
}

// serveTurn is the request cycle every wire shares: read the body, decode
// it, take the next turn (checking its expect), answer, and journal all of
// it; any refusal is answered in the wire's own error shape.
func (s *Server) serveTurn(w http.ResponseWriter, r *http.Request, c turnCodec) {
	name := c.wire.info().Name
	body, err := readBody(r)
	if err != nil && (errors.Is(err, io.ErrUnexpectedEOF) || r.Context().Err() != nil) {
		// The client went away before its request was whole (an agent
		// whose turn was cancelled aborts its model request): no request
		// reached the model, so none is journaled, and no one is left to
		// answer.
		return
	}
	if err != nil {
		e := &RequestError{Code: CodeMalformed, Status: http.StatusBadRequest, Turn: -1,
			Message: fmt.Sprintf("%s: POST %s: %v", s.p.label(), r.URL.Path, err)}
		s.p.refuse(request{path: r.URL.Path, wire: name}, e)
		c.wire.writeError(w, e)
		return
	}
	req, err := c.decode(body, r)
	req.path, req.wire, req.raw = r.URL.Path, name, rawJSON(body)
	if err != nil {
		e := &RequestError{Code: CodeMalformed, Status: http.StatusBadRequest, Turn: -1,
			Message: fmt.Sprintf("%s: POST %s: request %d: %v", s.p.label(), r.URL.Path, s.p.journal.Len()+1, err)}
		s.p.refuse(req, e)
		c.wire.writeError(w, e)
		return
	}
	p, t := s.p, (*Tenant)(nil)
	s.mu.Lock()
	pooled := s.tenants != nil
	s.mu.Unlock()
	if pooled {
		var rerr *RequestError
		if t, rerr = s.attribute(req); rerr != nil {
			s.p.refuse(req, rerr)
			c.wire.writeError(w, rerr)
			return
		}
		defer t.begin()()
		p = t.p
	}
	if !p.wait(r.Context()) {
		return // the client went away before the script was given (Play)
	}
	pl, je, rerr := p.take(req, c.fits)
	if rerr != nil {
		c.wire.writeError(w, rerr)
		return
	}
	hold := s.holdFor(t)
	if hold != nil {
		hold(r.Context(), je)
	}
	c.answer(w, r, pl, req, je.Index+1)
}

// holdFor is the hold of the requests of tenant t (nil: the server's own).
func (s *Server) holdFor(t *Tenant) func(ctx context.Context, e JournalEntry) {
	if t != nil {
		t.mu.Lock()
		defer t.mu.Unlock()
		return t.hold
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.hold
}

// readBody reads a request body, bounded by maxBody, into a buffer sized
// by the Content-Length when there is one (no regrowth garbage: a big
// body costs its size once).
func readBody(r *http.Request) ([]byte, error) {
	var buf bytes.Buffer
	if n := r.ContentLength; n > 0 && n <= maxBody {
		buf.Grow(int(n) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(io.LimitReader(r.Body, maxBody+1)); err != nil {
		return nil, fmt.Errorf("read body: %w", err)
	}
	if buf.Len() > maxBody {
		return nil, fmt.Errorf("body larger than %d bytes", maxBody)
	}
	return buf.Bytes(), nil
}

// writeJSON writes v as a JSON response with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
