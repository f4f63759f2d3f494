package driver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Agent is one agent process started from a Target and driven over ACP on
// stdio as the catalogue drives it (the same process handling, client-side
// request answers and wire log), for tools beside the catalogue: `todoharness
// snapshot run` replays the original implementation's scenarios with it.
type Agent struct {
	p    *proc
	c    *conn
	wire *wireLog
	cwd  string
	argv []string
	// inProcess: a Target.InProcess function, not a process.
	inProcess bool
	// offer is what the initialize step offers (DriveConfig.Offer; the
	// zero value: protocol version 1), version what the agent's answer
	// negotiated (0 before it).
	offer   Offer
	version int
}

// Launch expands the target's templates with v, writes its files, and
// starts it in v.Cwd (which must exist). When ctx ends the agent's process
// group is killed.
func (t Target) Launch(ctx context.Context, v Vars) (*Agent, error) {
	r, err := t.resolve(v)
	if err != nil {
		return nil, err
	}
	p, err := startProc(ctx, r, v.Cwd)
	if err != nil {
		return nil, err
	}
	w := newWireLog(time.Now())
	return &Agent{p: p, c: newConn(p, w, 0, v.Cwd), wire: w, cwd: v.Cwd, argv: r.argv, inProcess: r.inproc != nil}, nil
}

// Argv is the command line as started.
func (a *Agent) Argv() []string { return append([]string(nil), a.argv...) }

// Step sends the ACP request of one step (OpInitialize, OpNewSession or
// OpPrompt with text; sessionID for the prompt) exactly as the catalogue
// sends it, and waits for the answer: its result, or an error (an error
// answer is an *RPCError; ErrAgentExited when the process is gone). On a
// connection that negotiated protocol version 2 a prompt's answer only
// acknowledges it: Step then also waits for the idle state_update that
// ends its turn.
func (a *Agent) Step(ctx context.Context, op, text, sessionID string) (json.RawMessage, error) {
	switch op {
	case OpInitialize, OpNewSession, OpPrompt:
	default:
		return nil, fmt.Errorf("conformance: step %q: want %s, %s or %s", op, OpInitialize, OpNewSession, OpPrompt)
	}
	if op == OpPrompt && sessionID == "" {
		return nil, errors.New("conformance: prompt before newSession")
	}
	method, params := stepRequest(Step{Op: op, Text: text}, sessionID, a.cwd, a.offer, a.version)
	res, err := a.c.call(ctx, method, params)
	if err != nil {
		return res.Result, err
	}
	switch {
	case op == OpInitialize:
		a.version = a.offer.Negotiated(res.Result)
	case op == OpPrompt && a.version == ACPv2:
		err = a.awaitIdle(ctx, res.ReqSeq, sessionID)
	}
	return res.Result, err
}

// awaitIdle waits for the idle state_update of session sid after the
// request at wire position from: the end of a v2 prompt's turn. It fails
// when ctx ends or the agent's stdout closes first.
func (a *Agent) awaitIdle(ctx context.Context, from int, sid string) error {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	next := from + 1
	for {
		closed := waitFor(a.c.done, 0) // read before the scan: all its lines are on the log
		msgs := a.wire.since(next)
		for _, m := range msgs {
			if s, _, ok := IdleUpdate(m); ok && s == sid {
				return nil
			}
		}
		next += len(msgs)
		if closed {
			return fmt.Errorf("no idle state_update ended the turn of session %s: %w", sid, ErrAgentExited)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("waiting for the idle state_update that ends the turn of session %s: %w", sid, ctx.Err())
		case <-tick.C:
		}
	}
}

// Stdout returns every line the agent wrote to its stdout so far, in order,
// as written.
func (a *Agent) Stdout() [][]byte {
	var out [][]byte
	for _, m := range a.wire.snapshot() {
		if m.Dir == Received {
			out = append(out, []byte(m.Line))
		}
	}
	return out
}

// Stop ends the process as an editor does (close stdin, wait grace, then
// SIGTERM, then SIGKILL its process group) and returns how it ended and
// the tail of its stderr. Everything the agent wrote before it exited is in
// Stdout afterwards.
func (a *Agent) Stop(grace time.Duration) (how, stderr string) {
	how = a.p.shutdown(grace)
	waitFor(a.c.done, time.Second)
	return how + ", " + a.p.exitDescription(), a.p.stderr.String()
}
