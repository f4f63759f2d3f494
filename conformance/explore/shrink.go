package explore

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/mockmodel"
)

// runCases runs cases against the agent under test and returns, by case
// ID, the checks each fails that fail a run (a MUST check; a SHOULD check
// under --strict; the baseline's expected failures left out), and the
// report.
type runCases func(ctx context.Context, cases []*conformance.Case) (map[string][]string, *conformance.Report, error)

// shrinker reduces a failing scenario while the same check keeps failing
// the same way (with the same signature).
type shrinker struct {
	oracle *Oracle
	cat    []conformance.Check
	run    runCases
	// batch is how many candidates one run tries at once; the first
	// (in a fixed order, coarse before fine) that still fails is kept.
	batch int
	// maxRuns bounds the runs of one shrink; deadline, when set, its time:
	// no run starts after it.
	maxRuns  int
	deadline time.Time
	now      func() time.Time
	// progress and label show the shrink on a terminal.
	progress *progress
	label    string
	// memo, when set, holds the judged runs of the cases run so far by
	// their content: a candidate or a shrunk case that another failure's
	// shrink or confirmation ran already is not run again (nil: every
	// case is run). failure names the failure shrunk ("check signature"),
	// to say whose runs another reuses.
	memo    *runMemo
	failure string
}

// shrunk is a shrink's outcome: the smallest failing case found, what
// the check said on its run, and how many runs it took (shared of them
// reused judged runs already made, by this shrink or an earlier one:
// none of their candidates was run again).
type shrunk struct {
	c         *conformance.Case
	reason    string
	runs      int
	shared    int
	outOfTime bool // it stopped at its deadline
}

// shrink reduces c (which fails check with signature sig) step by step:
// fewer ACP steps, fewer turns, fewer calls, fewer items, shorter items,
// while check fails as it did: with the same signature (a candidate that
// fails it only because the agent refused a step the check needed, a
// load of a session the cut left without a prompt, is OpRefused: another
// failure). Every candidate is marked by the oracle again and must break
// no rule c does not (so a TW-VALID failure keeps naming its rule) and
// stay a valid case.
func (s shrinker) shrink(ctx context.Context, c *conformance.Case, check, sig string) (shrunk, error) {
	cur := copyCase(c)
	rules := s.oracle.Mark(cur, s.cat)
	out := shrunk{c: cur}
	for out.runs < s.maxRuns && ctx.Err() == nil && !out.outOfTime {
		var cands []*conformance.Case
		for _, cand := range candidates(cur) {
			got := s.oracle.Mark(cand, s.cat)
			if !subset(got, rules) || cand.Validate(s.cat) != nil || !historySafe(cand) {
				continue
			}
			cands = append(cands, cand)
		}
		found := false
		for lo := 0; lo < len(cands) && !found && out.runs < s.maxRuns; lo += s.batch {
			if out.outOfTime = !s.deadline.IsZero() && !s.now().Before(s.deadline); out.outOfTime {
				break
			}
			if s.progress != nil {
				s.progress.shrinking(s.label, out.runs+1, len(cur.Steps), len(cur.Script), s.deadline)
			}
			chunk := cands[lo:min(lo+s.batch, len(cands))]
			for k, cand := range chunk {
				cand.ID = fmt.Sprintf("shrink-%d-%d", out.runs, k)
			}
			runs := make([][]*conformance.Case, len(chunk))
			for k, cand := range chunk {
				runs[k] = []*conformance.Case{cand}
			}
			got, err := s.runShared(ctx, "shrink", runs)
			out.runs++
			if err != nil {
				return out, err
			}
			if !slices.ContainsFunc(got, func(g sharedRuns) bool { return !g.reused }) {
				out.shared++
			}
			for k, cand := range chunk {
				if o := got[k].outs[0]; o.fails(check, sig, cand) {
					cur, found = cand, true
					out.c, out.reason = cand, o.reasons[check]
					break
				}
			}
		}
		if !found {
			break
		}
	}
	out.c = copyCase(out.c)
	return out, nil
}

// confirm runs c n times at once and counts the runs that fail check
// with signature sig. When another failure's confirmation ran the same
// case n times already, its runs are judged instead, and sharedWith names
// that failure ("" when this one ran them).
func (s shrinker) confirm(ctx context.Context, c *conformance.Case, check, sig string, n int) (runs, failed int, sharedWith string, err error) {
	cs := make([]*conformance.Case, n)
	for i := range cs {
		cs[i] = copyCase(c)
		cs[i].ID = fmt.Sprintf("confirm-%d", i)
	}
	got, err := s.runShared(ctx, fmt.Sprintf("confirm %d", n), [][]*conformance.Case{cs})
	if err != nil {
		return 0, 0, "", err
	}
	for _, o := range got[0].outs {
		if o.fails(check, sig, c) {
			failed++
		}
	}
	if got[0].reused {
		sharedWith = got[0].owner
	}
	return n, failed, sharedWith, nil
}

