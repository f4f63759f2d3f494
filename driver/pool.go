package driver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/todoharness/todoharness/mockmodel"
)

// Pool is agent processes that serve many cases each: a case that needs no
// fresh process (no restart, no load, not the probe) runs as its own
// session, with its own session/new and working directory, in a pooled
// process, several processes at once. A process serves one case at a time,
// or up to Target.PoolSessions at once when the agent answers concurrent
// prompts of different sessions (then what it sends is routed to the case
// whose session it names).
//
// A case leases a process (Lease) and drives it as it drives a process of
// its own: its agent is an in-process stand-in (Lease.Target) that
// forwards what the case sends to the pooled process, with the ids of its
// requests made unique in the process, and forwards back what the process
// sends for the case's session. The process's initialize is sent once,
// when it starts: a case's initialize is answered with that answer (the
// process's, replayed; ProcResult.Pooled says so). The process's mock
// model is pooled (mockmodel.NewPooledServer): the case's first prompt
// carries the lease's Marker, and the model answers each request from the
// script of the case whose marker it carries (Lease.Model).
type Pool struct {
	cfg PoolConfig
	// ctx is the processes': cancelled by Close, which kills what is left.
	ctx    context.Context
	cancel context.CancelFunc

	mu      sync.Mutex
	all     []*member
	leases  int
	closed  bool
	started int
	// broken is why a process of the pool could not start or get its
	// initialize answered: every later Lease fails with it at once (the
	// cases run in processes of their own, where that is seen as it is),
	// rather than each waiting it out again.
	broken error
	// made counts the processes started (a member each), cpu what those
	// that ended cost (CPU).
	made int
	cpu  PoolCPU
}

// PoolCPU is what the processes of a pool cost in CPU over their lives
// (ProcCPU: each process's tree, start-up and shutdown included), for
// the CPU a pooled case costs its agent: their sum amortises each start
// over the sessions the process served.
type PoolCPU struct {
	// Processes is how many processes ended; Running how many had not
	// when it was read (their CPU is not in Ms: read it after Close).
	Processes, Running int
	// Ms is the CPU time of the processes that ended, in milliseconds.
	Ms int64
	// Unmeasured says why the CPU of a process that ended could not be
	// read (the first such reason; "" when every one was): then Ms is
	// not the pool's.
	Unmeasured string
}

// CPU is what the pool's processes cost in CPU (PoolCPU): after Close,
// all of them.
func (pl *Pool) CPU() PoolCPU {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	c := pl.cpu
	c.Running = pl.made - c.Processes
	return c
}

// PoolConfig is the agent a Pool runs and where.
type PoolConfig struct {
	Target Target
	// TempDir, KeepDirs and Model are EnvConfig's, for each process's
	// folders (its home and its process working directory).
	TempDir  string
	KeepDirs bool
	Model    string
	// Grace is the shutdown grace of each process when the pool closes.
	Grace time.Duration
	// Exits is what the pool's run has learned of how the agent exits
	// (CaseConfig.Exits): once it knows the agent does not exit when its
	// stdin closes, the pooled processes are signalled at once. They never
	// teach it (their end is judged nowhere).
	Exits *ExitWatch
	// Offer is what each process's initialize offers (CaseConfig.Offer:
	// the cases leased a process get its answer).
	Offer Offer
}

// NewPool returns a pool of processes of cfg.Target (none started yet).
func NewPool(cfg PoolConfig) *Pool {
	ctx, cancel := context.WithCancel(context.Background())
	return &Pool{cfg: cfg, ctx: ctx, cancel: cancel}
}

// member is one pooled process.
type member struct {
	pool *Pool
	idx  int
	env  *Env
	p    *proc
	// init is the process's answer to its initialize (the result, or
	// error, members of the response), replayed to every case.
	init map[string]json.RawMessage
	// startErr is what the process wrote on stderr until its initialize
	// was answered (at most startErrKeep bytes): every case it serves
	// gets it, ahead of what it writes while the case holds it.
	startErr string

	wmu sync.Mutex // one line at a time to the process's stdin

	// held counts the leases of the process not yet released, leased all
	// it was ever given (both guarded by the pool's mu): held is at most
	// the pool's sessions.
	held, leased int
	// exclusive: the lease that holds it (LeaseExclusive) holds it alone:
	// no other case is leased it until that one is released (guarded by
	// the pool's mu).
	exclusive bool
	endOnce   sync.Once
	cpuOnce   sync.Once // countCPU
	// from is the process this one took the place of (Lease.Restart; nil:
	// it was started for the pool).
	from *member
	// envMoved (guarded by the pool's mu): the process was retired at a case's restart and its
	// folders and model went to the fresh process that took its place
	// (Lease.Restart): ending it releases neither.
	envMoved bool

	mu sync.Mutex
	// attached are the cases whose stand-ins serve now (at most the pool's
	// sessions).
	attached map[*Lease]bool
	served   int // the cases it served (attached), this one included
	nextID   int
	pending  map[string]forwarded // the process's id of a forwarded request
	past     map[string]bool      // the sessions of the cases that were leased it
	dropped  []string             // what came for no attached case
	dead     error
	// drained counts the bytes of stdout routed (Lease.idle compares it
	// with the process's idle report).
	drained atomic.Int64
	done    chan struct{} // the reader reached EOF
}

