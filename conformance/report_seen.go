package conformance

import (
	"fmt"
	"sort"
	"strings"

	"github.com/todoharness/todoharness/driver"
)

// PassSeen is the REASON of a passing check: where the check held ("12
// cases: " or the one case) and what the run saw there ("3 plans, each the
// list of the accepted write before it"), added up over the cases. When
// the evidence is not at hand: the cases' own notes, else the check's
// title.
func (r *Report) PassSeen(c CheckResult) string {
	var names, notes []string
	rule, ok := c.seen, c.seen.count != nil
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

// What a passing check saw: the REASON of a passing row in the summary
// and the HTML report says what the run showed (counts added up over the
// cases the check passed on), not the check's title.

// tally is what a passing check saw on one case: numbers, added up over
// the cases; words, kept when every case says the same (else joined); an
// example, the first case's.
type tally struct {
	n       []int
	words   []string
	example string
}

// seenRule counts what check's evidence shows on a case (count) and says
// the sum over the cases (say).
type seenRule struct {
	count func(ev *Evidence) tally
	say   func(t tally) string
}

// nOf is "k word", the word in its plural when k is not 1.
func nOf(k int, one, many string) string {
	if k == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", k, many)
}

// each is "each " for k other than 1.
func each(k int) string {
	if k == 1 {
		return ""
	}
	return "each "
}

// ints is a tally of numbers alone.
func ints(n ...int) tally { return tally{n: n} }

// add adds u to t: numbers summed, words joined when they differ.
func (t tally) add(u tally) tally {
	if t.n == nil && t.words == nil && t.example == "" {
		return u
	}
	for i := range t.n {
		if i < len(u.n) {
			t.n[i] += u.n[i]
		}
	}
	for i := range t.words {
		if i < len(u.words) && !strings.Contains(" / "+t.words[i]+" / ", " / "+u.words[i]+" / ") {
			t.words[i] += " / " + u.words[i]
		}
	}
	return t
}

// The words of a pass of the protocol checks.

// seenRun: the words of a pass of RUN-1.
func seenRun() seenRule {
	return seenRule{func(ev *Evidence) tally {
		answered := 0
		for _, s := range ev.Steps {
			if s.ReqSeq >= 0 && s.Error == "" && s.Skipped == "" {
				answered++
			}
		}
		return ints(answered, len(ev.Procs))
	}, func(t tally) string {
		return nOf(t.n[0], "request", "requests") + " answered, " + nOf(t.n[1], "agent process", "agent processes") + " up until the client closed its stdin"
	}}
}

// seenInit: the words of a pass of ACP-INIT-1.
func seenInit() seenRule {
	return seenRule{func(ev *Evidence) tally {
		return tally{n: []int{ev.stepsDone(driver.OpInitialize)}, words: []string{fmt.Sprint(ev.version(0))}}
	},
		func(t tally) string {
			return nOf(t.n[0], "initialize answer", "initialize answers") + ", " + each(t.n[0]) + "protocolVersion " + t.words[0]
		}}
}

// seenPlanFallback: the words of a pass of ACP-PLAN-FALLBACK-1.
func seenPlanFallback() seenRule {
	return seenRule{func(ev *Evidence) tally { return ints(len(ev.planOps())) },
		func(t tally) string {
			return nOf(t.n[0], "plan update", "plan updates") + " to a client without clientCapabilities.plan, " + each(t.n[0]) + "a plan (no plan_update, no plan_removed)"
		}}
}

// seenJSONRPC: the words of a pass of ACP-JSONRPC-1.
func seenJSONRPC() seenRule {
	return seenRule{func(ev *Evidence) tally { return ints(ev.received(false)) },
		func(t tally) string {
			return nOf(t.n[0], "line", "lines") + " on stdout, " + each(t.n[0]) + "a JSON-RPC 2.0 message"
		}}
}

// seenSchema: the words of a pass of ACP-SCHEMA-1 and ACP-SCHEMA-2,
// valid against schema.
func seenSchema(schema string) seenRule {
	return seenRule{func(ev *Evidence) tally { return ints(ev.received(true)) },
		func(t tally) string {
			return nOf(t.n[0], "message", "messages") + " from the agent, " + each(t.n[0]) + "valid against " + schema
		}}
}

// seenExit: the words of a pass of ACP-EXIT-1.
func seenExit() seenRule {
	return seenRule{func(ev *Evidence) tally { return ints(ev.exitedOnClose()) },
		func(t tally) string {
			return nOf(t.n[0], "agent process", "agent processes") + " exited on their own once their stdin closed"
		}}
}

// seenTurnEnd: the words of a pass of ACP-TURN-1.
func seenTurnEnd() seenRule {
	return seenRule{func(ev *Evidence) tally {
		answered, _ := ev.lateUpdates()
		return tally{n: []int{answered}, words: []string{fmt.Sprint(ev.version(0))}}
	},
		func(t tally) string {
			switch t.words[0] {
			case "1":
				return nOf(t.n[0], "prompt answered", "prompts answered") + ", every update of the turn before its answer"
			case "2":
				return nOf(t.n[0], "prompt turn", "prompt turns") + " ended by an idle state_update with its stopReason, every update of the turn before it"
			}
			return nOf(t.n[0], "prompt turn", "prompt turns") + " ended by the answer (protocol version 1) or an idle state_update with its stopReason (version 2), every update of the turn before that end"
		}}
}

// seenToolStatus: the words of a pass of ACP-TOOLSTATUS-1.
func seenToolStatus() seenRule {
	return seenRule{func(ev *Evidence) tally {
		t := ints(0, 0)
		for _, w := range ev.writes() {
			if w.ACP.Status != "" && w.Told != callUnknown {
				t.n[0]++
				if w.Told == callRefused {
					t.n[1]++
				}
			}
		}
		return t
	}, func(t tally) string {
		return fmt.Sprintf("%s with a final status its model's result agrees with (%d failed, %d completed)", nOf(t.n[0], "tool call", "tool calls"), t.n[1], t.n[0]-t.n[1])
	}}
}

// seenSession: the words of a pass of ACP-SESSION-1.
func seenSession() seenRule {
	return seenRule{func(ev *Evidence) tally { return ints(ev.updateSessions().updates) },
		func(t tally) string {
			return nOf(t.n[0], "session/update", "session/updates") + ", " + each(t.n[0]) + "naming a session the client created or loaded on its process"
		}}
}

// The words of a pass of the checks of the tool the model is offered and
// of its results.

// seenTool: the words of a pass of TW-TOOL-1.
func seenTool() seenRule {
	return seenRule{func(ev *Evidence) tally {
		_, names, _ := ev.offeredTool()
		return tally{n: []int{len(names)}, words: []string{ev.Dialect.Tool}}
	}, func(t tally) string {
		return fmt.Sprintf("the model is offered %q (%s offered)", t.words[0], nOf(t.n[0], "tool", "tools"))
	}}
}

// seenSchemaShape: the words of a pass of TW-SCHEMA-1.
func seenSchemaShape() seenRule {
	return seenRule{func(ev *Evidence) tally {
		d := ev.Dialect
		return tally{words: []string{fmt.Sprintf("an object requiring %q: an array of objects requiring %q (a string) and %q", d.ListField, d.ContentField, d.StatusField)}}
	}, func(t tally) string { return "the parameters schema is " + t.words[0] }}
}

// seenStatusEnum: the words of a pass of TW-SCHEMA-2.
func seenStatusEnum() seenRule {
	return seenRule{func(ev *Evidence) tally { return tally{words: []string{statusEnumOf(ev)}} },
		func(t tally) string { return "the status enum is " + t.words[0] }}
}

// seenCounts: the words of a pass of TW-COUNTS-1 and TW-COUNTS-2, each
// result how.
func seenCounts(how string) seenRule {
	return seenRule{func(ev *Evidence) tally {
		t := ints(0)
		for _, w := range ev.writes() {
			if acceptedWithResult(w) {
				if t.n[0]++; t.n[0] == 1 {
					t.example = fmt.Sprintf("%q", driver.Truncate(w.Result.Text, 80))
				}
			}
		}
		return t
	}, func(t tally) string {
		return nOf(t.n[0], "result", "results") + ", " + each(t.n[0]) + how + ": " + t.example
	}}
}

// seenHistory: the words of a pass of TW-HISTORY-1.
func seenHistory() seenRule {
	return seenRule{func(ev *Evidence) tally { return ints(len(ev.Journal)) },
		func(t tally) string {
			return nOf(t.n[0], "model request", "model requests") + ", none carrying the list outside the tool calls (refusals aside)"
		}}
}

// seenHistoryCall: the words of a pass of TW-HISTORY-2.
func seenHistoryCall() seenRule {
	return seenRule{func(ev *Evidence) tally {
		n := 0
		for _, w := range ev.writes() {
			if _, ok := ev.translatedArgs(w.CallID); ok && w.Result.Found {
				n++
			}
		}
		return ints(n)
	}, func(t tally) string {
		return nOf(t.n[0], "call", "calls") + " kept with the whole list in the request carrying its result"
	}}
}

// seenRefused: a TW-VALID check (a call the agent must refuse).
func seenRefused(ev *Evidence) tally {
	t := ints(0)
	for _, w := range ev.writes() {
		if w.Reject && w.Refused && w.Result.Found && w.Result.IsError {
			if t.n[0]++; t.n[0] == 1 {
				t.example = fmt.Sprintf("%q", driver.Truncate(w.Result.Text, 70))
			}
		}
	}
	return t
}

func sayRefused(t tally) string {
	return nOf(t.n[0], "call", "calls") + " refused, no plan after: " + t.example
}

// seenTwoActive is seenRefused under the policy single; under parallel
// the calls were accepted and shown (words[1] says which policy).
func seenTwoActive(ev *Evidence) tally {
	pol, src := ev.policy()
	if pol == PolicyParallel {
		return tally{n: []int{0}, words: []string{"policy " + pol + " (" + src + "): judged the other way: two tasks in_progress were accepted and shown in the plan"}}
	}
	t := seenRefused(ev)
	t.words = []string{"policy " + pol}
	return t
}

func sayTwoActive(t tally) string {
	if t.n[0] == 0 {
		return t.words[0]
	}
	return sayRefused(t) + "; " + t.words[0]
}

// statusEnumOf is the status enum of the offered tool's schema.
func statusEnumOf(ev *Evidence) string {
	spec, _, _ := ev.offeredTool()
	s, err := driver.ParseToolSchema(spec.Parameters)
	if err != nil {
		return "unreadable"
	}
	var got []string
	if list, ok := s.Properties[ev.Dialect.ListField]; ok && list.Items != nil {
		for _, e := range list.Items.Properties[ev.Dialect.StatusField].Enum {
			got = append(got, fmt.Sprint(e))
		}
	}
	sort.Strings(got)
	return strings.Join(got, ", ")
}

// stepsDone counts the steps of op answered without an error.
func (ev *Evidence) stepsDone(op string) int {
	n := 0
	for _, s := range ev.Steps {
		if s.Op == op && s.RespSeq >= 0 && s.Error == "" && s.Skipped == "" {
			n++
		}
	}
	return n
}

// received counts the lines the agent wrote (valid: the JSON-RPC
// messages alone).
func (ev *Evidence) received(valid bool) int {
	n := 0
	for _, m := range ev.Wire {
		if m.Dir == driver.Received && !(valid && m.Kind == driver.KindInvalid) {
			n++
		}
	}
	return n
}

// The words of a pass of the checks of the plans the client is shown.

// seenReplace: the words of a pass of TW-REPLACE-1.
func seenReplace() seenRule {
	return seenRule{func(ev *Evidence) tally { return ints(max(ev.acceptedLists()-1, 0)) },
		func(t tally) string {
			return nOf(t.n[0], "write", "writes") + " after the first, " + each(t.n[0]) + "followed by a plan of exactly its new list"
		}}
}

// seenEmpty: the words of a pass of TW-EMPTY-1.
func seenEmpty() seenRule {
	return seenRule{func(ev *Evidence) tally {
		n := 0
		for _, w := range ev.writes() {
			if w.Shaped && len(w.Todos) == 0 && w.Accepted {
				n++
			}
		}
		return ints(n)
	}, func(t tally) string {
		return nOf(t.n[0], "empty list", "empty lists") + " accepted, " + each(t.n[0]) + "followed by a plan with no entries"
	}}
}

// seenRejectKeep: the words of a pass of TW-REJECT-KEEP-1.
func seenRejectKeep() seenRule {
	return seenRule{func(ev *Evidence) tally { return ints(ev.refusedCalls()) },
		func(t tally) string {
			if t.n[0] == 1 {
				return "1 refused call, the plan before it stood"
			}
			return nOf(t.n[0], "refused call", "refused calls") + ", the plan before each stood"
		}}
}

// seenPlan: the words of a pass of TW-PLAN-1.
func seenPlan() seenRule {
	return seenRule{func(ev *Evidence) tally { return ints(ev.acceptedLists(), ev.refusedCalls()) },
		func(t tally) string {
			s := nOf(t.n[0], "plan", "plans") + ", " + each(t.n[0]) + "the list of the accepted write before it"
			if t.n[1] > 0 {
				s += ", and none for " + nOf(t.n[1], "refused call", "refused calls")
			}
			return s
		}}
}

// seenFinalRule: the words of a pass of TW-FINAL-1.
func seenFinalRule() seenRule {
	return seenRule{withLoadWord(seenFinal), func(t tally) string {
		s := nOf(t.n[0], "prompt turn", "prompt turns")
		if t.n[1] > 0 {
			s += " and " + nOf(t.n[1], t.words[0], t.words[0]+"s")
		}
		return s + ", " + each(t.n[0]+t.n[1]) + "ending on the last accepted list"
	}}
}

// seenPriority: the words of a pass of TW-PLAN-PRIORITY-1 and
// TW-PLAN-PRIORITY-2, each entry what.
func seenPriority(what string) seenRule {
	return seenRule{func(ev *Evidence) tally { return ints(len(planEntries(ev))) },
		func(t tally) string { return nOf(t.n[0], "plan entry", "plan entries") + ", " + each(t.n[0]) + what }}
}

// seenTrimmed: the words of a pass of TW-PLAN-TRIM-1.
func seenTrimmed() seenRule {
	return seenRule{func(ev *Evidence) tally {
		_, shown := trimJudged(ev)
		return ints(len(shown))
	}, func(t tally) string {
		return nOf(t.n[0], "plan", "plans") + " of content the common trim functions trim differently, " + each(t.n[0]) + "as JavaScript's trim() leaves it"
	}}
}

// seenNonNull: the words of a pass of TW-PLAN-NONNULL-1.
func seenNonNull() seenRule {
	return seenRule{func(ev *Evidence) tally {
		empty := 0
		for _, p := range allPlans(ev) {
			if len(p.Entries) == 0 {
				empty++
			}
		}
		return ints(len(allPlans(ev)), empty)
	}, func(t tally) string {
		s := nOf(t.n[0], "plan", "plans")
		if t.n[1] > 0 {
			s += fmt.Sprintf(" (%d empty)", t.n[1])
		}
		return s + ", entries always an array"
	}}
}

// The words of a pass of the checks of session/load.

// seenLoadCap: the words of a pass of TW-LOAD-CAP-1.
func seenLoadCap() seenRule {
	return seenRule{func(ev *Evidence) tally {
		w := "agentCapabilities.loadSession: true"
		if ev.v2() {
			w = "capabilities.session (session/resume)"
		}
		return tally{n: []int{1}, words: []string{w}}
	},
		func(t tally) string {
			return nOf(t.n[0], "initialize answer", "initialize answers") + " with " + t.words[0]
		}}
}

// withLoadWord adds the request a load step sent (Evidence.loadMethod)
// to count's tally as its first word.
func withLoadWord(count func(*Evidence) tally) func(*Evidence) tally {
	return func(ev *Evidence) tally {
		t := count(ev)
		t.words = append([]string{ev.loadMethod()}, t.words...)
		return t
	}
}

// seenLoadBefore: the words of a pass of TW-LOAD-1.
func seenLoadBefore() seenRule {
	return seenRule{withLoadWord(func(ev *Evidence) tally { return ints(ev.stepsDone(driver.OpLoadSession), ev.loadPlans(true)) }),
		func(t tally) string {
			return nOf(t.n[0], t.words[0], t.words[0]+"s") + " replayed " + nOf(t.n[1], "plan", "plans") + " before the answer"
		}}
}

// seenLoadLast: the words of a pass of TW-LOAD-2.
func seenLoadLast() seenRule {
	return seenRule{withLoadWord(func(ev *Evidence) tally { return ints(ev.stepsDone(driver.OpLoadSession), ev.loadPlans(false)) }),
		func(t tally) string {
			return nOf(t.n[0], t.words[0], t.words[0]+"s") + " replayed " + nOf(t.n[1], "plan", "plans") + ", ending on the last list accepted before the restart"
		}}
}

// seenFinal counts the prompt ends and the loads where the client must
// hold a list.
func seenFinal(ev *Evidence) tally {
	ws := ev.writes()
	var prompts, loads int
	for _, pt := range finalStates(ev) {
		switch want, unknown := lastAcceptedBy(ws, pt); {
		case want == nil || unknown != "":
		case pt.what == "session/load":
			loads++
		default:
			prompts++
		}
	}
	return ints(prompts, loads)
}

// acceptedLists counts the writes of a list the agent accepted.
func (ev *Evidence) acceptedLists() int {
	n := 0
	for _, w := range ev.writes() {
		if w.Accepted && w.Shaped {
			n++
		}
	}
	return n
}

// refusedCalls counts the scripted calls the agent refused.
func (ev *Evidence) refusedCalls() int {
	n := 0
	for _, w := range ev.writes() {
		if w.Refused {
			n++
		}
	}
	return n
}

// loadPlans counts the plans a load replayed (before: only those before
// its answer).
func (ev *Evidence) loadPlans(before bool) int {
	n := 0
	for _, p := range ev.plans() {
		if p.Segment == "load" && !(before && p.AfterResponse) {
			n++
		}
	}
	return n
}

// exitedOnClose counts the agent processes that exited once their stdin
// closed.
func (ev *Evidence) exitedOnClose() int {
	n := 0
	for _, p := range ev.Procs {
		if strings.HasPrefix(p.Shutdown, "exited after stdin closed") {
			n++
		}
	}
	return n
}
