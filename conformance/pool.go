package conformance

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/todoharness/todoharness/conformance/internal/slots"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/internal/termtext"
	"github.com/todoharness/todoharness/internal/textcut"
)

// Poolable reports whether the case may run as a session of a pooled
// agent process (Config.Pool): not the probe (its first model request
// tells the agent's tools), no restart and no session/load (they need the
// process to end, and a process of the case's own to load into), and no
// exit check of its own (ACP-EXIT-1 judges how its process ends).
func (c *Case) Poolable() bool {
	if c.Probe || slices.Contains(c.Checks, ACPExit1) {
		return false
	}
	for _, st := range c.Steps {
		if st.Op == driver.OpRestart || st.Op == driver.OpLoadSession {
			return false
		}
	}
	return true
}

// pooled reports whether the case ran as a session of a pooled process.
func (ev *Evidence) pooled() bool {
	return len(ev.Procs) > 0 && ev.Procs[0].Pooled != ""
}

// poolMode is RunInfo.Pool of the run being driven.
func (r *runner) poolMode() string {
	if r.pool != nil {
		return PoolOn
	}
	return ""
}

// PooledFailure is what a case failed as a session of a pooled process,
// before it was run again alone in a fresh process (Evidence.PooledFailure).
type PooledFailure struct {
	// Session is the pooled process it was a session of
	// (driver.ProcResult.Pooled).
	Session string `json:"session"`
	// Failed lists the checks it failed there, Failures their first
	// reasons ("ID: reason"), Aborted why it did not complete, if it did not.
	Failed   []string `json:"failed,omitempty"`
	Failures []string `json:"failures,omitempty"`
	Aborted  string   `json:"aborted,omitempty"`
	// Stderr is the last pooledStderrKeep bytes of what the pooled
	// process wrote on stderr while it started and while the case held it
	// (its ProcResult.Stderr there): the fresh run's evidence replaces
	// the pooled one's.
	Stderr string `json:"stderr,omitempty"`
}

// pooledStderrKeep bounds PooledFailure.Stderr.
const pooledStderrKeep = 16 << 10

// rerunAlone runs again, alone in a fresh process, each case that failed
// as a session of a pooled process (a MUST or SHOULD check failed on it,
// or it did not complete; an INFO check fails nothing): the fresh run is what is reported, with what failed in the
// pooled process kept in it (Evidence.PooledFailure). A check that fails
// alone too is reported as it is; one that passes alone is Flaky
// (judgeCheck): the failure came with the pool, from another session's
// traffic or by chance, and a pass is not what was seen.
func (r *runner) rerunAlone(ctx context.Context, evs []*Evidence) ([]*Evidence, error) {
	v, err := r.validator()
	if err != nil {
		return nil, err
	}
	again := map[int]*PooledFailure{}
	for i, ev := range evs {
		if pf := pooledFailure(ev, r.cfg.Checks, v); pf != nil {
			again[i] = pf
		}
	}
	if len(again) == 0 {
		return evs, nil
	}
	pool := r.pool
	r.pool = nil // alone: a process of its own
	defer func() { r.pool = pool }()
	dialect := func(context.Context) (driver.Dialect, map[string]bool, error) { return r.dialect, r.itemProps, nil }
	s := slots.New(r.cfg.Parallel)
	var wg sync.WaitGroup
	out := slices.Clone(evs)
	for i := range evs {
		pf := again[i]
		if pf == nil {
			continue
		}
		if s.Take(ctx, false) != nil {
			break // interrupted: the pooled evidence stands, and the run says so
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			slot := slots.NewCase(s)
			defer slot.Finish()
			old := evs[i]
			ev := r.runCase(ctx, old.Case, dialect, nil, slot)
			ev.Index, ev.Run, ev.Repeat, ev.Dialect = old.Index, old.Run, old.Repeat, old.Dialect
			if ev.Script == nil {
				ev.Script = old.Script
			}
			ev.PooledFailure = pf
			out[i] = ev
			r.rerunProgress(ev, pf)
		}()
	}
	wg.Wait()
	return out, nil
}

// pooledFailure is what a case that ran as a session of a pooled process
// failed there, if it is to run again alone: a MUST or SHOULD check of
// cat failed on it, or it did not complete (nil: it did not run pooled, it
// was interrupted, or it failed nothing but INFO checks, which fail
// nothing).
func pooledFailure(ev *Evidence, cat []Check, v *driver.SchemaValidator) *PooledFailure {
	if !ev.pooled() || ev.Interrupted != "" || ev.NotRun != "" {
		return nil
	}
	failed := slices.DeleteFunc(caseFailures(ev, cat, v), func(id string) bool {
		i := slices.IndexFunc(cat, func(c Check) bool { return c.ID == id })
		return i < 0 || cat[i].Level == INFO
	})
	if len(failed) == 0 && ev.Aborted == "" {
		return nil
	}
	pf := &PooledFailure{Session: ev.Procs[0].Pooled, Failed: failed, Aborted: ev.Aborted, Stderr: textcut.Suffix(ev.Procs[0].Stderr, pooledStderrKeep)}
	e := judgeable(ev, v)
	for _, c := range cat {
		if slices.Contains(failed, c.ID) {
			pf.Failures = append(pf.Failures, c.ID+": "+driver.OneLine(judgeCheck(e, c).Reason, 300))
		}
	}
	return pf
}

// rerunProgress writes the live line of a case run again alone.
func (r *runner) rerunProgress(ev *Evidence, pf *PooledFailure) {
	if r.cfg.Progress == nil {
		return
	}
	was := "FAIL " + strings.Join(pf.Failed, ", ")
	if pf.Aborted != "" {
		was = "ERROR " + driver.OneLine(pf.Aborted, 90)
	}
	now := r.caseStatus(ev)
	r.progressMu.Lock()
	defer r.progressMu.Unlock()
	// The reasons quote the agent: shown, never acted on by the terminal.
	fmt.Fprintf(r.cfg.Progress, "[alone] %s %6.2fs  pooled: %s; alone in a fresh process: %s\n", ev.Case.ID, ev.Duration.Seconds(),
		termtext.Visible(was), termtext.Visible(now))
}

// pooledFlaky is the verdict of check c on a case run again alone that
// passed there, when it had failed in the pooled process (nil: not so).
func (ev *Evidence) pooledFlaky(c Check, v verdict) *verdict {
	pf := ev.PooledFailure
	if pf == nil || v.Outcome != Pass || !slices.Contains(pf.Failed, c.ID) {
		return nil
	}
	reason := ""
	for _, f := range pf.Failures {
		if r, ok := strings.CutPrefix(f, c.ID+": "); ok {
			reason = r
		}
	}
	return &verdict{Outcome: Flaky, Reason: fmt.Sprintf("failed as %s (%s), passed alone in a fresh process: flaky, or one session saw another's", pf.Session, reason)}
}