// forwarded is a request forwarded to the process: the case's lease and
// id (nil lease: the member's own, answered on reply).
type forwarded struct {
	l      *Lease
	id     json.RawMessage
	method string
	reply  chan Envelope
}

// Lease is one case's session in a pooled process (Pool.Lease).
type Lease struct {
	// Marker is what the first prompt of each of the case's sessions
	// carries for the mock model to tell its requests
	// (mockmodel.Tenant.Marker).
	Marker string
	// Model is the case's share of the process's mock model; URL and
	// BaseURL are the model's addresses (the process's).
	Model        *mockmodel.Tenant
	URL, BaseURL string

	m        *member
	n        int // the lease's number in the pool (its marker's)
	released atomic.Bool
	// first: the process was started for this lease (its first), and,
	// after a restart, so was each one before it and the lease was its
	// only one (Restart); alone: it was the process's only lease until it
	// was released (Alone).
	first bool
	alone atomic.Bool
	// exclusive: no other case is leased the process while the lease
	// holds it (LeaseExclusive); retiring: Retire is ending the process
	// (its stand-in's end does not give it back to the pool).
	exclusive bool
	retiring  atomic.Bool
	// loaded says, after Restart, where the fresh process came from
	// (ProcResult.Loader).
	loaded string
	// stderr is the stand-in's stderr while the lease is attached (a tee
	// of the process's stderr).
	stderr io.Writer

	omu      sync.Mutex
	out      io.Writer // the stand-in's stdout
	outBytes int64
	sessions map[string]bool
	// errsAt is how many requests the pooled model could not attribute
	// when the case was leased the process.
	errsAt int
	// cpu is the session's CPU (SessionCPU: cpu.Nth 0 until it is
	// attached), cpu0 the process's CPU when it was attached (cpuErr: why
	// it was not read); guarded by omu.
	cpu    SessionCPU
	cpu0   time.Duration
	cpuErr string
	// cpuEnding: endCPU is reading the end; cpuDone: it has.
	cpuEnding, cpuDone bool
}

// Lease gives a case a pooled process: one with room for another session
// (the busiest: the processes that serve none are left to the cases that
// need one alone, LeaseExclusive), or a new one (started and initialized
// here, within ctx: give it the case's timeout).
// The case must Release it when it ends. Once a process could not start
// or initialize, every later Lease fails at once.
func (pl *Pool) Lease(ctx context.Context) (*Lease, error) { return pl.lease(ctx, false) }

// LeaseExclusive gives a case a pooled process that serves no other
// session, and is leased no other case until the case releases it: one
// that serves none now, or a new one. A case that restarts its agent
// (OpRestart) needs one: its session's first part runs there, and its
// restart retires the process (Retire) and starts a fresh one in its
// folders that loads the session and takes its place (Restart).
func (pl *Pool) LeaseExclusive(ctx context.Context) (*Lease, error) { return pl.lease(ctx, true) }

func (pl *Pool) lease(ctx context.Context, exclusive bool) (*Lease, error) {
	pl.mu.Lock()
	if pl.closed {
		pl.mu.Unlock()
		return nil, errors.New("conformance: the pool is closed")
	}
	if pl.broken != nil {
		pl.mu.Unlock()
		return nil, pl.broken
	}
	pl.leases++
	n := pl.leases
	var m *member
	for _, c := range pl.all {
		room := c.held < pl.sessions()
		if exclusive {
			room = c.held == 0
		}
		if room && !c.exclusive && !c.isDead() && (m == nil || c.held > m.held) {
			m = c
		}
	}
	if m != nil {
		m.held++
		m.leased++
		m.exclusive = exclusive
	}
	first := m == nil
	pl.mu.Unlock()
	if m == nil {
		var err error
		if m, err = pl.start(ctx, exclusive); err != nil {
			pl.mu.Lock()
			if pl.broken == nil {
				pl.broken = err
			}
			pl.mu.Unlock()
			return nil, err
		}
	}
	marker := fmt.Sprintf("[todoharness scenario %d]", n)
	t, err := m.env.Server.AddTenant(marker, nil)
	if err != nil {
		pl.put(m, nil)
		return nil, err
	}
	l := &Lease{Marker: marker, Model: t, URL: m.env.Server.URL, BaseURL: m.env.Server.BaseURL(), m: m, n: n, first: first, exclusive: exclusive,
		sessions: map[string]bool{}, errsAt: len(m.env.Server.Journal().Errors())}
	return l, nil
}

