package conformance

import (
	"fmt"
	"sort"
	"strings"
)

// maxHint bounds the tail of a reason kept whole as its fix hint;
// minSeen is the least of the observation before it that is kept.
const (
	maxHint = 240
	minSeen = 100
)

// OneLine is s on one line (runs of white space as one space), cut to
// about n bytes.
func OneLine(s string, n int) string { return oneLine(s, n) }

// CutReason is reason on one line in about n bytes, its fix hint never cut:
// a reason is what was seen, then after "; " what to do or the rule that
// decided. The part from the first "; " outside a quoted string is kept
// whole (up to maxHint bytes), and the observation before it is shortened
// instead. A reason with no such tail is cut at n.
func CutReason(reason string, n int) string {
	s := strings.Join(strings.Fields(reason), " ")
	if len(s) <= n {
		return s
	}
	head, hint, ok := splitHint(s)
	if !ok || len(hint) > maxHint {
		return truncate(s, n)
	}
	// The observation keeps at least minSeen bytes: what was seen is the
	// row's first news, the hint its second.
	room := max(n-len(hint), minSeen)
	return truncate(head, room) + hint
}

// splitHint splits s at its first "; " outside a double-quoted string (Go
// %q quoting: \" inside does not end it); hint starts with the "; ".
func splitHint(s string) (head, hint string, ok bool) {
	in, esc, at := false, false, -1
	for i := 0; i < len(s) && at < 0; i++ {
		c := s[i]
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && c == ';' && i+1 < len(s) && s[i+1] == ' ':
			at = i
		}
	}
	if at < 0 {
		return s, "", false
	}
	return s[:at], s[at:], true
}

// PassSeen is the REASON of a passing check: where the check held ("12
// cases: " or the one case) and what the run saw there ("3 plans, each the
// list of the accepted write before it"), added up over the cases. When
// the evidence is not at hand: the cases' own notes, else the check's
// title.
func (r *Report) PassSeen(c CheckResult) string {
	var names, notes []string
	rule, ok := seenRuleOf(c.ID)
	var seen tally
	for _, cv := range c.Cases {
		if cv.Outcome != Pass {
			continue
		}
		names = append(names, cv.Case)
		if cv.Reason != "" {
			notes = append(notes, cv.Case+": "+cv.Reason)
		}
		if ev := r.evidenceOf(cv.Case); ev == nil {
			ok = false
		} else if ok {
			seen = seen.add(rule.count(ev))
		}
	}
	switch {
	case len(names) == 0:
		return c.Title
	case !ok && len(notes) > 0:
		return strings.Join(notes, "; ")
	}
	what := c.Title
	if ok {
		what = rule.say(seen)
	}
	if len(names) == 1 {
		return names[0] + ": " + what
	}
	return fmt.Sprintf("%d cases: %s", len(names), what)
}

// evidenceOf is the evidence of case id (its first run), nil when the
// report has none.
func (r *Report) evidenceOf(id string) *Evidence {
	for _, cr := range r.Cases {
		if cr.ID == id {
			return cr.ev
		}
	}
	return nil
}

// RequestMarks are the transcript's marks in the model journal of case
// cr: a failure that points at no wire line but names a scripted call is
// marked at the request that carried the call's result (what the model
// saw), by the request's journal Index.
func (r *Report) RequestMarks(cr *CaseResult) map[int][]string {
	if cr.ev == nil {
		return nil
	}
	out := map[int][]string{}
	for _, c := range r.Checks {
		for _, cv := range c.Cases {
			if cv.Case != cr.ID || cv.Outcome != Fail || len(cv.Lines) > 0 {
				continue
			}
			for _, call := range r.callsNamed(cr.ID, cv.Reason) {
				res := cr.ev.resultOf(call)
				if !res.Found {
					continue
				}
				idx := cr.ev.Journal[res.Request].Index
				out[idx] = append(out[idx], fmt.Sprintf("%s: the result of %s, below (%s)", c.ID, call, CutReason(cv.Reason, 160)))
			}
		}
	}
	for k := range out {
		sort.Strings(out[k])
	}
	return out
}

// OutcomeClass is the class of c's outcome: its outcome, or "stale",
// "notrun", "na" (the summary's colour, the HTML report's style).
func OutcomeClass(c CheckResult) string {
	switch {
	case c.Stale:
		return "stale"
	case c.Outcome == NotRun:
		return "notrun"
	case c.Outcome == NA:
		return "na"
	}
	return string(c.Outcome)
}

// ANSI colours of the summary, by outcome class (OutcomeClass) or verdict.
// Every code is 5 bytes, so a column of painted cells stays aligned in a
// tabwriter.
func colourOf(class string) string {
	switch class {
	case "pass":
		return "\x1b[32m" // green
	case "fail", "stale", "interrupted":
		return "\x1b[31m" // red
	case "xfail", "flaky", "incomplete":
		return "\x1b[33m" // yellow
	case "notrun", "na":
		return "\x1b[90m" // grey
	}
	return "\x1b[39m" // the terminal's own
}

// painter returns a function that wraps text in the colour of its class,
// or leaves it as it is when color is off.
func painter(color bool) func(class, text string) string {
	if !color {
		return func(_, text string) string { return text }
	}
	return func(class, text string) string { return colourOf(class) + text + "\x1b[0m" }
}