// runMemo is what the cases run by an exploration's shrinks and
// confirmations gave, by purpose and content (caseKey): each is run once
// per purpose, and a run under way is waited for, not made twice.
type runMemo struct {
	mu sync.Mutex
	m  map[string]*memoEntry
}

// memoEntry is one key's runs; done is closed once outs (or err) is set.
type memoEntry struct {
	done  chan struct{}
	owner string // the failure whose shrink or confirmation ran them
	outs  []judged
	err   error
}

// judged is what one run of a case gave: the checks it failed that fail a
// run (failuresByCase) and what each failed check said.
type judged struct {
	failed  []string
	reasons map[string]string
}

// fails reports whether the run failed check with signature sig on c.
func (j judged) fails(check, sig string, c *conformance.Case) bool {
	return slices.Contains(j.failed, check) && signature(c, j.reasons[check]) == sig
}

// sharedRuns is the runs of one group of runShared: reused when another
// failure's shrink or confirmation (owner) made them, not this one.
type sharedRuns struct {
	outs   []judged
	owner  string
	reused bool
}

// runShared runs each group of cases (the runs of one case, their IDs
// set) unless a group of the same purpose and content ran already or is
// running: then its runs are waited for and reused. The groups not run
// before run together, in one run.
func (s shrinker) runShared(ctx context.Context, purpose string, groups [][]*conformance.Case) ([]sharedRuns, error) {
	entries, keys := make([]*memoEntry, len(groups)), make([]string, len(groups))
	var mine []int
	if s.memo != nil {
		s.memo.mu.Lock()
	}
	for g, cs := range groups {
		if s.memo != nil {
			keys[g] = purpose + "\x00" + caseKey(cs[0])
			if e := s.memo.m[keys[g]]; e != nil {
				entries[g] = e
				continue
			}
		}
		entries[g] = &memoEntry{done: make(chan struct{}), owner: s.failure}
		if s.memo != nil {
			s.memo.m[keys[g]] = entries[g]
		}
		mine = append(mine, g)
	}
	if s.memo != nil {
		s.memo.mu.Unlock()
	}
	if len(mine) > 0 {
		var run []*conformance.Case
		for _, g := range mine {
			run = append(run, groups[g]...)
		}
		fails, rep, err := s.run(ctx, run)
		reasons := map[string]string{}
		if err == nil && rep != nil {
			reasons = reasonsByCase(rep)
		}
		for _, g := range mine {
			e := entries[g]
			if e.err = err; err != nil && s.memo != nil {
				// Not kept: a later shrink runs the case again.
				s.memo.mu.Lock()
				delete(s.memo.m, keys[g])
				s.memo.mu.Unlock()
			}
			for _, c := range groups[g] {
				j := judged{failed: fails[c.ID], reasons: map[string]string{}}
				for _, id := range j.failed {
					j.reasons[id] = reasons[c.ID+"\x00"+id]
				}
				e.outs = append(e.outs, j)
			}
			close(e.done)
		}
	}
	out := make([]sharedRuns, len(groups))
	for g, e := range entries {
		select {
		case <-e.done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		if e.err != nil {
			return nil, e.err
		}
		out[g] = sharedRuns{outs: e.outs, owner: e.owner, reused: !slices.Contains(mine, g)}
	}
	return out, nil
}

// caseKey is c's content, what a run of it depends on: its checks, steps
// and script (not its ID, title or source), hashed.
func caseKey(c *conformance.Case) string {
	d := *c
	d.ID, d.Title, d.Source = "", "", ""
	b, err := json.Marshal(&d)
	if err != nil {
		// A script that does not marshal is not sent either: never shared.
		return fmt.Sprintf("unmarshalable %p", c)
	}
	sum := sha256.Sum256(b)
	return string(sum[:])
}

func subset(a, b []string) bool {
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// prompt is where one prompt step's turns are in the script.
type promptAt struct{ step, first, end int } // turns [first, end)

func promptsOf(c *conformance.Case) []promptAt {
	var out []promptAt
	t := 0
	for i, st := range c.Steps {
		if st.Op != driver.OpPrompt {
			continue
		}
		p := promptAt{step: i, first: t}
		for t < len(c.Script) && len(c.Script[t].ToolCalls) > 0 {
			t++
		}
		t++ // the turn that ends the prompt
		p.end = min(t, len(c.Script))
		out = append(out, p)
	}
	return out
}

// candidates are the one-change reductions of c, coarse first.
func candidates(c *conformance.Case) []*conformance.Case {
	ps := promptsOf(c)
	out := stepCuts(c, ps)
	out = append(out, scriptCuts(c, ps)...)
	out = append(out, itemCuts(c)...)
	return append(out, contentCuts(c)...)
}

// stepCuts are c without everything from a step on (a load and what
// follows it, a second session), while a prompt stays before it.
func stepCuts(c *conformance.Case, ps []promptAt) []*conformance.Case {
	var out []*conformance.Case
	for i, st := range c.Steps {
		if (st.Op == driver.OpRestart || st.Op == driver.OpNewSession && i > 1) && len(ps) > 0 && ps[0].step < i {
			d := copyCase(c)
			turns := 0
			for _, p := range ps {
				if p.step < i {
					turns = p.end
				}
			}
			d.Steps, d.Script = d.Steps[:i], d.Script[:turns]
			out = append(out, d)
		}
	}
	return out
}

// scriptCuts are c without one prompt and its turns, one turn of tool
// calls, or one call of a turn of several; or with a turn undecorated.
func scriptCuts(c *conformance.Case, ps []promptAt) []*conformance.Case {
	var out []*conformance.Case
	// One prompt with its turns (one prompt stays).
	if len(ps) > 1 {
		for k := len(ps) - 1; k >= 0; k-- {
			p := ps[k]
			d := copyCase(c)
			d.Steps = slices.Delete(d.Steps, p.step, p.step+1)
			d.Script = slices.Delete(d.Script, p.first, p.end)
			out = append(out, d)
		}
	}
	// One turn of tool calls.
	for t := range c.Script {
		if len(c.Script[t].ToolCalls) > 0 {
			d := copyCase(c)
			d.Script = slices.Delete(d.Script, t, t+1)
			out = append(out, d)
		}
	}
	// One call of a turn of several.
	for t, turn := range c.Script {
		if len(turn.ToolCalls) < 2 {
			continue
		}
		for j := range turn.ToolCalls {
			d := copyCase(c)
			d.Script[t].ToolCalls = slices.Delete(d.Script[t].ToolCalls, j, j+1)
			out = append(out, d)
		}
	}
	// The turns' decorations: text and reasoning beside calls, chunking,
	// long final texts.
	for t, turn := range c.Script {
		plain := turn
		plain.Reasoning, plain.ChunkSize = "", 0
		if len(turn.ToolCalls) > 0 {
			plain.Text = ""
		} else {
			plain.Text = "DONE"
		}
		if !reflect.DeepEqual(plain, turn) {
			d := copyCase(c)
			d.Script[t] = plain
			out = append(out, d)
		}
	}
	return out
}

// itemCuts are c with a list of a call cut: half the list, then one item.
func itemCuts(c *conformance.Case) []*conformance.Case {
	var out []*conformance.Case
	for t, turn := range c.Script {
		for j, tc := range turn.ToolCalls {
			list, ok := todos(tc.Arguments)
			if !ok {
				continue
			}
			n := len(list)
			var cuts [][2]int // remove [lo, hi)
			if n > 1 {
				cuts = append(cuts, [2]int{n / 2, n}, [2]int{0, n / 2})
			}
			if n <= 8 {
				for k := range n {
					cuts = append(cuts, [2]int{k, k + 1})
				}
			}
			for _, cut := range cuts {
				d := copyCase(c)
				l, _ := todos(d.Script[t].ToolCalls[j].Arguments)
				setTodos(d.Script[t].ToolCalls[j].Arguments, slices.Delete(l, cut[0], cut[1]))
				out = append(out, d)
			}
		}
	}
	return out
}

// contentCuts are c with an item's content shorter.
func contentCuts(c *conformance.Case) []*conformance.Case {
	var out []*conformance.Case
	for t, turn := range c.Script {
		for j, tc := range turn.ToolCalls {
			list, _ := todos(tc.Arguments)
			for k, it := range list {
				im, ok := it.(map[string]any)
				if !ok {
					continue
				}
				s, ok := im["content"].(string)
				if !ok {
					continue
				}
				rs := []rune(s)
				var shorter []string
				if len(rs) > 1 {
					shorter = append(shorter, string(rs[:len(rs)/2]), string(rs[len(rs)/2:]))
				}
				if short := fmt.Sprintf("t%d", k); s != short && len(rs) > 0 {
					shorter = append(shorter, short)
				}
				for _, sh := range shorter {
					d := copyCase(c)
					l, _ := todos(d.Script[t].ToolCalls[j].Arguments)
					l[k].(map[string]any)["content"] = sh
					out = append(out, d)
				}
			}
		}
	}
	return out
}

// todos is a call's list, when its arguments hold one.
func todos(args any) ([]any, bool) {
	m, ok := args.(map[string]any)
	if !ok {
		return nil, false
	}
	l, ok := m["todos"].([]any)
	return l, ok
}

func setTodos(args any, l []any) { args.(map[string]any)["todos"] = l }

// copyCase copies c deeply enough for a candidate to change: steps,
// turns, calls and their arguments.
func copyCase(c *conformance.Case) *conformance.Case {
	d := *c
	d.Checks = slices.Clone(c.Checks)
	d.Steps = slices.Clone(c.Steps)
	d.Script = make([]mockmodel.Turn, len(c.Script))
	for i, t := range c.Script {
		t.ToolCalls = slices.Clone(t.ToolCalls)
		for j := range t.ToolCalls {
			t.ToolCalls[j].Arguments = deepCopy(t.ToolCalls[j].Arguments)
		}
		d.Script[i] = t
	}
	return &d
}

func deepCopy(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = deepCopy(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = deepCopy(e)
		}
		return l
	}
	return v
}