// sessions is how many cases a process serves at once
// (Target.PoolSessions, at least one).
func (pl *Pool) sessions() int { return max(1, pl.cfg.Target.PoolSessions) }

// isDead reports whether the process may serve no more cases.
func (m *member) isDead() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.dead != nil
}

// start starts a pooled process and sends its initialize: it is leased
// once (held) when it is in the pool's list.
func (pl *Pool) start(ctx context.Context, exclusive bool) (*member, error) {
	pl.mu.Lock()
	idx := pl.started
	pl.started++
	pl.mu.Unlock()
	env, err := NewEnv(EnvConfig{Target: pl.cfg.Target, Name: fmt.Sprintf("pool-%d", idx+1), DirPrefix: fmt.Sprintf("conform-pool-%d", idx+1),
		TempDir: pl.cfg.TempDir, KeepDirs: pl.cfg.KeepDirs, Model: pl.cfg.Model, Pooled: true})
	if err == nil {
		err = env.Resolve()
	}
	if err != nil {
		env.Close()
		return nil, fmt.Errorf("conformance: pooled process %d: %w", idx+1, err)
	}
	p, err := startProc(pl.ctx, env.target, env.Cwd)
	if err != nil {
		env.Close()
		return nil, fmt.Errorf("conformance: pooled process %d: %w", idx+1, err)
	}
	m := &member{pool: pl, idx: idx, env: env, p: p, pending: map[string]forwarded{}, past: map[string]bool{}, attached: map[*Lease]bool{},
		done: make(chan struct{})}
	pl.mu.Lock()
	pl.made++
	pl.mu.Unlock()
	go m.read()
	method, params := stepRequest(Step{Op: OpInitialize}, "", "", pl.cfg.Offer, ACPv1)
	env2, err := m.call(ctx, method, params)
	if err != nil {
		m.retire(err)
		m.end(0)
		return nil, fmt.Errorf("conformance: pooled process %d: initialize: %w", idx+1, err)
	}
	m.initAnswered(env2)
	pl.mu.Lock()
	m.held, m.leased, m.exclusive = 1, 1, exclusive
	pl.all = append(pl.all, m)
	closed := pl.closed
	pl.mu.Unlock()
	if closed {
		m.end(pl.cfg.Grace)
		return nil, errors.New("conformance: the pool is closed")
	}
	return m, nil
}

// initAnswered keeps the process's answer to its initialize (the
// result, or error, members), which every later case of it is given, and
// what it wrote on stderr until then.
func (m *member) initAnswered(e Envelope) {
	init := map[string]json.RawMessage{}
	if e.Error != nil {
		b, _ := json.Marshal(e.Error)
		init["error"] = b
	} else {
		init["result"] = e.Result
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.init == nil {
		m.init, m.startErr = init, Truncate(m.p.stderr.String(), startErrKeep)
	}
}

// initialized reports whether the process's initialize was answered.
func (m *member) initialized() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.init != nil
}

// put ends a lease of a member (l; nil when the lease was never made):
// it serves another case, or when it is dead (or the pool closed) and no
// case holds it any more, it is ended.
func (pl *Pool) put(m *member, l *Lease) {
	if !m.initialized() {
		// A fresh process of a case's restart that the case never
		// initialized: no later case may be given an answer it has not.
		m.retire(errors.New("the case that started it at its restart never had its initialize answered"))
	}
	dead := m.isDead()
	pl.mu.Lock()
	if l != nil && l.first && m.leased == 1 {
		l.alone.Store(true)
	}
	if l != nil && l.exclusive {
		m.exclusive = false
	}
	m.held--
	last := m.held == 0
	if last && dead {
		pl.all = slices.DeleteFunc(pl.all, func(c *member) bool { return c == m })
	}
	closed := pl.closed
	pl.mu.Unlock()
	if last && (dead || closed) {
		m.end(pl.cfg.Grace)
	}
}

// Close ends every pooled process (close stdin, the grace, signals) and
// releases their folders and models.
func (pl *Pool) Close() {
	pl.mu.Lock()
	pl.closed = true
	all := pl.all
	pl.mu.Unlock()
	var wg sync.WaitGroup
	for _, m := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m.end(pl.cfg.Grace)
		}()
	}
	wg.Wait()
	pl.cancel()
}

// Processes is how many processes the pool started.
func (pl *Pool) Processes() int {
	pl.mu.Lock()
	defer pl.mu.Unlock()
	return pl.started
}

