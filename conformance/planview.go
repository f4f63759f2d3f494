package conformance

import "strings"

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
