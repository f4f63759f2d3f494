package explore

import (
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/driver"
)

// What a failure is about (the first half of a signature): the kind of
// the todo_write call its reason names, or what else failed.
const (
	// OpList is an accepted list, OpEmptyList an accepted [].
	OpList      = "list"
	OpEmptyList = "empty-list"
	// OpRefused: the agent refused a step the check needed (the reason
	// starts conformance.NotJudgedPrefix).
	OpRefused = "refused"
	// OpNoCall: the reason names no call (and, at a load, no list was
	// accepted before it).
	OpNoCall = "no-call"
	// A call the contract refuses is named by the rule it breaks
	// (RuleEmpty, RuleBlank, ...; RuleTwoActive also for such a call
	// accepted under --policy parallel).
)

// Where a failure is (the second half of a signature): the kind of ACP
// step.
const (
	AtPrompt    = "prompt"     // a prompt (of the first session or a second one) before any load
	AtCancel    = "cancel"     // the prompt the client cancels (session/cancel)
	AtAfterLoad = "after-load" // a prompt after a restart and session/load
	AtLoad      = "load"       // the session/load
	AtCase      = "case"       // nowhere in particular
)

// signature tells apart the failures of one check by what failed: the
// kind of call the reason points at (or OpRefused, OpNoCall) and the kind
// of step it is at, as "op/step" (e.g. "empty-list/after-load",
// "duplicate/prompt", "list/load"). It reads the case and the reason the
// check gave on it, so a shrunk case keeps its scenario's signature as
// long as it fails the same way: which call, among how many, and what the
// reason quotes do not enter it, only their kinds. It is coarse on
// purpose: an agent that sends no plan at all fails TW-PLAN-1 with a few
// signatures (a list, an empty list; in a prompt, a cancelled one, after
// a load), not one per scenario; whether a list replaces the one before
// it, or which session it is in, does not split a failure.
func signature(c *conformance.Case, reason string) string {
	if c == nil {
		return OpNoCall + "/" + AtCase
	}
	ps := promptsOf(c)
	if rest, ok := strings.CutPrefix(reason, conformance.NotJudgedPrefix); ok {
		return OpRefused + "/" + refusedAt(c, ps, rest)
	}
	// What the agent or the list says is quoted (%q) or follows "the
	// case stopped early": neither may steer the signature.
	text := conformance.FailureText(reason)
	ws := c.Writes()
	named, at := -1, len(text)
	for i, w := range ws {
		if k := conformance.WordIndex(text, w.CallID); k >= 0 && k < at {
			named, at = i, k
		}
	}
	op, step := OpNoCall, AtCase
	switch m := promptRE.FindStringSubmatch(text); {
	case strings.Contains(text, "session/load"):
		step = AtLoad
	case named >= 0:
		step = promptKind(c, ps, ws[named].Prompt)
	case m != nil:
		n, _ := strconv.Atoi(m[1])
		step = promptKind(c, ps, n-1)
	}
	switch {
	case named >= 0:
		op = writeKind(ws[named])
	case step == AtLoad:
		op = loadedKind(c, ps, ws)
	}
	return op + "/" + step
}

var (
	promptRE = regexp.MustCompile(`\bprompt (\d+)\b`)
	stepRE   = regexp.MustCompile(`^step (\d+) \(`)
)

// refusedAt is where the step a "not judged" reason names is ("step 3
// (loadSession) was answered with ...").
func refusedAt(c *conformance.Case, ps []promptAt, stopped string) string {
	m := stepRE.FindStringSubmatch(stopped)
	if m == nil {
		return AtCase
	}
	i, _ := strconv.Atoi(m[1])
	if i < 1 || i > len(c.Steps) {
		return AtCase
	}
	switch st := c.Steps[i-1]; {
	case st.Op == driver.OpLoadSession:
		return AtLoad
	case st.Op == driver.OpPrompt:
		return promptKind(c, ps, slices.IndexFunc(ps, func(p promptAt) bool { return p.step == i-1 }))
	}
	return AtCase
}

// promptKind is the kind of prompt k (0-based).
func promptKind(c *conformance.Case, ps []promptAt, k int) string {
	if k < 0 || k >= len(ps) {
		return AtCase
	}
	i := ps[k].step
	if c.Steps[i].Cancel {
		return AtCancel
	}
	if slices.ContainsFunc(c.Steps[:i], func(s driver.Step) bool { return s.Op == driver.OpLoadSession }) {
		return AtAfterLoad
	}
	return AtPrompt
}

// writeKind is the kind of write w: the rule it breaks when the contract
// refuses it, else an empty list or a list.
func writeKind(w conformance.Write) string {
	rule := classify(w.Args)
	switch {
	case w.Reject && rule != "":
		return rule
	case w.Reject || !w.Shaped:
		return RuleShape
	case rule == RuleTwoActive:
		return RuleTwoActive // accepted under --policy parallel
	case len(w.Todos) == 0:
		return OpEmptyList
	}
	return OpList
}

// loadedKind is the kind of the list a load must replay: the last one
// accepted before the first restart (OpNoCall when none was).
func loadedKind(c *conformance.Case, ps []promptAt, ws []conformance.Write) string {
	restart := slices.IndexFunc(c.Steps, func(s driver.Step) bool { return s.Op == driver.OpRestart || s.Op == driver.OpLoadSession })
	kind := OpNoCall
	for _, w := range ws {
		if w.Prompt < len(ps) && (restart < 0 || ps[w.Prompt].step < restart) && !w.Reject && w.Shaped {
			kind = OpList
			if len(w.Todos) == 0 {
				kind = OpEmptyList
			}
		}
	}
	return kind
}

// failureKey keys a distinct failure: its check and its signature.
func failureKey(check, sig string) string { return check + " " + sig }

// caseDirName is the folder of a distinct failure's shrunk case:
// explored-<check>--<op>--<step> ("explored-tw-plan-1--empty-list--load").
func caseDirName(check, sig string) string {
	name := "explored-" + strings.ToLower(check)
	if sig != "" {
		name += "--" + strings.ReplaceAll(sig, "/", "--")
	}
	return name
}