// end shuts the process down and releases its environment (once).
func (m *member) end(grace time.Duration) {
	m.endOnce.Do(func() {
		m.mu.Lock()
		if m.dead == nil {
			m.dead = errors.New("the pool ended it")
		}
		m.mu.Unlock()
		m.p.shutdownWatched(grace, m.pool.cfg.Exits, "")
		waitFor(m.done, time.Second)
		m.pool.mu.Lock()
		moved := m.envMoved
		m.pool.mu.Unlock()
		if !moved {
			m.env.Close()
		}
		m.countCPU()
	})
}

// countCPU adds what the process cost in CPU over its life to the pool's
// (Pool.CPU), once it has ended: at its end, or at a case's restart that
// retired it (once either way).
func (m *member) countCPU() {
	m.cpuOnce.Do(func() {
		c := m.p.cpu()
		pl := m.pool
		pl.mu.Lock()
		defer pl.mu.Unlock()
		pl.cpu.Processes++
		pl.cpu.Ms += c.Ms
		if c.Unmeasured != "" && pl.cpu.Unmeasured == "" {
			pl.cpu.Unmeasured = fmt.Sprintf("pooled process %d: %s", m.idx+1, c.Unmeasured)
		}
	})
}

// retire marks the member dead (err says why) and kills its process: it
// is in a state no later case may inherit.
func (m *member) retire(err error) {
	m.mu.Lock()
	if m.dead == nil {
		m.dead = err
	}
	m.mu.Unlock()
	m.p.kill("killed (process group): " + err.Error())
}

// write writes one line to the process's stdin.
func (m *member) write(ctx context.Context, line []byte) error {
	m.wmu.Lock()
	defer m.wmu.Unlock()
	stop := context.AfterFunc(ctx, func() { _ = m.p.stdin.SetWriteDeadline(time.Now()) })
	defer stop()
	_, err := m.p.stdin.Write(append(line, '\n'))
	return err
}

// call sends the member's own request and waits for its answer.
func (m *member) call(ctx context.Context, method string, params any) (Envelope, error) {
	ch := make(chan Envelope, 1)
	m.mu.Lock()
	m.nextID++
	id := m.nextID
	m.pending[strconv.Itoa(id)] = forwarded{method: method, reply: ch}
	m.mu.Unlock()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
	if err != nil {
		return Envelope{}, err
	}
	if err := m.write(ctx, b); err != nil {
		return Envelope{}, err
	}
	select {
	case e := <-ch:
		return e, nil
	case <-m.done:
		return Envelope{}, fmt.Errorf("no answer to %s: %w (%s)", method, ErrAgentExited, m.p.exitDescription())
	case <-ctx.Done():
		return Envelope{}, fmt.Errorf("no answer to %s: %w", method, context.Cause(ctx))
	}
}

// read routes every line the process writes: a response to the request it
// answers (its case's id put back), anything else to the case leased the
// process when it names that case's session or none; what names a past
// case's session, or comes with no case leased, is dropped (and kept in
// dropped).
func (m *member) read() {
	defer close(m.done)
	in := &countingReader{r: m.p.stdout}
	r := bufio.NewReaderSize(in, 64<<10)
	for {
		line, _, err := readLine(r, MaxWireLine)
		if len(bytes.TrimSpace(line)) > 0 {
			m.route(line)
		}
		m.drained.Store(in.n - int64(r.Buffered()))
		if err != nil {
			break
		}
	}
	m.mu.Lock()
	if m.dead == nil {
		m.dead = fmt.Errorf("the pooled process closed its stdout (%s)", m.p.exitDescription())
	}
	attached := m.attachedLeases()
	m.mu.Unlock()
	for _, l := range attached {
		l.closeOut()
	}
}

// attachedLeases lists the attached cases (m.mu held), oldest first.
func (m *member) attachedLeases() []*Lease {
	out := make([]*Lease, 0, len(m.attached))
	for l := range m.attached {
		out = append(out, l)
	}
	slices.SortFunc(out, func(a, b *Lease) int { return a.n - b.n })
	return out
}

