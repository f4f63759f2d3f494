package driver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"
)

// initAnswering is an in-process agent that answers every request with an
// empty result (the pool sends it one: its initialize).
func initAnswering(ctx context.Context, pio ProcIO) int {
	r := bufio.NewReader(pio.Stdin)
	for {
		line, err := r.ReadBytes('\n')
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		if json.Unmarshal(line, &req) == nil && len(req.ID) > 0 {
			fmt.Fprintf(pio.Stdout, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1}}`+"\n", req.ID)
		}
		if err != nil || ctx.Err() != nil {
			return 0
		}
	}
}

// A lease ran alone in a fresh process (Lease.Alone) only when the
// process was started for it and no other case was leased it before it
// was released: the first of a process a case at a time is; the next case
// of that process is not; with two sessions a process, the first is not
// when a second was leased the process while it held it.
func TestLeaseAloneInAFreshProcess(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	lease := func(pl *Pool) *Lease {
		t.Helper()
		l, err := pl.Lease(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	pool := func(sessions int) *Pool {
		pl := NewPool(PoolConfig{Target: Target{Name: "init only", InProcess: initAnswering, PoolSessions: sessions}, TempDir: t.TempDir(), Grace: time.Second})
		t.Cleanup(pl.Close)
		return pl
	}

	one := pool(1)
	a := lease(one)
	if a.Alone() {
		t.Error("a lease not yet released says it ran alone")
	}
	a.Release()
	b := lease(one)
	b.Release()
	if !a.Alone() || b.Alone() || b.m != a.m {
		t.Errorf("one session a process: the first lease alone %v (want true), the second, of the same process (%v), %v (want false)", a.Alone(), b.m == a.m, b.Alone())
	}

	two := pool(2)
	a = lease(two)
	b = lease(two) // beside a, in the process started for a
	b.Release()
	a.Release()
	if a.Alone() || b.Alone() || b.m != a.m {
		t.Errorf("two sessions at once in a process (the same: %v): alone %v and %v, want neither", b.m == a.m, a.Alone(), b.Alone())
	}
	if got := two.Processes(); got != 1 {
		t.Errorf("two sessions at once started %d processes, want 1", got)
	}
}
