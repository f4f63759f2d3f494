package conformance

import (
	"cmp"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/internal/termtext"
)

// What a run does with a case that failed as a session of a pooled
// process (Config.RerunPooled, RunInfo.RerunPooled, conform --rerun-pooled).
const (
	// RerunKnown runs it again alone in a fresh process unless every
	// failure of every MUST and SHOULD check it failed there is one that
	// a case of the same run confirmed alone in a fresh process, when it
	// ended or, run again alone for that kind of failure, before it was
	// decided (rerunAlone; the default).
	RerunKnown = "known"
	// RerunEvery runs every such case again alone.
	RerunEvery = "every"
)

// stoppedEarly joins a check's failure to why the case stopped early
// (judgeCheck).
const stoppedEarly = "; the case stopped early: "

// quotedRE is a quoted string of a reason (%q): what the agent or a list
// says.
var quotedRE = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// FailureText is the part of a check's reason that says what failed,
// with nothing the agent or the case's lists say in it: the reason up to
// why the case stopped early, each quoted string made "".
func FailureText(reason string) string {
	text, _, _ := strings.Cut(reason, stoppedEarly)
	return quotedRE.ReplaceAllString(text, `""`)
}

// WordIndex is the first index of id in s not inside a longer word
// (call_1 is not in call_12), -1 when none.
func WordIndex(s, id string) int {
	if id == "" {
		return -1
	}
	word := func(b byte) bool {
		return b == '_' || b == '-' || '0' <= b && b <= '9' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z'
	}
	for from := 0; ; {
		k := strings.Index(s[from:], id)
		if k < 0 {
			return -1
		}
		k += from
		if (k == 0 || !word(s[k-1])) && (k+len(id) == len(s) || !word(s[k+len(id)])) {
			return k
		}
		from = k + 1
	}
}

var (
	// listRE is a list a reason shows, its items quoted (made "" by
	// FailureText): ["" in_progress, "" pending], with its length when
	// it is shown cut ("(120 items)"); an empty one, [], is not.
	listRE = regexp.MustCompile(`\[[^\[\]]*[^\[\]\s][^\[\]]*\](?: \([0-9]+ items\))?`)
	// numberRE is a number, or a duration ("1.5s", "1m2s").
	numberRE = regexp.MustCompile(`(?:[0-9]+(?:\.[0-9]+)?(?:ns|µs|ms|h|m|s)?)+`)
)

// failureShape is the kind of one failure of a check on case c: its
// reason's FailureText with what is the case's own made alike, the
// scripted calls' IDs ("call"), the lists it shows ("[…]", an empty one
// kept: a lost [] is not a lost list) and every number (a prompt's, a
// model request's, a message's, a wire line's: "N"). Two cases whose
// check fails for the same cause (no plan after a write, the list in the
// tool result) give one shape whatever they wrote; two different causes
// of one check's failure give two, as their reasons' words differ.
func failureShape(c *Case, reason string) string {
	text := FailureText(reason)
	ids := c.callIDs()
	// The longest first: call_1 is no part of call_12 (WordIndex), nor
	// is a custom ID that another one contains.
	slices.SortStableFunc(ids, func(a, b string) int { return len(b) - len(a) })
	for _, id := range ids {
		for k := WordIndex(text, id); k >= 0; k = WordIndex(text, id) {
			text = text[:k] + "call" + text[k+len(id):]
		}
	}
	text = listRE.ReplaceAllString(text, "[…]")
	return numberRE.ReplaceAllString(text, "N")
}

// callIDs are the IDs of the case's scripted tool calls (each call's own,
// or the mock model's call_N).
func (c *Case) callIDs() []string {
	var out []string
	n := 0
	for _, t := range c.Script {
		for _, call := range t.ToolCalls {
			n++
			out = append(out, cmp.Or(call.ID, fmt.Sprintf("call_%d", n)))
		}
	}
	return out
}

// confirmations are the failures the cases of a run showed alone in a
// fresh process (a process of their own, the first and only session of
// a fresh pooled process, a run again alone), noted as each case ends:
// by check ID, each failure's shape (failureShape) and the first case
// that showed it. A pooled case that fails only with those is not run
// again alone (RerunKnown).
type confirmations struct {
	mu sync.Mutex
	by map[string]map[string]string
}

