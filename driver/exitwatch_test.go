package driver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// The wait for an agent to exit on its own ends once the run has learned
// that the agent does not (a process elsewhere waited its whole grace
// out), or never begins after that; a process that exits on its own
// meanwhile did so; a nil watch waits the whole grace.
func TestExitWatchCutsTheWait(t *testing.T) {
	const grace = 3 * time.Second
	synctest.Test(t, func(t *testing.T) {
		w := NewExitWatch()
		exited := make(chan struct{})
		type got struct {
			ok    bool
			why   string
			early bool
			at    time.Duration
		}
		res := make(chan got, 1)
		start := time.Now()
		go func() {
			ok, why, early := w.awaitExit(exited, grace)
			res <- got{ok, why, early, time.Since(start)}
		}()
		time.Sleep(time.Second)
		w.learn("", grace) // a process whose end is judged nowhere teaches nothing
		w.learn("agent process 1 of case a", 0)
		synctest.Wait()
		if len(res) != 0 || w.Learned() != "" {
			t.Fatalf("learned %q from a process named nothing, or given no grace", w.Learned())
		}
		w.learn("agent process 1 of case a", grace)
		w.learn("agent process 1 of case b", grace)
		const want = "agent process 1 of case a did not exit within 3s of its stdin closing"
		if r := <-res; r.ok || r.why != want || r.early || r.at != time.Second {
			t.Errorf("the waiting shutdown: %+v, want it cut short at 1s by %q", r, want)
		}
		if ok, why, early := w.awaitExit(exited, grace); ok || why != want || !early {
			t.Errorf("a later shutdown: %v %q %v, want it signalled at once", ok, why, early)
		}
		close(exited)
		if ok, why, _ := w.awaitExit(exited, grace); !ok || why != "" {
			t.Errorf("a process that exited: %v %q", ok, why)
		}
		var none *ExitWatch
		t0 := time.Now()
		if ok, why, _ := none.awaitExit(make(chan struct{}), grace); ok || why != "" || time.Since(t0) != grace {
			t.Errorf("no watch: %v %q after %s, want the whole grace", ok, why, time.Since(t0))
		}
	})
}

// A pooled process is shut down at once when the pool closes once the run
// has learned that the agent does not exit when its stdin closes; it
// teaches nothing itself (its end is judged nowhere).
func TestPoolCloseUsesTheExitWatch(t *testing.T) {
	t.Parallel()
	const grace = 2 * time.Second
	// An agent that answers initialize and stays until it is ended.
	stays := func(ctx context.Context, pio ProcIO) int {
		sc := bufio.NewScanner(pio.Stdin)
		for sc.Scan() {
			var req struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(sc.Bytes(), &req) == nil && len(req.ID) > 0 {
				fmt.Fprintf(pio.Stdout, `{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1}}`+"\n", req.ID)
			}
		}
		<-ctx.Done()
		return 0
	}
	for _, learned := range []bool{false, true} {
		w := NewExitWatch()
		if learned {
			w.learn("agent process 1 of case a", grace)
		}
		pl := NewPool(PoolConfig{Target: Target{Name: "stays", InProcess: stays}, TempDir: t.TempDir(), Grace: grace, Exits: w})
		l, err := pl.Lease(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		l.Release()
		p := l.m.p
		pl.Close()
		how := p.killedHow()
		switch {
		case learned && !strings.HasPrefix(how, "was not given the 2s grace to exit on its own (agent process 1 of case a did not exit within 2s of its stdin closing)"):
			t.Errorf("learned: the pooled process %q, want it signalled at once", how)
		case !learned && (!strings.HasPrefix(how, "did not exit within 2s of stdin closing") || w.Learned() != ""):
			t.Errorf("nothing learned: the pooled process %q, and the run learned %q from it", how, w.Learned())
		}
	}
}