func (m *member) route(line []byte) {
	env, wm := Classify(line)
	m.mu.Lock()
	attached := m.attachedLeases()
	if wm.Kind == KindResponse {
		f, ok := m.pending[idKey(env.ID)]
		delete(m.pending, idKey(env.ID))
		live := ok && m.attached[f.l]
		m.mu.Unlock()
		switch {
		case !ok:
			// A response to nothing: the cases' conns say so.
			for _, l := range attached {
				l.send(line)
			}
			if len(attached) == 0 {
				m.drop(line, "a response to no request, with no case leased the process")
			}
		case f.l == nil:
			f.reply <- env
		default:
			if f.method == "initialize" {
				m.initAnswered(env)
			}
			if f.method == "session/new" {
				var ns struct {
					SessionID string `json:"sessionId"`
				}
				if json.Unmarshal(env.Result, &ns) == nil && ns.SessionID != "" {
					f.l.addSession(ns.SessionID)
				}
			}
			if live {
				f.l.send(withID(line, f.id))
			} else {
				m.drop(line, "the answer to a request of a case that has ended")
			}
		}
		return
	}
	sid := sessionOf(env.Params)
	past := sid != "" && m.past[sid]
	m.mu.Unlock()
	var owner *Lease
	if sid != "" {
		for _, l := range attached {
			if l.hasSession(sid) {
				owner = l
			}
		}
	}
	switch {
	case owner != nil:
		owner.send(line)
	case len(attached) == 0:
		m.drop(line, "no case was leased the process")
	case past:
		m.drop(line, "it names the session of a case that has ended")
	case len(attached) == 1:
		// One case: what names no session, or one not yet answered.
		attached[0].send(line)
	case sid != "":
		m.drop(line, "it names a session none of the cases the process serves at once has")
	case wm.Kind == KindRequest:
		// A request of no session, with several cases at once: one
		// answers it (the oldest).
		attached[0].send(line)
	default:
		for _, l := range attached {
			l.send(line)
		}
	}
}

// drop keeps a line the process wrote for no attached case.
func (m *member) drop(line []byte, why string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.dropped) < 100 {
		m.dropped = append(m.dropped, fmt.Sprintf("%s: %s", why, Truncate(string(line), 300)))
	}
}

// sessionOf is the sessionId of a message's params ("" when none).
func sessionOf(params json.RawMessage) string {
	var p struct {
		SessionID string `json:"sessionId"`
	}
	_ = json.Unmarshal(params, &p)
	return p.SessionID
}

// withID returns the JSON-RPC message line with its id set to id.
func withID(line []byte, id json.RawMessage) []byte {
	var msg map[string]json.RawMessage
	if json.Unmarshal(line, &msg) != nil {
		return line
	}
	msg["id"] = id
	b, err := json.Marshal(msg)
	if err != nil {
		return line
	}
	return b
}

func (l *Lease) addSession(id string) {
	l.omu.Lock()
	defer l.omu.Unlock()
	l.sessions[id] = true
}

func (l *Lease) hasSession(id string) bool {
	l.omu.Lock()
	defer l.omu.Unlock()
	return l.sessions[id]
}

// send writes a line to the stand-in's stdout (nothing when l is nil or
// its stdout closed).
func (l *Lease) send(line []byte) {
	if l == nil {
		return
	}
	l.omu.Lock()
	defer l.omu.Unlock()
	if l.out == nil {
		return
	}
	if n, err := l.out.Write(append(line, '\n')); err == nil {
		l.outBytes += int64(n)
	}
}

func (l *Lease) closeOut() {
	l.omu.Lock()
	defer l.omu.Unlock()
	if c, ok := l.out.(io.Closer); ok {
		_ = c.Close()
	}
	l.out = nil
}

// Target is the case's agent: an in-process stand-in for its session in
// the pooled process, with the pooled agent's files and templates (they
// are written into the case's folders too: an agent may read its
// configuration from a session's working directory).
func (l *Lease) Target(t Target) Target {
	// The pooled process has the (prepared) home; the stand-in needs none.
	t.Command, t.InProcess, t.IdleReport, t.HomeFrom = nil, l.serve, true, ""
	if t.Name == "" {
		t.Name = "pooled agent"
	}
	return t
}