// add notes the failures of a case that ran alone in a fresh process:
// failed is each MUST and SHOULD check it failed, with every failure.
func (cs *confirmations) add(c *Case, failed map[string][]string) {
	if len(failed) == 0 {
		return
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.by == nil {
		cs.by = map[string]map[string]string{}
	}
	for id, reasons := range failed {
		if cs.by[id] == nil {
			cs.by[id] = map[string]string{}
		}
		for _, r := range reasons {
			if s := failureShape(c, r); cs.by[id][s] == "" {
				cs.by[id][s] = c.ID
			}
		}
	}
}

// has reports whether a case noted before confirmed a failure of check
// id of kind shape (failureShape).
func (cs *confirmations) has(id, shape string) bool {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.by[id][shape] != ""
}

// known says which case confirmed each check a pooled case failed (of
// failed: each MUST and SHOULD check, with every failure), when a case
// noted before had confirmed every one of its failures (nil when one is
// new: the case runs again alone). A check whose failures more than one
// case confirmed names the first failure's.
func (cs *confirmations) known(c *Case, failed map[string][]string) map[string]string {
	if len(failed) == 0 {
		return nil
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	by := map[string]string{}
	for id, reasons := range failed {
		for _, r := range reasons {
			x := cs.by[id][failureShape(c, r)]
			if x == "" {
				return nil
			}
			if by[id] == "" {
				by[id] = x
			}
		}
	}
	return by
}

// notRunAgain is Evidence.NotRunAgain of a case not run again alone as
// the cases of by confirmed what it failed (confirmations.known).
func notRunAgain(session string, by map[string]string) string {
	return fmt.Sprintf("failed as %s, and was not run again alone: %s; reported from that session (--rerun-pooled %s runs it again)",
		session, confirmedByWords(by), RerunEvery)
}

// confirmedByWords says which case confirmed each check of by
// (Evidence.ConfirmedBy): "case load-replay confirmed the same failures
// of TW-FINAL-1, TW-PLAN-1 alone in a fresh process; case ...".
func confirmedByWords(by map[string]string) string {
	checks := map[string][]string{}
	for _, id := range slices.Sorted(maps.Keys(by)) {
		checks[by[id]] = append(checks[by[id]], id)
	}
	var parts []string
	for _, x := range slices.Sorted(maps.Keys(checks)) {
		parts = append(parts, fmt.Sprintf("case %s confirmed the same failure(s) of %s alone in a fresh process", x, strings.Join(checks[x], ", ")))
	}
	return strings.Join(parts, "; ")
}

// requiredFailures is every failure of each MUST and SHOULD check of cat
// that fails on the case ev (judgeable: the validator set), by check ID:
// what a pooled failure is (pooledFailure) and what a case confirms alone
// (confirmations).
func requiredFailures(ev *Evidence, cat []Check, v *driver.SchemaValidator) (ids []string, vds map[string]verdict) {
	failed := caseFailures(ev, cat, v)
	vds = map[string]verdict{}
	e := judgeable(ev, v)
	for _, c := range cat {
		if c.Level != INFO && slices.Contains(failed, c.ID) {
			ids = append(ids, c.ID)
			vds[c.ID] = judgeCheck(e, c)
		}
	}
	return ids, vds
}

// allFailures is every failure of each verdict of vds, by check ID.
func allFailures(vds map[string]verdict) map[string][]string {
	out := make(map[string][]string, len(vds))
	for id, vd := range vds {
		out[id] = vd.all()
	}
	return out
}

// noteConfirmed notes the failures of a case that ran alone in a fresh
// process and completed (runner.confirmed), under RerunKnown; a run whose
// Config.Confirmed decides tells Config.ConfirmedAlone.
func (r *runner) noteConfirmed(ev *Evidence, v *driver.SchemaValidator) {
	// A run that pools nothing (Config.Pool off) has no pooled failure to
	// decide: nothing asks what a fresh process confirmed, and its cases
	// are judged once, by the judge. (In one that pools, its runs again
	// alone, r.pool nil meanwhile, confirm too.)
	if !r.cfg.Pool || r.cfg.RerunPooled != RerunKnown || ev.Aborted != "" || ev.Interrupted != "" || ev.NotRun != "" {
		return
	}
	if ev.pooled() && !ev.pooledAlone() {
		return
	}
	if r.cfg.Confirmed != nil && r.cfg.ConfirmedAlone == nil {
		return
	}
	_, vds := requiredFailures(ev, r.cfg.Checks, v)
	if r.cfg.Confirmed == nil {
		r.confirmed.add(ev.Case, allFailures(vds))
		return
	}
	if len(vds) > 0 {
		reasons := make(map[string]string, len(vds))
		for id, vd := range vds {
			reasons[id] = vd.Reason
		}
		r.cfg.ConfirmedAlone(ev.Case, reasons)
	}
}

// decideKnown decides, under RerunKnown, whether a case that failed pf as
// a session of a pooled process (not its first and only one) is not run
// again alone, as each failure it showed there is one a fresh process
// confirmed: Config.Confirmed, when set (for a case that completed), else
// knownFailure. It then sets NotRunAgain.
func (r *runner) decideKnown(ev *Evidence, pf *PooledFailure) bool {
	switch {
	case r.cfg.Confirmed != nil:
		if pf.Aborted == "" {
			ev.NotRunAgain = r.cfg.Confirmed(ev.Case, pf.reasons)
		}
	default:
		r.knownFailure(ev, pf)
	}
	return ev.NotRunAgain != ""
}

// mayBeKnown reports whether decideKnown may spare the case a run again
// alone, once fresh processes confirmed its failures: it completed, and,
// under the run's own confirmations, went to its end (knownFailure).
func (r *runner) mayBeKnown(ev *Evidence, pf *PooledFailure) bool {
	if r.cfg.Confirmed != nil {
		return pf.Aborted == ""
	}
	return r.rerunsOnlyNew() && pf.Aborted == "" && ev.Stopped == "" && ev.keyStepMissed() == ""
}

// unconfirmedKinds are the kinds of the failures pf, of a case that
// failed as a session of a pooled process, that no fresh process has
// confirmed yet, each "check NUL kind": every failure's failureShape of
// each check it failed, or, where Config.Confirmed decides, each check's
// reason's Config.FailureKind (failureShape when nil), unless Confirmed
// knows that check's failure.
func (r *runner) unconfirmedKinds(c *Case, pf *PooledFailure) []string {
	var out []string
	if r.cfg.Confirmed != nil {
		for id, reason := range pf.reasons {
			if r.cfg.Confirmed(c, map[string]string{id: reason}) != "" {
				continue
			}
			kind := failureShape(c, reason)
			if r.cfg.FailureKind != nil {
				kind = r.cfg.FailureKind(c, id, reason)
			}
			out = append(out, id+"\x00"+kind)
		}
	} else {
		for id, reasons := range pf.all {
			for _, x := range reasons {
				if s := failureShape(c, x); !r.confirmed.has(id, s) {
					out = append(out, id+"\x00"+s)
				}
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// representatives splits the cases evs[i] that failed as sessions of a
// pooled process (again[i] what each failed there) into those to run
// again alone first and the rest, in run order, under RerunKnown: first
// each case that runs again alone whatever is confirmed (mayBeKnown), and
// of the others, few cases among which every kind of failure no fresh
// process has confirmed yet is shown (each time the case with the most
// kinds not shown yet, the first of those); the rest are those each of
// whose kinds is then shown (a case that a confirmation since its end
// spares a run again alone is in neither: decideKnown set NotRunAgain on
// it). A representative that fails alone as it did pooled confirms its
// kinds for the rest; one that passes alone leaves them to run again
// alone each.
func (r *runner) representatives(evs []*Evidence, again map[int]*PooledFailure) (first, rest []int) {
	shown := map[string]bool{}
	kinds := map[int][]string{}
	var cand []int
	for _, i := range slices.Sorted(maps.Keys(again)) {
		ev, pf := evs[i], again[i]
		switch {
		case !r.mayBeKnown(ev, pf):
			first = append(first, i)
			for _, k := range r.unconfirmedKinds(ev.Case, pf) {
				shown[k] = true
			}
		case r.decideKnown(ev, pf):
			r.knownProgress(ev, pf)
		default:
			cand = append(cand, i)
			kinds[i] = r.unconfirmedKinds(ev.Case, pf)
		}
	}
	picked := map[int]bool{}
	for {
		best, most := -1, 0
		for _, i := range cand {
			n := 0
			for _, k := range kinds[i] {
				if !shown[k] {
					n++
				}
			}
			if n > most && !picked[i] {
				best, most = i, n
			}
		}
		if best < 0 {
			break
		}
		picked[best] = true
		first = append(first, best)
		for _, k := range kinds[best] {
			shown[k] = true
		}
	}
	for _, i := range cand {
		if !picked[i] {
			rest = append(rest, i)
		}
	}
	slices.Sort(first)
	return first, rest
}

// knownProgress writes the live line of a case that failed as a session
// of a pooled process and, once the cases run again alone confirmed what
// it failed, is not run again alone.
func (r *runner) knownProgress(ev *Evidence, pf *PooledFailure) {
	if r.cfg.Progress == nil {
		return
	}
	why := ev.NotRunAgain
	if len(ev.ConfirmedBy) > 0 {
		why = confirmedByWords(ev.ConfirmedBy)
	}
	r.progressMu.Lock()
	defer r.progressMu.Unlock()
	// The reasons quote the agent: shown, never acted on by the terminal.
	fmt.Fprintf(r.cfg.Progress, "[known] %s  pooled: FAIL %s; not run again alone: %s\n", ev.Case.ID,
		strings.Join(pf.Failed, ", "), termtext.Visible(why))
}

// knownFailure decides, under RerunKnown, whether a case that failed pf
// as a session of a pooled process (not its first and only one) runs
// again alone: not when it completed, went to its end (no step refused,
// its key step reached: a run alone could judge no more) and every
// failure it showed is one a case of this run confirmed alone before it
// ended. It then sets NotRunAgain and ConfirmedBy.
func (r *runner) knownFailure(ev *Evidence, pf *PooledFailure) {
	if !r.rerunsOnlyNew() || pf.Aborted != "" || ev.Stopped != "" || ev.keyStepMissed() != "" {
		return
	}
	if by := r.confirmed.known(ev.Case, pf.all); by != nil {
		ev.ConfirmedBy, ev.NotRunAgain = by, notRunAgain(pf.Session, by)
	}
}

// rerunsOnlyNew reports whether a pooled failure runs again alone only
// when no case of the run confirmed it already: RerunKnown, in a run that
// decides it itself (no Config.Confirmed).
func (r *runner) rerunsOnlyNew() bool {
	return r.cfg.RerunPooled == RerunKnown && r.cfg.Confirmed == nil
}
