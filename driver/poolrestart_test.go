package driver

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/todoharness/todoharness/mockmodel"
)

// storeAgent is an in-process ACP agent that keeps its sessions in a file
// of its working folder (a pooled process's: the folders a restart's
// fresh process is started in) and loads them from there; it counts its
// starts, and reports itself idle after each answer. With stays it does
// not exit when its stdin closes, only when it is ended.
func storeAgent(starts *atomic.Int32, stays bool) InProcessFunc {
	return func(ctx context.Context, pio ProcIO) int {
		starts.Add(1)
		store := filepath.Join(pio.Dir, "sessions")
		r := bufio.NewReader(pio.Stdin)
		written := 0
		answer := func(id json.RawMessage, result string) {
			n, _ := fmt.Fprintf(pio.Stdout, `{"jsonrpc":"2.0","id":%s,%s}`+"\n", id, result)
			written += n
			fmt.Fprintf(pio.IdleReport, "%d\n", written)
		}
		for {
			line, err := r.ReadBytes('\n')
			var req struct {
				ID     json.RawMessage `json:"id"`
				Method string          `json:"method"`
				Params struct {
					SessionID string `json:"sessionId"`
				} `json:"params"`
			}
			if json.Unmarshal(line, &req) == nil && len(req.ID) > 0 {
				saved, _ := os.ReadFile(store)
				ids := strings.Fields(string(saved))
				switch req.Method {
				case "initialize":
					answer(req.ID, `"result":{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}`)
				case "session/new":
					id := fmt.Sprintf("s%d", len(ids)+1)
					if err := os.WriteFile(store, append(saved, id+"\n"...), 0o644); err != nil {
						answer(req.ID, fmt.Sprintf(`"error":{"code":-32603,"message":%q}`, err.Error()))
						continue
					}
					answer(req.ID, fmt.Sprintf(`"result":{"sessionId":%q}`, id))
				case "session/load":
					if !slices.Contains(ids, req.Params.SessionID) {
						answer(req.ID, fmt.Sprintf(`"error":{"code":-32603,"message":"no session %s here"}`, req.Params.SessionID))
						continue
					}
					answer(req.ID, `"result":{}`)
				case "session/prompt":
					answer(req.ID, `"result":{"stopReason":"end_turn"}`)
				}
			}
			if err != nil || ctx.Err() != nil {
				if stays {
					<-ctx.Done()
				}
				return 0
			}
		}
	}
}

var (
	plainSteps   = []Step{{Op: OpInitialize}, {Op: OpNewSession}, {Op: OpPrompt, Text: "hi"}}
	restartSteps = []Step{{Op: OpInitialize}, {Op: OpNewSession}, {Op: OpPrompt, Text: "hi"}, {Op: OpRestart}, {Op: OpInitialize}, {Op: OpLoadSession}, {Op: OpPrompt, Text: "again"}}
)

// runLeased runs steps as a case leased l of pl's agent.
func runLeased(t *testing.T, pl *Pool, l *Lease, name string, steps []Step, w *ExitWatch) *CaseRecord {
	t.Helper()
	turns := []mockmodel.Turn{{Text: "ok"}, {Text: "ok"}}
	return RunCase(context.Background(), CaseConfig{Env: EnvConfig{Target: pl.cfg.Target, Name: name, DirPrefix: name, TempDir: pl.cfg.TempDir,
		Script: &mockmodel.Script{Name: name, Turns: turns}}, Steps: steps, Timeout: 60 * time.Second, Grace: pl.cfg.Grace, Settle: 2 * time.Second,
		Lease: l, Exits: w, ExitName: name})
}

// storePool is a pool of storeAgent (sessions a process, grace) and the
// count of its starts.
func storePool(t *testing.T, stays bool, sessions int, grace time.Duration) (*Pool, *atomic.Int32) {
	t.Helper()
	starts := new(atomic.Int32)
	pl := NewPool(PoolConfig{Target: Target{Name: "store", InProcess: storeAgent(starts, stays), PoolSessions: sessions}, TempDir: t.TempDir(), Grace: grace})
	t.Cleanup(pl.Close)
	return pl, starts
}

