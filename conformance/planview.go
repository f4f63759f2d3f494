package conformance

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/todoharness/todoharness/driver"
)

// PlanView is one plan update the agent sent beside the list the
// contract expected it to show (the HTML report draws it as two
// checklists). Expected is nil when no list was expected; Note says which
// call the plan shows or follows; Differs is set when an item differs.
type PlanView struct {
	Shown, Expected []PlanItem
	Note            string
	Differs         bool
}

// PlanItem is one item of a PlanView's list; Diff marks an item that
// differs from the other list's item at its place.
type PlanItem struct {
	Content, Status string
	Diff, Done      bool
}

// PlanViews draws each plan update of the case as a PlanView, by wire
// seq (empty when the evidence has no case).
func (ev *Evidence) PlanViews() map[int]*PlanView {
	out := map[int]*PlanView{}
	if ev.Case == nil {
		return out
	}
	pm := newPlanMatch(ev.match())
	restart := ev.promptsBeforeRestart()
	for _, p := range ev.plans() {
		hp := &PlanView{}
		var want []Todo
		known := false
		switch p.Segment {
		case "prompt":
			want, known, hp.Note = pm.expected(p)
		case "load":
			want, known, hp.Note = pm.replayed(restart)
			if p.AfterResponse {
				hp.Note += " (sent after the load's answer)"
			}
		}
		switch {
		case p.Missing:
			hp.Note = strings.TrimSpace(hp.Note + " — entries missing")
		case p.Null:
			hp.Note = strings.TrimSpace(hp.Note + " — entries null")
		case p.Bad != "":
			hp.Note = strings.TrimSpace(hp.Note + " — entries unreadable: " + p.Bad)
		}
		hp.compare(p, want, known)
		out[p.Seq] = hp
	}
	return out
}

// compare fills the two lists of the view: the entries plan p shows and,
// when known, the list want it should show, marking the differences.
func (hp *PlanView) compare(p planObs, want []Todo, known bool) {
	for k, e := range p.Entries {
		it := PlanItem{Content: e.Content, Status: e.Status, Done: e.Status == "completed"}
		if known && (k >= len(want) || want[k].Content != e.Content || want[k].Status != e.Status) {
			it.Diff, hp.Differs = true, true
		}
		hp.Shown = append(hp.Shown, it)
	}
	for k, t := range want {
		it := PlanItem{Content: t.Content, Status: t.Status, Done: t.Status == "completed"}
		if k >= len(p.Entries) || p.Entries[k].Content != t.Content || p.Entries[k].Status != t.Status {
			it.Diff, hp.Differs = true, true
		}
		hp.Expected = append(hp.Expected, it)
	}
	if !known {
		hp.Expected = nil
	}
}

// planMatch is a matching indexed by plan: the write each prompt plan
// shows, and the write it follows.
type planMatch struct {
	matching
	byPlan map[int]int // index in plans -> write shown
	sentBy map[int]int // attributed: plan -> the call it follows
}

func newPlanMatch(m matching) planMatch {
	pm := planMatch{matching: m, byPlan: map[int]int{}, sentBy: map[int]int{}}
	for i, j := range m.planOf {
		if j >= 0 {
			pm.byPlan[j] = i
		}
	}
	for i, js := range m.sent {
		for _, j := range js {
			pm.sentBy[j] = i
		}
	}
	return pm
}

// expected is the list prompt plan p should show, whether one is known,
// and the view's note.
func (pm planMatch) expected(p planObs) (want []Todo, known bool, note string) {
	j := -1
	for k := range pm.plans {
		if pm.plans[k].Seq == p.Seq {
			j = k
		}
	}
	if i, ok := pm.byPlan[j]; ok {
		return pm.writes[i].Todos, true, "shows call " + pm.writes[i].CallID
	}
	if i, ok := pm.sentBy[j]; ok {
		w := pm.writes[i]
		switch {
		case w.Refused:
			want, known, unknown := pm.previousAccepted(i)
			if unknown != "" {
				return nil, false, "follows call " + w.CallID + ", which was refused; " + unknown
			}
			return want, known, "follows call " + w.CallID + ", which was refused: no plan was expected for it"
		case w.Unknown != "":
			return nil, false, "follows call " + w.CallID + ": " + w.Unknown
		case w.Shaped:
			return w.Todos, true, "follows call " + w.CallID
		}
		return nil, false, ""
	}
	for i, w := range pm.writes {
		if w.Prompt == p.Prompt && w.Accepted && w.Shaped && pm.planOf[i] < 0 {
			return w.Todos, true, "no accepted call's list matches; nearest: call " + w.CallID
		}
	}
	return nil, false, "no accepted call of this prompt is left to show"
}

// replayed is the list a load should replay: the last list accepted
// before the restart.
func (pm planMatch) replayed(restart int) (want []Todo, known bool, note string) {
	for i := len(pm.writes) - 1; i >= 0; i-- {
		w := pm.writes[i]
		if w.Prompt < restart && w.Accepted && w.Shaped {
			return w.Todos, true, "replayed by session/load: the last accepted list, call " + w.CallID
		}
	}
	return nil, false, ""
}

// MissingPlan is an accepted write no plan update shows: the list a plan
// should have shown (View: no entries shown, the expected list), for the
// report to draw where the call was made (its script turn).
type MissingPlan struct {
	CallID string
	Turn   int
	View   *PlanView
}