// serve is the stand-in: it forwards the case's lines to the pooled
// process until the case closes its stdin (the lease then ends and the
// process serves another case) or ends it (the process is killed: a case
// that had to end its agent leaves it in no state to inherit).
func (l *Lease) serve(ctx context.Context, pio ProcIO) int {
	m := l.m
	m.mu.Lock()
	dead := m.dead
	if dead == nil {
		m.attached[l] = true
		m.served++
	}
	nth := m.served
	m.mu.Unlock()
	if dead != nil {
		fmt.Fprintf(pio.Stderr, "the pooled process is gone: %v\n", dead)
		return 1
	}
	l.startCPU(nth)
	l.omu.Lock()
	l.out = pio.Stdout
	l.omu.Unlock()
	l.teeStderr(pio.Stderr)
	stopIdle := l.forwardIdle(pio.IdleReport)
	defer stopIdle()
	lines := make(chan []byte)
	go func() {
		defer close(lines)
		r := bufio.NewReaderSize(pio.Stdin, 64<<10)
		for {
			line, _, err := readLine(r, MaxWireLine)
			if len(bytes.TrimSpace(line)) > 0 {
				select {
				case lines <- line:
				case <-ctx.Done():
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				l.detach()
				return 0
			}
			if err := l.forward(ctx, line); err != nil {
				fmt.Fprintf(pio.Stderr, "pooled process %d: %v\n", m.idx+1, err)
				l.detach()
				return 1
			}
		case <-m.done:
			waitFor(m.p.errDone, time.Second) // its last words, a crash's stack
			if l.retiring.Load() {
				// Retire ended it: the case's restart.
				l.detach()
				return 0
			}
			fmt.Fprintf(pio.Stderr, "\n[todoharness] pooled process %d ended: %s\n", m.idx+1, m.p.exitDescription())
			l.detach()
			return 1
		case <-ctx.Done():
			m.retire(fmt.Errorf("its case ended it: %w", context.Cause(ctx)))
			waitFor(m.p.errDone, time.Second)
			l.detach()
			return 1
		}
	}
}

// startErrKeep bounds the start-up stderr of a pooled process that each
// case it serves is given (member.startErr).
const startErrKeep = 4 << 10

// teeStderr gives the case (w: its stand-in's stderr, which its evidence
// keeps as its process's, bounded, and the reports show escaped as all of
// an agent's output) what the pooled process wrote on stderr while it
// started, then, until detach, everything it writes while the case holds
// it: the stderr of a shared process, attributed by time, which a note
// ahead of it says.
func (l *Lease) teeStderr(w io.Writer) {
	m := l.m
	at := ""
	if n := m.pool.sessions(); n > 1 {
		at = fmt.Sprintf(", and up to %d at once (what it writes while several hold it goes to each)", n)
	}
	m.mu.Lock()
	startErr, loading := m.startErr, m.init == nil
	m.mu.Unlock()
	var b strings.Builder
	switch {
	case loading:
		fmt.Fprintf(&b, "[todoharness] %s, shared: started fresh at this case's restart in the folders of the process that ran the case's first part (retired there); it joins the pool after this case, which holds it alone. ", l.Describe())
	case l.first:
		fmt.Fprintf(&b, "[todoharness] %s, shared: it was started for this case, its first, and may serve more after%s. ", l.Describe(), at)
	default:
		fmt.Fprintf(&b, "[todoharness] %s, shared: it served other cases before this one and may serve more after%s. ", l.Describe(), at)
	}
	l.stderr = w
	m.p.stderr.teeFrom(w, func(sofar string) string {
		if loading {
			// A fresh process of the case's restart (Restart): everything
			// it wrote is the case's so far, read as the tee is added (it
			// goes on writing meanwhile: its ready line).
			startErr = sofar
		}
		if startErr != "" {
			fmt.Fprintf(&b, "What it wrote on stderr while it started (before its first case):\n%s\n[todoharness] What it wrote while this case held it:\n", strings.TrimRight(startErr, "\n"))
		} else {
			fmt.Fprintf(&b, "What it wrote on stderr while this case held it:\n")
		}
		return b.String()
	})
}

func (m *member) pid() int {
	if m.p.cmd != nil && m.p.cmd.Process != nil {
		return m.p.cmd.Process.Pid
	}
	return 0
}

// forward sends one line of the case to the process: a request with an id
// of the process's own (its answer gets the case's back), an initialize
// answered with the process's answer.
func (l *Lease) forward(ctx context.Context, line []byte) error {
	m := l.m
	env, wm := Classify(line)
	if wm.Kind != KindRequest {
		return m.write(ctx, line)
	}
	m.mu.Lock()
	init := m.init
	m.mu.Unlock()
	if env.Method == "initialize" && init != nil {
		resp := map[string]json.RawMessage{"jsonrpc": json.RawMessage(`"2.0"`), "id": env.ID}
		for k, v := range init {
			resp[k] = v
		}
		b, err := json.Marshal(resp)
		if err != nil {
			return err
		}
		l.send(b)
		return nil
	}
	if sid := sessionOf(env.Params); sid != "" {
		l.addSession(sid)
	}
	m.mu.Lock()
	m.nextID++
	id := strconv.Itoa(m.nextID)
	m.pending[id] = forwarded{l: l, id: env.ID, method: env.Method}
	m.mu.Unlock()
	return m.write(ctx, withID(line, json.RawMessage(id)))
}

// detach ends the case's hold on the process: its sessions are past (what
// the process sends for them later is dropped), and the process goes back
// to the pool.
func (l *Lease) detach() {
	m := l.m
	l.omu.Lock()
	l.out = nil
	sessions := l.sessions
	l.omu.Unlock()
	l.endCPU()
	m.mu.Lock()
	if m.attached[l] {
		delete(m.attached, l)
		m.p.stderr.removeTee(l.stderr) // before the process can serve another case
	}
	for s := range sessions {
		m.past[s] = true
	}
	m.mu.Unlock()
	if !l.retiring.Load() {
		l.Release()
	}
}

// startCPU reads the process's CPU as the case is attached, its nth
// session: when the process serves one session at a time, a process of
// its own.
func (l *Lease) startCPU(nth int) {
	why, cpu0 := "", time.Duration(0)
	switch pid := l.m.pid(); {
	case pid <= 0:
		why = "the agent runs in the runner's process: its CPU is the runner's"
	case l.m.pool.sessions() > 1:
		why = fmt.Sprintf("the process serves up to %d sessions at once: what one of them costs is not told apart", l.m.pool.sessions())
	default:
		var err error
		if cpu0, err = treeCPU(pid); err != nil {
			why = err.Error()
		}
	}
	l.omu.Lock()
	defer l.omu.Unlock()
	l.cpu.Nth, l.cpu0, l.cpuErr = nth, cpu0, why
}

// endCPU reads the process's CPU as the case ends and keeps what the
// session cost (once; nothing when it was never attached).
func (l *Lease) endCPU() {
	l.omu.Lock()
	if l.cpu.Nth == 0 || l.cpuEnding {
		l.omu.Unlock()
		return
	}
	l.cpuEnding = true
	why, cpu0 := l.cpuErr, l.cpu0
	l.omu.Unlock()
	var ms int64
	if why == "" {
		d, err := treeCPU(l.m.pid())
		switch {
		case err != nil:
			why = "the process could not be read at the session's end: " + err.Error()
		case l.m.isDead():
			why = "the process ended during the session"
		case d < cpu0:
			why = "the process's CPU time went down (a descendant ended unwaited for)"
		default:
			ms = (d - cpu0).Milliseconds()
		}
	}
	l.omu.Lock()
	defer l.omu.Unlock()
	l.cpu.Ms, l.cpu.Unmeasured, l.cpuDone = ms, why, true
}

// SessionCPU is what the case's session cost its pooled process in CPU
// (ProcResult.SessionCPU): nil when the case was never attached.
func (l *Lease) SessionCPU() *SessionCPU {
	l.omu.Lock()
	defer l.omu.Unlock()
	if l.cpu.Nth == 0 {
		return nil
	}
	c := l.cpu
	if !l.cpuDone {
		c.Unmeasured = "the session had not ended when the case did"
	}
	return &c
}

// Release gives the process back to the pool (once; detach does it when
// the case's agent ends).
func (l *Lease) Release() {
	if l.released.Swap(true) {
		return
	}
	l.m.pool.put(l.m, l)
}

// Alone reports whether the case ran alone in a fresh process, once it
// released the lease: the process was started for it, and no other case
// was leased it before the case released it (with Target.PoolSessions
// above one, none beside it either). Its process served other cases only
// after it ended: a failure of the case is its own, not the pool's
// (ProcResult.PooledAlone).
func (l *Lease) Alone() bool { return l.alone.Load() }

// Unattributed returns the pooled model's refusals of requests it could
// not attribute to a case that arrived since the case was leased the
// process.
func (l *Lease) Unattributed() []string {
	var out []string
	errs := l.m.env.Server.Journal().Errors()
	for _, e := range errs[min(l.errsAt, len(errs)):] {
		out = append(out, fmt.Sprintf("pooled model request %d: %s", e.Index+1, e.Error))
	}
	return out
}

// Describe names the process the lease was a session of, for
// ProcResult.Pooled.
// It names the process's working folder too (made with a random suffix):
// the name tells pooled processes apart across the runs whose evidence is
// judged together (shards merged), where numbers and pids repeat.
func (l *Lease) Describe() string {
	dir := filepath.Base(l.m.env.Cwd)
	if pid := l.m.pid(); pid > 0 {
		return fmt.Sprintf("a session of pooled agent process %d (pid %d, %s)", l.m.idx+1, pid, dir)
	}
	return fmt.Sprintf("a session of pooled agent process %d (in process, %s)", l.m.idx+1, dir)
}

// forwardIdle reports the stand-in idle (pio.IdleReport) each time the
// pooled process reports it is, once every line it wrote was routed: the
// case's settle then ends as it does with a process of its own.
func (l *Lease) forwardIdle(w io.Writer) (stop func()) {
	if w == nil {
		return func() {}
	}
	m := l.m // the lease's process now: a restart's is another's (Restart)
	done := make(chan struct{})
	go func() {
		tick := time.NewTicker(2 * time.Millisecond)
		defer tick.Stop()
		last := int64(-1)
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			at := m.p.idleAt.Load()
			if at < 0 || at == last || at != m.drained.Load() {
				continue
			}
			last = at
			l.omu.Lock()
			n := l.outBytes
			l.omu.Unlock()
			fmt.Fprintf(w, "%d\n", n)
		}
	}()
	return func() { close(done) }
}