func leaseOf(t *testing.T, pl *Pool, exclusive bool) *Lease {
	t.Helper()
	get := pl.Lease
	if exclusive {
		get = pl.LeaseExclusive
	}
	l, err := get(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// A case that restarts its agent costs one process start in a pooled run,
// not two: its first part runs as a session of a pooled process it holds
// alone, its restart retires that process (its end observed as a
// restart's), a fresh process started in the retired one's folders loads
// the session, and then serves the next case in the retired one's place:
// the pool keeps its size.
func TestPooledRestartStartsOneProcess(t *testing.T) {
	t.Parallel()
	pl, starts := storePool(t, false, 1, 5*time.Second)
	w := NewExitWatch()

	a := runLeased(t, pl, leaseOf(t, pl, false), "a", plainSteps, w)
	if a.Aborted != "" || starts.Load() != 1 {
		t.Fatalf("the first case: aborted %q, %d starts (want 1)", a.Aborted, starts.Load())
	}
	b := runLeased(t, pl, leaseOf(t, pl, true), "b", restartSteps, w)
	if b.Aborted != "" || b.Stopped != "" {
		t.Fatalf("the restart case: aborted %q, stopped %q", b.Aborted, b.Stopped)
	}
	if got := starts.Load(); got != 2 {
		t.Errorf("the restart case started %d processes, want 1", got-1)
	}
	if len(b.Procs) != 2 {
		t.Fatalf("the restart case has %d processes, want 2", len(b.Procs))
	}
	first, loader := b.Procs[0], b.Procs[1]
	if first.Pooled != a.Procs[0].Pooled || !strings.Contains(first.Retired, "as its session 2, after 1 other session(s)") {
		t.Errorf("the first part ran in %q (retired: %q), want the first case's process %q, its second session", first.Pooled, first.Retired, a.Procs[0].Pooled)
	}
	if !strings.HasPrefix(first.Shutdown, "exited after stdin closed") || first.Exit != "exit status 0" || first.ExitedEarly {
		t.Errorf("the retired process: %q, %q (early %v), want it to exit after stdin closed, status 0", first.Shutdown, first.Exit, first.ExitedEarly)
	}
	if loader.Loader == "" || loader.Pooled == first.Pooled || loader.PoolStore != first.PoolStore || loader.PoolStore == "" {
		t.Errorf("the load's process: %q (loader %q, store %q), want a fresh one in the retired one's folders (%q)", loader.Pooled, loader.Loader, loader.PoolStore, first.PoolStore)
	}
	for _, st := range b.Steps {
		if st.Error != "" || st.Skipped != "" {
			t.Errorf("step %d (%s): error %q, skipped %q", st.Index+1, st.Op, st.Error, st.Skipped)
		}
		// The agent's idle reports reach the case through each process:
		// no settle waits out its window.
		if st.Settled != "" && !strings.HasPrefix(st.Settled, "the agent reported it had nothing more to send") {
			t.Errorf("step %d (%s): the settle ended: %s; want: on the agent's idle report", st.Index+1, st.Op, st.Settled)
		}
	}
	if first.PooledAlone || loader.PooledAlone {
		t.Error("the restart case says it ran alone: its first part was the second session of its process")
	}
	pl.mu.Lock()
	size := len(pl.all)
	pl.mu.Unlock()
	if size != 1 || pl.Processes() != 2 {
		t.Errorf("after the restart case the pool holds %d processes (started %d), want 1 (2)", size, pl.Processes())
	}
	c := runLeased(t, pl, leaseOf(t, pl, false), "c", plainSteps, w)
	if c.Aborted != "" || starts.Load() != 2 {
		t.Errorf("the next case: aborted %q, %d starts in all (want 2)", c.Aborted, starts.Load())
	}
	if len(c.Procs) != 1 || c.Procs[0].Pooled != loader.Pooled {
		t.Errorf("the next case ran in %q, want the restart's fresh process %q", c.Procs[0].Pooled, loader.Pooled)
	}
	if w.Learned() != "" {
		t.Errorf("the run learned %q from processes that exit", w.Learned())
	}
	// The pool's CPU counts both processes once each, the retired one
	// too (in process, what they cost is the runner's: not read).
	if cpu := pl.CPU(); cpu.Processes != 1 || cpu.Running != 1 {
		t.Errorf("before the pool closed: CPU %+v, want the retired process ended and the restart's running", cpu)
	}
	pl.Close()
	if cpu := pl.CPU(); cpu.Processes != 2 || cpu.Running != 0 || cpu.Ms != 0 || !strings.Contains(cpu.Unmeasured, "the agent runs in the runner's process") {
		t.Errorf("after the pool closed: CPU %+v, want 2 processes ended, not read: in the runner's process", cpu)
	}
}

// A restart case that was the first session of a fresh pooled process is
// alone in every process it ran in; a restart needs the process alone
// (LeaseExclusive), and while a case holds a process so no other case is
// leased it, even when processes serve several sessions at once.
func TestPooledRestartAloneAndExclusive(t *testing.T) {
	t.Parallel()
	pl, _ := storePool(t, false, 2, 5*time.Second)
	b := runLeased(t, pl, leaseOf(t, pl, true), "b", restartSteps, nil)
	if b.Aborted != "" || len(b.Procs) != 2 || !b.Procs[0].PooledAlone || !b.Procs[1].PooledAlone {
		t.Fatalf("the first case of the pool, restarted: aborted %q, %d processes, alone %v", b.Aborted, len(b.Procs), b.PooledAloneAll())
	}

	a := leaseOf(t, pl, false)
	e := leaseOf(t, pl, true)
	o := leaseOf(t, pl, false)
	if e.m == a.m || o.m == e.m || o.m != a.m {
		t.Errorf("exclusive lease in the process of a shared lease %v, a shared lease in the exclusive one's %v, the second shared lease beside the first %v (want false, false, true)",
			e.m == a.m, o.m == e.m, o.m == a.m)
	}
	a.Release()
	o.Release()
	e.Release()

	r := runLeased(t, pl, leaseOf(t, pl, false), "r", restartSteps, nil)
	if !strings.Contains(r.Aborted, "needs the process alone") {
		t.Errorf("a restart of a shared lease: aborted %q, want it refused", r.Aborted)
	}
}

// The retired process's end is observed and judged as a restart's: an
// agent that does not exit when its stdin closes waits the grace out, is
// signalled, and the run learns it (ExitWatch).
func TestPooledRestartExitWatched(t *testing.T) {
	t.Parallel()
	pl, _ := storePool(t, true, 1, 300*time.Millisecond)
	w := NewExitWatch()
	b := runLeased(t, pl, leaseOf(t, pl, true), "b", restartSteps, w)
	if b.Aborted != "" || len(b.Procs) != 2 {
		t.Fatalf("aborted %q, %d processes", b.Aborted, len(b.Procs))
	}
	if how := b.Procs[0].Shutdown; !strings.HasPrefix(how, "did not exit within 300ms of stdin closing") {
		t.Errorf("the retired process: %q, want the grace waited out", how)
	}
	if got := w.Learned(); !strings.Contains(got, "agent process 1 of case b") {
		t.Errorf("the run learned %q, want that agent process 1 of case b did not exit", got)
	}
}

// PooledAloneAll lists each process's PooledAlone.
func (r *CaseRecord) PooledAloneAll() []bool {
	var out []bool
	for _, p := range r.Procs {
		out = append(out, p.PooledAlone)
	}
	return out
}
