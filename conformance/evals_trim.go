package conformance

import (
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/todoharness/todoharness/harness/todolist"
)

// evalTrimmed judges TW-PLAN-TRIM-1: a plan showing an accepted list shows
// each content exactly as the contract trims it (JavaScript's
// String.prototype.trim()), also where the common trim functions disagree
// (todolist.EdgeSpaces). The MUST checks take content that differs from
// the contract's only there for the list (sameList): its author did trim,
// with another function. This SHOULD check names the character. It is
// judged on the plans of writes whose content the trim functions trim
// differently, and on no other: elsewhere every trim gives the same.
func evalTrimmed(ev *Evidence) verdict {
	edgy, shown := trimJudged(ev)
	if edgy == 0 {
		return skipf("no accepted write has content the common trim functions trim differently (%s)", edgeRunes())
	}
	if len(shown) == 0 {
		return skipf("no plan shows a list whose content the common trim functions trim differently (the other plan checks say why)")
	}
	var fs failures
	for _, s := range shown {
		if f, bad := trimFailure(s.plan, s.write); bad {
			fs.add(f)
		}
	}
	return fs.orElse(pass())
}

// planOfWrite is a plan and the write whose list it shows.
type planOfWrite struct {
	plan  planObs
	write writeObs
}

// trimJudged counts the accepted writes whose content the common trim
// functions trim differently and lists the plans (any segment) that show
// one's list, as sameList takes it: what TW-PLAN-TRIM-1 judges.
func trimJudged(ev *Evidence) (int, []planOfWrite) {
	var edgy []writeObs
	for _, w := range ev.writes() {
		if w.Accepted && w.Shaped && slices.ContainsFunc(rawContents(w.Args), todolist.TrimsDiffer) {
			edgy = append(edgy, w)
		}
	}
	var out []planOfWrite
	for _, p := range ev.plans() {
		if i := slices.IndexFunc(edgy, func(w writeObs) bool { return sameList(p.todos(), w.Todos) }); i >= 0 {
			out = append(out, planOfWrite{p, edgy[i]})
		}
	}
	return len(edgy), out
}

// trimFailure is the failure of plan p, which shows w's list, when an
// entry differs from the contract's content in edge characters.
func trimFailure(p planObs, w writeObs) (verdict, bool) {
	var edges []todolist.EdgeSpace
	first := -1
	for k, e := range p.Entries {
		for _, d := range todolist.EdgeDiff(e.Content, w.Todos[k].Content) {
			if first < 0 {
				first = k
			}
			if !slices.ContainsFunc(edges, func(x todolist.EdgeSpace) bool { return x.Rune == d.Rune }) {
				edges = append(edges, d)
			}
		}
	}
	if first < 0 {
		return verdict{}, false
	}
	names := make([]string, len(edges))
	for i, e := range edges {
		names[i] = e.String()
	}
	return failf("plan #%d shows %s's list with entry %d %q where the contract's trim gives %q: %s; trim as JavaScript's String.prototype.trim() does",
		p.Seq, w.CallID, first+1, ends(p.Entries[first].Content, 60), ends(w.Todos[first].Content, 60), strings.Join(names, "; ")).
		at(p.Seq, fmt.Sprintf("content trimmed otherwise than the contract (%s's list)", w.CallID)), true
}

// rawContents lists the content strings of canonical todo_write arguments,
// untrimmed.
func rawContents(args any) []string {
	m, _ := args.(map[string]any)
	list, _ := m["todos"].([]any)
	var out []string
	for _, it := range list {
		if im, ok := it.(map[string]any); ok {
			if c, ok := im["content"].(string); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

// edgeRunes lists the characters of todolist.EdgeSpaces: "U+001C, …".
func edgeRunes() string {
	var out []string
	for _, e := range todolist.EdgeSpaces() {
		out = append(out, fmt.Sprintf("U+%04X", e.Rune))
	}
	return strings.Join(out, ", ")
}

// ends is s when it has at most n bytes, else its first and last n/2
// bytes around "…", cut between UTF-8 characters: content differing from
// the contract's at its ends keeps both in view.
func ends(s string, n int) string {
	if len(s) <= n {
		return s
	}
	head, tail := n/2, len(s)-n/2
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return s[:head] + "…" + s[tail:]
}