// Retired is how the process of an exclusive lease ended at its case's
// restart (Lease.Retire): ProcResult's fields, and Note, its Retired.
type Retired struct {
	Shutdown, GraceCut, Exit string
	ExitedEarly              bool
	Killed                   []string
	Note                     string
}

// Retire ends the process of an exclusive lease (LeaseExclusive) at its
// case's restart, as a restart ends a process of the case's own: its
// stdin closed, the grace to exit on its own (w: what the run learned of
// how the agent exits, nil: none; who names the process when it waits the
// grace out, and teaches w), then signals. What the process writes until
// it exits still goes to the case, whose stand-in ends with it; the case
// then starts a fresh process in its folders (Restart). A lease that is
// not exclusive, or whose process ended already, is not retired: the
// error says why.
func (l *Lease) Retire(grace time.Duration, w *ExitWatch, who string) (Retired, error) {
	m := l.m
	switch {
	case !l.exclusive:
		return Retired{}, errors.New("a restart of a session of a pooled process needs the process alone (Pool.LeaseExclusive)")
	case l.released.Load():
		return Retired{}, fmt.Errorf("pooled process %d ended before the case's restart: %s", m.idx+1, m.p.exitDescription())
	}
	l.endCPU() // the session's first part, while the process lives
	l.retiring.Store(true)
	m.mu.Lock()
	nth := m.served
	if m.dead == nil {
		m.dead = errors.New("a case's restart retired it")
	}
	m.mu.Unlock()
	early := m.p.hasExited()
	how, cut := m.p.shutdownWatched(grace, w, who)
	waitFor(m.done, time.Second)
	m.countCPU()
	r := Retired{Shutdown: how, GraceCut: cut, Exit: m.p.exitDescription(), ExitedEarly: early, Killed: m.p.killedDescendants()}
	r.Note = fmt.Sprintf("the case held pooled agent process %d alone (no other session in it while the case ran), as its session %d, after %d other session(s); "+
		"at the case's restart it was retired: its stdin closed, and how it ended is judged as a restart's (ACP-EXIT-1)", m.idx+1, nth, nth-1)
	return r, nil
}

