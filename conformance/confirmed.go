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
)

// What a run does with a case that failed as a session of a pooled
// process (Config.RerunPooled, RunInfo.RerunPooled, conform --rerun-pooled).
const (
	// RerunKnown runs it again alone in a fresh process unless every
	// failure of every MUST and SHOULD check it failed there is one that
	// a case of the same run had already confirmed alone in a fresh
	// process when it ended (the default).
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
// process and completed (runner.confirmed), under RerunKnown.
func (r *runner) noteConfirmed(ev *Evidence, v *driver.SchemaValidator) {
	if !r.rerunsOnlyNew() || ev.Aborted != "" || ev.Interrupted != "" || ev.NotRun != "" {
		return
	}
	if ev.pooled() && !ev.pooledAlone() {
		return
	}
	_, vds := requiredFailures(ev, r.cfg.Checks, v)
	r.confirmed.add(ev.Case, allFailures(vds))
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