// MissingPlans lists the accepted writes of the case that no plan update
// shows (nil when the evidence has no case).
func (ev *Evidence) MissingPlans() []MissingPlan {
	if ev.Case == nil {
		return nil
	}
	m := ev.match()
	var out []MissingPlan
	for i, w := range m.writes {
		if !w.Accepted || !w.Shaped || m.planOf[i] >= 0 {
			continue
		}
		hp := &PlanView{Note: "no plan update shows the list of " + w.CallID + ", which the agent accepted"}
		hp.compare(planObs{}, w.Todos, true)
		out = append(out, MissingPlan{CallID: w.CallID, Turn: w.Turn, View: hp})
	}
	return out
}

// The plan surface: which session/update is the todo list's plan depends
// on the protocol version the process negotiated and what the client
// advertised. Every plan check reads plans through planFields (one check,
// two surfaces); planSurfaceProblems says what the surface forbids.

// planFields reads a plan update as the client sees it on the surface of
// process proc: the fields holding its entries, its planId ("" for a v1
// plan), and whether it is the todo list's plan at all. A v1 `plan` is
// the plan on protocol version 1; a `plan_update` of type items is on
// version 2, and on version 1 when the client advertised
// clientCapabilities.plan (driver.Offer.PlanOps). Anything else (a `plan`
// on v2, a plan_update the client did not ask for, a plan of another type)
// shows the client no todo list: planSurfaceProblems reports it.
func (ev *Evidence) planFields(kind string, update map[string]json.RawMessage, proc int) (fields map[string]json.RawMessage, planID string, ok bool) {
	v2 := ev.version(proc) == driver.ACPv2
	switch kind {
	case "plan":
		return update, "", !v2
	case "plan_update":
		if !v2 && !ev.Offer.PlanOps {
			return nil, "", false
		}
		var plan map[string]json.RawMessage
		if json.Unmarshal(update["plan"], &plan) != nil {
			return nil, "", false
		}
		var typ string
		_ = json.Unmarshal(plan["type"], &typ)
		_ = json.Unmarshal(plan["planId"], &planID)
		return plan, planID, typ == "items"
	}
	return nil, "", false
}

// planOp is a plan update of any kind the agent sent for the case's
// sessions (plan, plan_update, plan_removed): what the surface rules read.
type planOp struct {
	seq, proc int
	kind      string
	planID    string
	typ       string // plan_update: the plan's type
}

// planOps lists the plan updates of the wire, those for another session
// left out (ACP-SESSION-1's).
func (ev *Evidence) planOps() []planOp {
	foreign := ev.updateSessions().foreign
	var out []planOp
	for _, m := range ev.Wire {
		kind := m.UpdateKind()
		if foreign[m.Seq] || m.Dir != driver.Received || m.Kind != driver.KindNotification ||
			(kind != "plan" && kind != "plan_update" && kind != "plan_removed") {
			continue
		}
		var n struct {
			Params struct {
				Update struct {
					PlanID string `json:"planId"`
					Plan   struct {
						Type   string `json:"type"`
						PlanID string `json:"planId"`
					} `json:"plan"`
				} `json:"update"`
			} `json:"params"`
		}
		_ = json.Unmarshal([]byte(m.Line), &n)
		u := n.Params.Update
		op := planOp{seq: m.Seq, proc: m.Proc, kind: kind, planID: u.PlanID}
		if kind == "plan_update" {
			op.planID, op.typ = u.Plan.PlanID, u.Plan.Type
		}
		out = append(out, op)
	}
	return out
}

// planSurfaceProblems are the failures of the todo list's plan on the
// identified surface (v2, or v1 with clientCapabilities.plan), each with
// what the contract expects: the list is one plan, the plan_update items
// of one planId, replaced whole by each write and never removed. A `plan`
// on a v2 connection is reported too (v2 has no such update). On plain v1
// they are ACP-PLAN-FALLBACK-1's, not these.
func (ev *Evidence) planSurfaceProblems() []verdict {
	var out []verdict
	first := ""
	for _, op := range ev.planOps() {
		v2 := ev.version(op.proc) == driver.ACPv2
		if !v2 && !ev.Offer.PlanOps {
			continue
		}
		switch {
		case op.kind == "plan" && v2:
			out = append(out, failf("#%d is a v1 `plan` update on a protocol version 2 connection, where v2 replaced it by plan_update: a v2 client shows no list from it; send the list as plan_update {type: items, planId, entries}", op.seq).
				at(op.seq, "a v1 plan update on v2"))
		case op.kind == "plan_removed":
			out = append(out, failf("plan_removed (#%d) removes plan %q: the contract never removes the todo list (an empty list is a plan_update with no entries), and a client shows none after it", op.seq, driver.Truncate(op.planID, 80)).
				at(op.seq, "plan_removed of the todo list"))
		case op.kind != "plan_update" || op.typ != "items":
		case first == "":
			first = op.planID
		case op.planID != first:
			out = append(out, failf("plan_update #%d is under planId %q, the todo list's earlier plan_update under %q: the contract expects one plan, its planId kept across writes (each write replaces that plan's entries); a client shows a second plan beside the first", op.seq, driver.Truncate(op.planID, 80), driver.Truncate(first, 80)).
				at(op.seq, fmt.Sprintf("planId %q, not the todo list's %q", driver.Truncate(op.planID, 80), driver.Truncate(first, 80))))
		}
	}
	return out
}