// Restart starts, after Retire, a fresh process in the retired one's
// folders (its home and working folder, where the case's session was
// saved, with the sessions of the cases it served before; its model),
// which the lease holds alone: the case's stand-in forwards to it, its
// initialize too (its answer is the one every later case of the process
// is given), and once the case releases the lease the process serves
// other cases in the retired one's place: the pool keeps its size. The
// process is started within the pool's context: it outlives the case.
func (l *Lease) Restart() error {
	old, pl := l.m, l.m.pool
	if !l.retiring.Load() {
		return errors.New("a pooled process is restarted only after its case retired it (Lease.Retire)")
	}
	pl.mu.Lock()
	idx := pl.started
	pl.started++
	pl.mu.Unlock()
	p, err := startProc(pl.ctx, old.env.target, old.env.Cwd)
	if err != nil {
		return fmt.Errorf("pooled process %d, started in the folders of pooled process %d at the case's restart: %w", idx+1, old.idx+1, err)
	}
	m := &member{pool: pl, idx: idx, env: old.env, p: p, from: old, pending: map[string]forwarded{}, past: map[string]bool{}, attached: map[*Lease]bool{},
		done: make(chan struct{})}
	pl.mu.Lock()
	pl.made++
	pl.mu.Unlock()
	l.omu.Lock()
	mine := maps.Clone(l.sessions)
	l.omu.Unlock()
	old.mu.Lock()
	for s := range old.past {
		if !mine[s] {
			m.past[s] = true
		}
	}
	old.mu.Unlock()
	go m.read()
	pl.mu.Lock()
	old.envMoved = true
	m.held, m.leased, m.exclusive = 1, 1, true
	if i := slices.Index(pl.all, old); i >= 0 {
		pl.all[i] = m
	} else {
		pl.all = append(pl.all, m)
	}
	// Alone (once released): the retired process was started for the
	// case and served no other, and so is this one.
	l.first = l.first && old.leased == 1
	pl.mu.Unlock()
	l.omu.Lock()
	// The next stand-in's: its stdout's bytes (forwardIdle), its CPU.
	l.outBytes = 0
	l.cpu, l.cpu0, l.cpuErr, l.cpuEnding, l.cpuDone = SessionCPU{}, 0, "", false, false
	l.omu.Unlock()
	l.m = m
	l.loaded = fmt.Sprintf("a fresh process started at the case's restart in the folders of pooled agent process %d (retired there; they hold the sessions of every case it served), "+
		"which the case held alone, its first session; after the case it joined the pool in that process's place", old.idx+1)
	l.retiring.Store(false)
	return nil
}

// Loader says where the process of a lease restarted (Restart) came
// from ("" when it was not).
func (l *Lease) Loader() string { return l.loaded }

// Store names the folders of the lease's process (its working folder's
// name): the processes of a restart (the one retired and the one started
// in its folders) share them (ProcResult.PoolStore).
func (l *Lease) Store() string { return filepath.Base(l.m.env.Cwd) }
