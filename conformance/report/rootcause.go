package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/driver"
)

// Root causes: the failed checks that point at the same wire line or the
// same scripted call, and the marks the transcripts put on the model's
// requests.

// RootCauses groups r's failed checks that point at the same thing: the
// same wire line, or the same scripted call named in their reasons (a
// refusal the model did not see as one fails the refusal check and every
// check that then finds the call's list shown, replayed or in the history
// of the model's requests). A root cause is the checks that failed at one
// line or call, with the other lines and calls where exactly those checks
// failed together; checks are not chained from one place to another (two
// failures of TW-PLAN-1 in two cases do not make their cases' other
// failures one cause), so a check may be under several. Only places where
// two checks or more failed, in catalogue order of their first check.
func RootCauses(r *conformance.Report) []RootCause {
	ids, at, keys := failureLinks(r)
	sort.Slice(keys, func(a, b int) bool {
		ka, kb := keys[a], keys[b]
		if ka.Case != kb.Case {
			return ka.Case < kb.Case
		}
		if (ka.Seq < 0) != (kb.Seq < 0) {
			return ka.Seq >= 0 // lines first, then calls
		}
		if ka.Seq != kb.Seq {
			return ka.Seq < kb.Seq
		}
		return ka.Call < kb.Call
	})
	var out []RootCause
	var sets [][]int
	for _, l := range keys {
		set := slices.Compact(slices.Sorted(slices.Values(at[l])))
		if len(set) < 2 {
			continue
		}
		k := slices.IndexFunc(sets, func(s []int) bool { return slices.Equal(s, set) })
		if k < 0 {
			k = len(out)
			sets = append(sets, set)
			rc := RootCause{}
			for _, i := range set {
				rc.Checks = append(rc.Checks, ids[i])
			}
			out = append(out, rc)
		}
		out[k].Where = append(out[k].Where, l)
	}
	for k := range out {
		out[k].What = rootWhat(r, out[k].Where)
	}
	// In catalogue order of their first check (ids is in catalogue order),
	// the one with the most checks first, then by the first place.
	order := make([]int, len(out))
	for k := range order {
		order[k] = k
	}
	sort.SliceStable(order, func(a, b int) bool {
		sa, sb := sets[order[a]], sets[order[b]]
		if sa[0] != sb[0] {
			return sa[0] < sb[0]
		}
		return len(sa) > len(sb) // the most checks first
	})
	sorted := make([]RootCause, len(out))
	for k, o := range order {
		sorted[k] = out[o]
	}
	return sorted
}

// failureLinks lists the checks that failed (ids) and the lines and
// calls their failures point at (keys, in order of first sight), each
// with the indexes in ids of the checks there.
func failureLinks(r *conformance.Report) (ids []string, at map[RootAt][]int, keys []RootAt) {
	at = map[RootAt][]int{}
	for _, c := range r.Checks {
		i := -1
		for _, cv := range c.Cases {
			if cv.Outcome != conformance.Fail && cv.Outcome != conformance.XFail {
				continue
			}
			var here []RootAt
			for seq := range cv.Lines {
				here = append(here, RootAt{Case: cv.Case, Seq: seq})
			}
			for _, call := range callsNamed(r, cv.Case, cv.Reason) {
				here = append(here, RootAt{Case: cv.Case, Seq: -1, Call: call})
			}
			for _, l := range here {
				if i < 0 {
					i = len(ids)
					ids = append(ids, c.ID)
				}
				if _, ok := at[l]; !ok {
					keys = append(keys, l)
				}
				at[l] = append(at[l], i)
			}
		}
	}
	return ids, at, keys
}

// RootCause is failures of several checks that share a wire line or a
// scripted call.
type RootCause struct {
	Checks []string
	What   string   // the kind of line: "session/update plan"; or "the agent's verdict on a scripted call"
	Where  []RootAt // the lines first, then the calls
}

// RootAt is a wire line (Seq >= 0) or a scripted call (Seq -1, Call) of
// a case.
type RootAt struct {
	Case string
	Seq  int
	Call string
}

// String is "case #seq" or "case call_N".
func (a RootAt) String() string {
	if a.Seq >= 0 {
		return fmt.Sprintf("%s #%d", a.Case, a.Seq)
	}
	return a.Case + " " + a.Call
}

// rootWhat names what a root cause's failures share: the kind of its
// first wire line, else the call.
func rootWhat(r *conformance.Report, where []RootAt) string {
	for _, a := range where {
		if a.Seq >= 0 {
			return lineWhat(r, a.Case, a.Seq)
		}
	}
	return "the agent's verdict on a scripted todo call (accepted or refused), and what followed from it"
}

// callsNamed are the scripted calls of case c that reason names (as a
// word: call_1 is not call_10).
func callsNamed(r *conformance.Report, c, reason string) []string {
	var out []string
	for _, cr := range r.Cases {
		if cr.ID != c || cr.Evidence() == nil {
			continue
		}
		for _, w := range cr.Evidence().Writes {
			if w.CallID != "" && containsWord(reason, w.CallID) && !slices.Contains(out, w.CallID) {
				out = append(out, w.CallID)
			}
		}
		break
	}
	return out
}

// containsWord reports whether word occurs in s with no letter, digit or
// underscore either side.
func containsWord(s, word string) bool {
	isWord := func(b byte) bool {
		return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
	}
	for i := 0; ; {
		k := strings.Index(s[i:], word)
		if k < 0 {
			return false
		}
		k += i
		end := k + len(word)
		if (k == 0 || !isWord(s[k-1])) && (end == len(s) || !isWord(s[end])) {
			return true
		}
		i = k + 1
	}
}

// lineWhat names the kind of wire line seq of case c.
func lineWhat(r *conformance.Report, c string, seq int) string {
	for _, cr := range r.Cases {
		if cr.ID != c || cr.Evidence() == nil {
			continue
		}
		for _, m := range cr.Evidence().Wire {
			if m.Seq != seq {
				continue
			}
			switch {
			case m.Kind == driver.KindResponse:
				return "the answer to " + m.ReplyTo
			case m.UpdateKind() != "":
				return m.Method + " " + m.UpdateKind()
			case m.Method != "":
				return m.Method
			}
			return "a line that is not JSON-RPC"
		}
	}
	return "a wire line"
}

// RequestMarks are the transcript's marks in the model journal of case
// cr of r: a failure that points at no wire line but names a scripted call
// is marked at the request that carried the call's result (what the model
// saw), by the request's journal Index.
func RequestMarks(r *conformance.Report, cr *conformance.CaseResult) map[int][]string {
	ev := cr.Evidence()
	if ev == nil {
		return nil
	}
	out := map[int][]string{}
	for _, c := range r.Checks {
		for _, cv := range c.Cases {
			if cv.Case != cr.ID || cv.Outcome != conformance.Fail || len(cv.Lines) > 0 {
				continue
			}
			for _, call := range callsNamed(r, cr.ID, cv.Reason) {
				req, ok := ev.ResultRequest(call)
				if !ok {
					continue
				}
				idx := req.Index
				out[idx] = append(out[idx], fmt.Sprintf("%s: the result of %s, below (%s)", c.ID, call, CutReason(cv.Reason, 160)))
			}
		}
	}
	for k := range out {
		sort.Strings(out[k])
	}
	return out
}
