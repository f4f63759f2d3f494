package conformance

import (
	"cmp"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/mockmodel"
)

// The evaluations behind the catalogue. Each reads one case's evidence.

func evalRun(ev *Evidence) verdict {
	if ev.Aborted != "" {
		v := failf("%s", ev.Aborted)
		if len(ev.Procs) > 0 {
			// What the stderr says went wrong, not the last lines of a
			// stack trace.
			if tail := driver.StderrGist(ev.Procs[len(ev.Procs)-1].Stderr, 3); len(tail) > 0 {
				for i, l := range tail {
					tail[i] = strings.TrimSpace(l)
				}
				v.Reason += "; stderr: " + strings.Join(tail, " | ")
			}
		}
		return v
	}
	for _, p := range ev.Procs {
		if p.ExitedEarly {
			return failf("agent process %d exited (%s) before the client closed its stdin", p.Index+1, p.Exit)
		}
	}
	if len(ev.ModelErrors) > 0 {
		return failf("the model conversation left the case's script: %s", ev.ModelErrors[0])
	}
	return pass()
}

func evalInit(ev *Evidence) verdict {
	n := 0
	for _, s := range ev.Steps {
		if s.Op != driver.OpInitialize {
			continue
		}
		n++
		if s.Error != "" {
			return failf("initialize (process %d): %s", s.Proc+1, s.Error)
		}
		var ir struct {
			ProtocolVersion *int `json:"protocolVersion"`
		}
		if err := json.Unmarshal(s.Result, &ir); err != nil || ir.ProtocolVersion == nil {
			return failf("initialize (process %d) answered without protocolVersion: %s", s.Proc+1, driver.Truncate(string(s.Result), 160)).at(s.RespSeq, "no protocolVersion")
		}
		// The version offered, or the agent's latest below it: an agent
		// offered 2 that speaks only 1 answers 1 (not a failure).
		offered, got := ev.Offer.Version(), *ir.ProtocolVersion
		if got != offered && (got < driver.ACPv1 || got > offered) {
			want := fmt.Sprint(offered)
			if offered > driver.ACPv1 {
				want = fmt.Sprintf("%d (offered) or, from an agent without it, 1", offered)
			}
			return failf("initialize (process %d) answered protocolVersion %d, want %s", s.Proc+1, got, want).at(s.RespSeq, fmt.Sprintf("protocolVersion %d, want %s", got, want))
		}
	}
	if n == 0 {
		if ev.Aborted != "" {
			return failf("initialize was never answered: %s", ev.Aborted)
		}
		return skipf("the case sent no initialize")
	}
	return pass()
}

func evalJSONRPC(ev *Evidence) verdict {
	var bad []string
	lines := map[int]string{}
	for _, m := range ev.Wire {
		if m.Dir == driver.Received && m.Kind == driver.KindInvalid {
			bad = append(bad, fmt.Sprintf("line %q: %s", driver.Truncate(m.Line, 60), m.Problem))
			lines[m.Seq] = m.Problem
		}
	}
	if len(bad) > 0 {
		v := failf("%d line(s) on stdout are not JSON-RPC 2.0 messages: %s", len(bad), strings.Join(first(bad, 2), "; "))
		v.Lines = lines
		return v
	}
	if len(ev.Wire) == 0 {
		return skipf("nothing on the wire")
	}
	return pass()
}

func evalSchema(ev *Evidence) verdict {
	bad, _, n, ok := schemaProblems(ev)
	return schemaVerdict(bad, n, ok, "%d message(s) invalid: %s")
}

// evalStableSchema reports messages that only the unstable (draft) ACP
// schema accepts, such as usage_update: valid ACP, but from a newer draft
// than protocol version 1. It lists only those; messages both schemas
// reject are ACP-SCHEMA-1's, and leave it unjudged (never passed) when
// they are all there is.
func evalStableSchema(ev *Evidence) verdict {
	bad, draft, n, ok := schemaProblems(ev)
	v := schemaVerdict(draft, n, ok, "%d message(s) valid only against the unstable ACP schema: %s")
	switch {
	case len(bad) > 0 && v.Outcome == Fail:
		v.Reason += fmt.Sprintf(" (and %d invalid against both: see ACP-SCHEMA-1)", len(bad))
	case len(bad) > 0 && v.Outcome == Pass:
		v := skipf("%d message(s) are invalid against the stable and the unstable schema alike (ACP-SCHEMA-1): whether they need the draft does not arise", len(bad))
		v.Blocked = true
		return v
	}
	return v
}

// schemaProblem is one message a schema rejects.
type schemaProblem struct {
	seq  int
	text string // "#12 session/update plan: invalid ..."
	err  string // the validation error alone
}

// schemaVerdict fails with format (count, first problems) when problems is
// not empty, marking each message.
func schemaVerdict(problems []schemaProblem, n int, ok bool, format string) verdict {
	switch {
	case !ok:
		return skipf("no schema validator")
	case len(problems) > 0:
		var texts []string
		for _, p := range problems {
			texts = append(texts, p.text)
		}
		v := failf(format, len(problems), strings.Join(first(texts, 2), "; "))
		for _, p := range problems {
			v = v.at(p.seq, p.err)
		}
		return v
	case n == 0:
		return skipf("the agent sent no message")
	}
	return pass()
}

// schemaProblems validates every message the agent sent: bad are invalid
// against both the stable and the unstable schema, draft are valid only
// against the unstable one; n counts the messages checked.
func schemaProblems(ev *Evidence) (bad, draft []schemaProblem, n int, ok bool) {
	v := ev.validator
	if v == nil {
		return nil, nil, 0, false
	}
	if ev.memo != nil {
		m := &ev.memo.schema
		m.mu.Lock()
		defer m.mu.Unlock()
		if m.v != v || m.wire != len(ev.Wire) {
			m.bad, m.draft, m.n = findSchemaProblems(ev, v)
			m.v, m.wire = v, len(ev.Wire)
		}
		return m.bad, m.draft, m.n, true
	}
	bad, draft, n = findSchemaProblems(ev, v)
	return bad, draft, n, true
}

// findSchemaProblems validates each message the agent sent against the
// schema of the protocol version its process negotiated (v's for 1, the
// v2 draft's for 2).
func findSchemaProblems(ev *Evidence, v1 *driver.SchemaValidator) (bad, draft []schemaProblem, n int) {
	for _, m := range ev.Wire {
		if m.Dir != driver.Received || m.Kind == driver.KindInvalid {
			continue
		}
		n++
		v, err := v1.ForVersion(ev.version(m.Proc))
		if err != nil {
			bad = append(bad, schemaProblem{m.Seq, fmt.Sprintf("#%d: %v", m.Seq, err), err.Error()})
			continue
		}
		err = v.Validate(m, true)
		if err == nil {
			continue
		}
		what := m.Method
		if m.Kind == driver.KindResponse {
			what = "response to " + m.ReplyTo
		}
		if kind := m.UpdateKind(); kind != "" {
			what += " " + kind
		}
		if v.ValidateUnstable(m, true) == nil {
			draft = append(draft, schemaProblem{m.Seq, fmt.Sprintf("#%d %s", m.Seq, what), "valid only against the unstable (draft) ACP schema"})
			continue
		}
		bad = append(bad, schemaProblem{m.Seq, fmt.Sprintf("#%d %s: %v", m.Seq, what, err), err.Error()})
	}
	return bad, draft, n
}

// lateUpdate is a turn update that came after its prompt's answer.
type lateUpdate struct {
	seq  int
	kind string
	gap  time.Duration // after the answer
}

// lateUpdates returns, for each prompt step answered, the turn updates the
// agent sent after the answer and before the runner's next request (the
// runner waits for the wires to settle after every answer). On protocol
// version 2 the turn ends at its idle state_update (the answer only
// acknowledges): the updates after it are the late ones, and a turn
// without one is idleProblems'.
func (ev *Evidence) lateUpdates() (answered int, late map[int][]lateUpdate) {
	late = map[int][]lateUpdate{}
	bySeq := map[int]driver.WireMsg{}
	for _, m := range ev.Wire {
		bySeq[m.Seq] = m
	}
	for k, s := range ev.Steps {
		if s.Op != driver.OpPrompt || s.RespSeq < 0 {
			continue
		}
		resp, ok := bySeq[s.RespSeq]
		if !ok || resp.Kind != driver.KindResponse {
			continue
		}
		if ev.version(s.Proc) == driver.ACPv2 {
			if resp, ok = bySeq[s.IdleSeq]; s.IdleSeq <= 0 || !ok {
				continue
			}
		}
		answered++
		end := -1 // the next request the runner sent (-1: none)
		for _, n := range ev.Steps[k+1:] {
			if n.ReqSeq >= 0 {
				end = n.ReqSeq
				break
			}
		}
		for _, m := range ev.Wire {
			if m.Seq <= resp.Seq || (end >= 0 && m.Seq >= end) || m.Proc != resp.Proc {
				continue
			}
			if m.Dir != driver.Received || m.Kind != driver.KindNotification {
				continue
			}
			if kind := m.UpdateKind(); driver.TurnUpdate(kind) {
				late[s.Prompt] = append(late[s.Prompt], lateUpdate{seq: m.Seq, kind: kind, gap: m.Time.Sub(resp.Time)})
			}
		}
	}
	return answered, late
}

// idleProblems are the v2 prompt turns that did not end as v2 ends a
// turn: with an idle state_update carrying its stopReason, cancelled when
// the client cancelled the turn before it.
func (ev *Evidence) idleProblems() []verdict {
	var out []verdict
	for _, s := range ev.Steps {
		if s.Op != driver.OpPrompt || s.RespSeq < 0 || s.Error != "" || ev.version(s.Proc) != driver.ACPv2 {
			continue
		}
		switch {
		case s.IdleSeq <= 0:
			out = append(out, failf("prompt %d: no idle state_update ended the turn (%s); on protocol version 2 the session/prompt answer only acknowledges the prompt, and the agent MUST report idle, with the stopReason, when the turn ends", s.Prompt+1, cmp.Or(s.NoIdle, "none on the wire")).
				at(s.RespSeq, "the prompt's acknowledgment; no idle state_update followed"))
		case s.StopReason == "":
			out = append(out, failf("prompt %d: the idle state_update #%d that ended the turn has no stopReason; when idle ends foreground work it MUST carry one (end_turn, cancelled, ...)", s.Prompt+1, s.IdleSeq).
				at(s.IdleSeq, "idle without a stopReason"))
		case ev.cancelSent(s) && s.CancelSeq < s.IdleSeq && s.StopReason != "cancelled":
			out = append(out, failf("prompt %d: the client cancelled the turn (#%d), and its idle state_update #%d says stopReason %q; a cancelled turn MUST end idle with stopReason \"cancelled\"", s.Prompt+1, s.CancelSeq, s.IdleSeq, driver.Truncate(s.StopReason, 60)).
				at(s.IdleSeq, fmt.Sprintf("stopReason %q after session/cancel, want \"cancelled\"", driver.Truncate(s.StopReason, 60))))
		}
	}
	return out
}

func evalTurnEnd(ev *Evidence) verdict {
	answered, late := ev.lateUpdates()
	idle := ev.idleProblems()
	if answered == 0 && len(idle) == 0 {
		return skipf("no prompt was answered")
	}
	if len(late) == 0 {
		var fs failures
		for _, v := range idle {
			fs.add(v)
		}
		return fs.orElse(pass())
	}
	prompts := make([]int, 0, len(late))
	for p := range late {
		prompts = append(prompts, p)
	}
	sort.Ints(prompts)
	var parts []string
	v := verdict{Outcome: Fail}
	end := "session/prompt answer"
	if ev.v2() {
		end = "idle state_update"
	}
	for _, p := range prompts {
		us := late[p]
		var kinds []string
		seen := map[string]bool{}
		for _, u := range us {
			if !seen[u.kind] {
				seen[u.kind] = true
				kinds = append(kinds, u.kind)
			}
			v = v.at(u.seq, fmt.Sprintf("a %s of prompt %d, %s after its %s", u.kind, p+1, u.gap.Round(time.Millisecond), end))
		}
		parts = append(parts, fmt.Sprintf("prompt %d: %d update(s) of the turn (%s) came after its %s, from %s to %s after it",
			p+1, len(us), strings.Join(kinds, ", "), end, us[0].gap.Round(time.Millisecond), us[len(us)-1].gap.Round(time.Millisecond)))
	}
	v.Reason = strings.Join(parts, "; ") + "; an editor takes the answer as the end of the turn: send every update of the turn before answering"
	if ev.v2() {
		v.Reason = strings.Join(parts, "; ") + "; an editor takes the idle state_update as the end of the turn: send every update of the turn before reporting idle"
	}
	var fs failures
	for _, f := range idle {
		fs.add(f)
	}
	fs.add(v)
	return fs.v
}

// evalPlanFallback judges ACP-PLAN-FALLBACK-1: on protocol version 1
// without clientCapabilities.plan, no plan_update or plan_removed.
func evalPlanFallback(ev *Evidence) verdict {
	switch {
	case ev.v2():
		return naf("protocol version 2 has no plan capability to fall back from: plan_update is its plan (TW-PLAN-1 judges its planId)")
	case ev.Offer.PlanOps:
		return naf("the client advertised clientCapabilities.plan: the agent may send plan_update and plan_removed (TW-PLAN-1 judges them)")
	}
	ops := ev.planOps()
	if len(ops) == 0 { // nothing the rule speaks of was sent: not a pass
		return naf("the agent sent no plan, plan_update or plan_removed in this case")
	}
	var fs failures
	for _, op := range ops {
		if ev.version(op.proc) != driver.ACPv1 || op.kind == "plan" {
			continue
		}
		fs.add(failf("#%d is a %s sent to a client that did not advertise clientCapabilities.plan: the agent must fall back to the plan update, the only one such a client shows", op.seq, op.kind).
			at(op.seq, op.kind+" to a client without clientCapabilities.plan"))
	}
	return fs.orElse(pass())
}

func evalTool(ev *Evidence) verdict {
	_, names, ok := ev.offeredTool()
	if len(ev.Journal) == 0 {
		return failf("the agent never called the mock model (wire it with {{.BaseURL}} or --env)")
	}
	if !ok {
		return failf("no model request offers a %q tool (%d request(s)); tools offered: %v", ev.Dialect.Tool, len(ev.Journal), names)
	}
	return pass()
}

// offeredSchema parses the parameters of the todo tool the model was
// offered; the verdict is set when there is none to read.
func (ev *Evidence) offeredSchema() (driver.ToolSchema, *verdict) {
	spec, _, ok := ev.offeredTool()
	if !ok {
		v := skipf("the %s tool was not offered (see TW-TOOL-1)", ev.Dialect.Tool)
		return driver.ToolSchema{}, &v
	}
	s, err := driver.ParseToolSchema(spec.Parameters)
	if err != nil {
		v := failf("%v", err)
		return s, &v
	}
	return s, nil
}

func evalSchemaShape(ev *Evidence) verdict {
	s, bad := ev.offeredSchema()
	if bad != nil {
		return *bad
	}
	d := ev.Dialect
	switch {
	case !s.HasType("object"):
		return failf("parameters type is %v, want object", s.Type)
	case !s.Requires(d.ListField):
		return failf("parameters.required is %v, want it to include %q", s.Required, d.ListField)
	}
	list, ok := s.Properties[d.ListField]
	switch {
	case !ok:
		return failf("no %q property", d.ListField)
	case !list.HasType("array"):
		return failf("%s type is %v, want array", d.ListField, list.Type)
	case list.Items == nil:
		return failf("%s has no items schema", d.ListField)
	case !list.Items.HasType("object"):
		return failf("%s items type is %v, want object", d.ListField, list.Items.Type)
	}
	item := *list.Items
	for _, f := range []string{d.ContentField, d.StatusField} {
		if !item.Requires(f) {
			return failf("%s items required is %v, want it to include %q", d.ListField, item.Required, f)
		}
	}
	if c, ok := item.Properties[d.ContentField]; !ok || !c.HasType("string") {
		return failf("%s items: %q must be a string property", d.ListField, d.ContentField)
	}
	return pass()
}

// statusTriple is the ACP PlanEntryStatus triple, sorted.
func statusTriple() []string { return []string{"completed", "in_progress", "pending"} }

func evalStatusEnum(ev *Evidence) verdict {
	s, bad := ev.offeredSchema()
	if bad != nil {
		return *bad
	}
	d := ev.Dialect
	list, ok := s.Properties[d.ListField]
	if !ok || list.Items == nil {
		return failf("no %s items schema", d.ListField)
	}
	st, ok := list.Items.Properties[d.StatusField]
	if !ok {
		return failf("%s items have no %q property", d.ListField, d.StatusField)
	}
	if len(st.Enum) == 0 {
		return failf("%s is a free %s (no enum); the contract wants an enum of the three values %s", d.StatusField, schemaTypeName(st), strings.Join(statusTriple(), ", "))
	}
	var got []string
	for _, e := range st.Enum {
		got = append(got, fmt.Sprint(e))
	}
	sort.Strings(got)
	for _, w := range statusTriple() {
		if !slices.Contains(got, w) {
			return failf("%s enum is %v, missing %q", d.StatusField, got, w)
		}
	}
	if d.Name == driver.DialectTodoWrite && len(got) != len(statusTriple()) {
		return failf("status enum is %v, want exactly %v", got, statusTriple())
	}
	return pass()
}

// schemaTypeName names a property's declared type for a reader ("string",
// "string or null", "value of any type" when it declares none).
func schemaTypeName(s driver.ToolSchema) string {
	switch t := s.Type.(type) {
	case string:
		return t
	case []any:
		var names []string
		for _, x := range t {
			names = append(names, fmt.Sprint(x))
		}
		return strings.Join(names, " or ")
	}
	return "value of any type"
}

func evalReplace(ev *Evidence) verdict {
	m := ev.match()
	n := 0
	v := judgeEach(m.writes, func(w writeObs) bool { return w.Accepted && w.Shaped }, func(fs *failures, i int, w writeObs) {
		if n++; n > 1 && m.planOf[i] < 0 {
			fs.add(failf("after %s (%s) no plan shows exactly the new list%s", w.CallID, todosString(w.Todos), shownAfter(m, i)))
		}
	}, "")
	if n < 2 {
		return orUnknown(skipf("needs two accepted writes, saw %d", n), m.writes, func(w writeObs) bool { return w.Shaped })
	}
	return v
}

// shownAfter describes what the client was shown instead of write i's
// list: the writes of its prompt coalesced into a later one's plan, or the
// plans of its prompt tied to no write or repeating a write's list.
func shownAfter(m matching, i int) string {
	if k := m.coalesced(i); k >= 0 {
		return fmt.Sprintf(": the agent coalesced the writes %s to %s of prompt %d into one plan update (#%d shows %s's list); send one plan update per accepted write",
			m.writes[i].CallID, m.writes[k].CallID, m.writes[i].Prompt+1, m.plans[m.planOf[k]].Seq, m.writes[k].CallID)
	}
	w := m.writes[i]
	for j, p := range m.plans {
		if !m.matched[j] && p.Prompt == w.Prompt && sameList(p.todos(), w.Todos) {
			return fmt.Sprintf(" in order: #%d shows its list only after a later write's plan (the plans of prompt %d came out of order; send them in the order of the writes)", p.Seq, w.Prompt+1)
		}
	}
	shownFirst := map[int]bool{} // the plans that show a write's list first (not a repeat)
	for _, j := range m.planOf {
		shownFirst[j] = true
	}
	var shown []string
	for j, p := range m.plans {
		if p.Prompt == w.Prompt && (!m.matched[j] || !shownFirst[j]) {
			s, _ := planVs(p, w.Todos)
			shown = append(shown, fmt.Sprintf("#%d %s (%s)", p.Seq, s, m.ties[j].Why))
		}
	}
	if len(shown) == 0 {
		return " (no plan update of its prompt shows it)"
	}
	return "; plans shown instead: " + strings.Join(first(shown, 2), ", ")
}

// planString renders a plan's entries, saying when they are null/missing.
func planString(p planObs) string { return planFrom(p, 0) }

// planFrom is planString, a long list shown from item at (todosFrom).
func planFrom(p planObs, at int) string {
	switch {
	case p.Null:
		return "entries null"
	case p.Missing:
		return "no entries"
	}
	return todosFrom(p.todos(), at)
}

// planVs writes plan p and the list want it is compared with, each long
// one shown where they first differ.
func planVs(p planObs, want []Todo) (string, string) {
	at := firstDiff(p.todos(), want)
	return planFrom(p, at), todosFrom(want, at)
}

func evalEmpty(ev *Evidence) verdict {
	m := ev.match()
	empty := func(w writeObs) bool { return w.Shaped && len(w.Todos) == 0 && !w.Reject }
	v := judgeEach(m.writes, func(w writeObs) bool { return empty(w) && w.Unknown == "" }, func(fs *failures, i int, w writeObs) {
		switch {
		case w.Refused:
			fs.add(failf("the empty list (%s) was rejected (%s): %q", w.CallID, w.By, driver.Truncate(w.Result.Text, 120)))
		case m.planOf[i] < 0:
			fs.add(failf("after the empty list (%s) no plan with zero entries was sent%s", w.CallID, shownAfter(m, i)))
		}
	}, "the case writes no empty list")
	return orUnknown(v, m.writes, empty)
}

func evalRejected(ev *Evidence) verdict {
	m := ev.match()
	v := judgeEach(m.writes, func(w writeObs) bool { return w.Reject && w.Unknown == "" }, func(fs *failures, i int, _ writeObs) {
		if v := rejectedCall(ev, m, i); v.Outcome == Fail {
			fs.add(v)
		}
	}, "the case has no call to reject")
	return orUnknown(v, m.writes, func(w writeObs) bool { return w.Reject })
}

// rejectedCall judges one call the case requires the agent to refuse.
func rejectedCall(ev *Evidence, m matching, i int) verdict {
	w := m.writes[i]
	switch {
	case !w.Result.Found:
		return failf("the model never saw a result for the rejected call %s (no later model request carries it)", w.CallID)
	case !w.Result.IsError:
		seen := fmt.Sprintf("%s was accepted: the model saw a result without the error flag: %q", w.CallID, driver.Truncate(w.Result.Text, 120))
		if w.Refused {
			seen = fmt.Sprintf("%s was refused (%s), but the model saw a result without the error flag: %q", w.CallID, w.By, driver.Truncate(w.Result.Text, 120))
		}
		wire := ev.flaglessWire(w.Result)
		switch {
		case wire != "" && (w.Refused || readsAsRefusal(w.Result.Text)):
			// A refusal in words only: the fix is its first word.
			return failf("%s; on %s a tool result carries no error flag: it counts as an error only when its text starts with %q (start the refusal with it)", seen, wire, mockmodel.ToolErrorPrefix)
		case wire != "":
			return failf("%s; refuse such a call: answer it with an error result (on %s a tool result carries no error flag: it counts as an error only when its text starts with %q) and send no plan", seen, wire, mockmodel.ToolErrorPrefix)
		}
		return failf("%s; refuse such a call: answer it with an error result and send no plan", seen)
	}
	if g := m.gap(i); len(g) > 0 {
		return failf("%s was rejected but a plan update followed it: %s", w.CallID, planString(g[0])).at(g[0].Seq, "a plan update for the rejected call "+w.CallID)
	}
	return pass()
}

func evalRejectKeep(ev *Evidence) verdict {
	m := ev.match()
	unsure, judged := "", 0
	v := judgeEach(m.writes, func(w writeObs) bool { return w.Refused }, func(fs *failures, i int, w writeObs) {
		prev, ok, unknown := m.previousAccepted(i)
		if len(m.plans) == 0 {
			// No plan at all: that none changed after the call is not
			// something the agent showed.
			unsure = fmt.Sprintf("the agent showed no plan update in this case, so whether the plan stood after the refused call %s cannot be seen", w.CallID)
			return
		}
		if g := m.gap(i); len(g) > 0 && unknown != "" {
			// Which list stood before the call cannot be told.
			unsure = unknown
			return
		}
		judged++
		for _, p := range m.gap(i) {
			if !ok {
				fs.add(failf("after the rejected call %s (no list before it) a plan was shown: %s", w.CallID, todosString(p.todos())).at(p.Seq, "a plan update for the rejected call "+w.CallID))
				break
			}
			if !sameList(p.todos(), prev) {
				shown, prevS := planVs(p, prev)
				fs.add(failf("after the rejected call %s the plan changed to %s; the previous list %s should stand", w.CallID, shown, prevS).at(p.Seq, "a plan update for the rejected call "+w.CallID))
				break
			}
		}
	}, "the agent refused no call in this case")
	if v.Outcome == Pass && judged == 0 {
		return skipf("%s", unsure)
	}
	return orUnknown(v, m.writes, nil)
}

// acceptedWithResult admits the accepted writes of a list whose result
// the model saw.
func acceptedWithResult(w writeObs) bool { return w.Accepted && w.Shaped && w.Result.Found }

var (
	reCountPending    = regexp.MustCompile(`(?i)(\d+)\s+pending`)
	reCountInProgress = regexp.MustCompile(`(?i)(\d+)\s+in[ _-]?progress`)
	reCountCompleted  = regexp.MustCompile(`(?i)(\d+)\s+(?:completed|done)`)
)

func counts(ts []Todo) (p, i, c int) {
	for _, t := range ts {
		switch t.Status {
		case "pending":
			p++
		case "in_progress":
			i++
		case "completed":
			c++
		}
	}
	return
}

func evalCounts(ev *Evidence) verdict {
	return judgeEach(ev.writes(), acceptedWithResult, func(fs *failures, _ int, w writeObs) {
		p, i, c := counts(w.Todos)
		for _, x := range []struct {
			re   *regexp.Regexp
			name string
			want int
		}{{reCountPending, "pending", p}, {reCountInProgress, "in progress", i}, {reCountCompleted, "completed", c}} {
			mm := x.re.FindStringSubmatch(w.Result.Text)
			if mm == nil {
				fs.add(failf("%s: the result %q does not report the %s count", w.CallID, driver.Truncate(w.Result.Text, 120), x.name))
				break
			}
			if got, _ := strconv.Atoi(mm[1]); got != x.want {
				fs.add(failf("%s: the result %q reports %d %s, the list has %d", w.CallID, driver.Truncate(w.Result.Text, 120), got, x.name, x.want))
				break
			}
		}
	}, "no accepted write with a result the model saw")
}

func evalCountsText(ev *Evidence) verdict {
	return judgeEach(ev.writes(), acceptedWithResult, func(fs *failures, _ int, w writeObs) {
		p, i, c := counts(w.Todos)
		want := fmt.Sprintf("Updated todo list: %d pending, %d in progress, %d completed.", p, i, c)
		if w.Result.Text != want {
			fs.add(failf("%s: result %q, the original says %q", w.CallID, driver.Truncate(w.Result.Text, 120), want))
		}
	}, "no accepted write with a result the model saw")
}

// listMarkers are the item contents a leaked list would show.
func listMarkers(ws []Write) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range ws {
		for _, t := range w.Todos {
			if len(t.Content) >= 6 && !seen[t.Content] {
				seen[t.Content] = true
				out = append(out, t.Content)
			}
		}
	}
	return out
}

func evalHistory(ev *Evidence) verdict {
	markers := listMarkers(ev.Writes)
	if len(markers) == 0 {
		return skipf("the case writes no list")
	}
	if len(ev.Journal) == 0 {
		return skipf("no model request")
	}
	// The prompts must not mention the items themselves.
	for _, s := range ev.Case.Steps {
		for _, mk := range markers {
			if strings.Contains(s.Text, mk) {
				return skipf("the case's prompt mentions %q: cannot tell", mk)
			}
		}
	}
	refused := map[string]bool{} // results of refused calls, or of calls whose verdict is unknown
	for _, w := range ev.writes() {
		if w.Result.IsError || w.Refused || w.Unknown != "" {
			refused[w.CallID] = true
		}
	}
	var fs failures
	leaked := map[string]bool{}
	for _, e := range ev.Journal {
		texts := []struct{ where, text string }{{"system prompt", e.System}}
		for mi, msg := range e.Messages {
			if msg.Role == llm.RoleTool && (msg.IsError || refused[msg.ToolCallID]) {
				continue // error results may quote the offending item
			}
			for _, part := range msg.Content {
				if part.Type == llm.PartToolCall {
					continue // the call's own arguments carry the list: fine
				}
				where := fmt.Sprintf("message %d (%s)", mi+1, msg.Role)
				if msg.Role == llm.RoleTool && msg.ToolCallID != "" {
					where = fmt.Sprintf("message %d (%s, the result of %s)", mi+1, msg.Role, msg.ToolCallID)
				}
				texts = append(texts, struct{ where, text string }{where, part.Text})
			}
		}
		for _, t := range texts {
			for _, mk := range markers {
				if strings.Contains(t.text, mk) && !leaked[t.where] {
					leaked[t.where] = true // later requests repeat the same message
					fs.add(failf("model request %d: %s carries the list item %q: %q; the tool result reports only the counts, the list travels in the call alone", e.Index+1, t.where, mk, driver.Truncate(t.text, 120)))
					break
				}
			}
		}
	}
	return fs.orElse(pass())
}

func evalHistoryCall(ev *Evidence) verdict {
	return judgeEach(ev.writes(), func(w writeObs) bool { return w.Result.Found }, func(fs *failures, _ int, w writeObs) {
		want, ok := ev.translatedArgs(w.CallID)
		if !ok {
			return
		}
		e := ev.Journal[w.Result.Request]
		found := false
		for _, msg := range e.Messages {
			for _, tc := range msg.ToolCalls() {
				if tc.ID != w.CallID {
					continue
				}
				found = true
				if !jsonEqual(tc.Arguments, want) {
					fs.add(failf("model request %d: the call %s has arguments %s, the model sent %s", e.Index+1, w.CallID, driver.Truncate(tc.Arguments, 100), driver.Truncate(caseJSON(want), 100)))
				}
			}
		}
		if !found {
			fs.add(failf("model request %d carries the result of %s but not the call itself", e.Index+1, w.CallID))
		}
	}, "no write whose result the model saw")
}

func evalPlan(ev *Evidence) verdict {
	m := ev.match()
	if !ev.toolOffered() {
		// No plan can be tied to a call of the agent's own todo tool.
		return orUnknown(skipf("no write in this case"), m.writes, nil)
	}
	accepted := 0
	var fs failures
	for i, w := range m.writes {
		if !w.Accepted {
			continue
		}
		accepted++
		switch {
		case !w.Shaped:
			fs.add(failf("%s was accepted although its arguments are not a list of {content, status}", w.CallID))
		case m.planOf[i] < 0:
			fs.add(failf("no plan update shows %s (%s)%s", w.CallID, todosString(w.Todos), shownAfter(m, i)))
		case len(m.sent[i]) > 1:
			v := failf("%d plan updates for the one write %s", len(m.sent[i]), w.CallID)
			for _, j := range m.sent[i][1:] {
				v = v.at(m.plans[j].Seq, "a repeated plan update for "+w.CallID)
			}
			fs.add(v)
		}
	}
	for j, p := range m.plans {
		if !m.matched[j] {
			fs.add(failf("a plan update (prompt %d, #%d) shows %s: %s", p.Prompt+1, p.Seq, planString(p), m.ties[j].Why).at(p.Seq, "a plan update no accepted write explains"))
		}
	}
	surface := ev.planSurfaceProblems()
	for _, v := range surface {
		fs.add(v)
	}
	if accepted == 0 && len(m.plans) == 0 && len(surface) == 0 {
		return orUnknown(skipf("no write in this case"), m.writes, nil)
	}
	return fs.orElse(pass())
}

func allPlans(ev *Evidence) []planObs { return ev.plans() }

// planEntryObs is one entry of an observed plan: entry n (from 1) of
// plan.
type planEntryObs struct {
	PlanEntry
	plan planObs
	n    int
}

// planEntries lists every entry of every plan, in wire order.
func planEntries(ev *Evidence) []planEntryObs {
	var out []planEntryObs
	for _, p := range allPlans(ev) {
		for k, e := range p.Entries {
			out = append(out, planEntryObs{PlanEntry: e, plan: p, n: k + 1})
		}
	}
	return out
}

func evalSession(ev *Evidence) verdict {
	u := ev.updateSessions()
	if u.updates == 0 {
		return skipf("the agent sent no session/update")
	}
	// One failure per process, named session and want, with the count.
	type key struct {
		proc        int
		named, want string
	}
	var order []key
	by := map[key][]int{}
	for _, p := range u.problems {
		k := key{p.proc, p.named, p.want}
		if _, ok := by[k]; !ok {
			order = append(order, k)
		}
		by[k] = append(by[k], p.seq)
	}
	var fs failures
	for _, k := range order {
		seqs := by[k]
		named := fmt.Sprintf("session %q", k.named)
		if k.named == "" {
			named = "no session"
		}
		v := failf("process %d: %d session/update(s) (first #%d) name %s, want %s; an editor drops them", k.proc+1, len(seqs), seqs[0], named, k.want)
		for _, seq := range seqs {
			v = v.at(seq, "names "+named+", want "+k.want)
		}
		fs.add(v)
	}
	return fs.orElse(pass())
}

// finalState is one point where the client's plan is judged (TW-FINAL-1):
// the end of a prompt turn or of a load.
type finalState struct {
	what string // "the end of prompt 2", "session/load"
	proc int
	end  int // the seq of the next request (-1: the end of the wire)
	// start: only plans after it count (a load: the client shows what it
	// replays), -1 for any.
	start int
	// prompts counts the prompts before the end: the writes of those are
	// the ones that count.
	prompts int
}

func evalFinal(ev *Evidence) verdict {
	if ev.Aborted != "" {
		return skipf("the case did not complete")
	}
	ws := ev.writes()
	plans := ev.plans()
	// A point before any accepted list: nothing the client must hold; a
	// point after a call whose verdict is unknown: what it must hold
	// cannot be told.
	unsure := ""
	holds := func(pt finalState) bool {
		want, unknown := lastAcceptedBy(ws, pt)
		if unknown != "" && unsure == "" {
			unsure = unknown
		}
		return want != nil && unknown == ""
	}
	v := judgeEach(finalStates(ev), holds, func(fs *failures, _ int, pt finalState) {
		want, _ := lastAcceptedBy(ws, pt)
		var held *planObs
		for j := range plans {
			// A load's replay sent after its answer counts for the load
			// (plans has it as the load's, even when it came after the
			// next request): that it came late is TW-LOAD-1's.
			p := &plans[j]
			late := pt.what == "session/load" && p.Segment == "load"
			if p.Proc == pt.proc && p.Seq > pt.start && (pt.end < 0 || p.Seq < pt.end || late) {
				held = p
			}
		}
		switch {
		case held == nil:
			fs.add(failf("at %s the client holds no plan; the last accepted list is %s's %s", pt.what, want.CallID, todosString(want.Todos)))
		case !sameList(held.todos(), want.Todos):
			// The hint follows from what the client holds: an earlier
			// list after the last one (out of order), the last one
			// untrimmed, or none.
			stale, hint := "", ""
			for _, w := range ws {
				if w.Accepted && w.Shaped && w.Prompt < pt.prompts && w.CallID != want.CallID && sameList(held.todos(), w.Todos) {
					stale = fmt.Sprintf(" (%s's list: stale)", w.CallID)
				}
			}
			for _, p := range plans {
				if stale != "" && p.Proc == pt.proc && p.Seq > pt.start && p.Seq < held.Seq && sameList(p.todos(), want.Todos) {
					hint = fmt.Sprintf(": #%d showed it before; send the plans in the order of the writes, the last one last", p.Seq)
				}
			}
			if stale == "" && sameTrimmed(held.todos(), want.Todos) {
				stale, hint = fmt.Sprintf(" (%s's list, its content untrimmed)", want.CallID), trimHint
			}
			heldS, wantS := planVs(*held, want.Todos)
			fs.add(failf("at %s the client holds %s (#%d)%s; the last accepted list is %s's %s%s", pt.what, heldS, held.Seq, stale, want.CallID, wantS, hint).
				at(held.Seq, fmt.Sprintf("the last plan at %s, not the last accepted list (%s)", pt.what, want.CallID)))
		}
	}, "no list was accepted in this case")
	if v.Outcome == NotRun && unsure != "" {
		return skipf("%s", unsure)
	}
	return v
}

// finalStates lists the points where the client's plan is judged: the end
// of each prompt and each load that was answered.
func finalStates(ev *Evidence) []finalState {
	var points []finalState
	prompts := 0
	for k, s := range ev.Steps {
		if s.ReqSeq < 0 || s.Error != "" || (s.Op != driver.OpPrompt && s.Op != driver.OpLoadSession) {
			continue
		}
		end := -1
		for _, n := range ev.Steps[k+1:] {
			if n.ReqSeq >= 0 {
				end = n.ReqSeq
				break
			}
		}
		pt := finalState{what: "session/load", proc: s.Proc, end: end, start: s.ReqSeq, prompts: prompts}
		if s.Op == driver.OpPrompt {
			prompts = s.Prompt + 1
			pt.what, pt.prompts, pt.start = fmt.Sprintf("the end of prompt %d", s.Prompt+1), prompts, -1
		}
		points = append(points, pt)
	}
	return points
}

// lastAcceptedBy is the last list accepted before point pt, nil when
// none; unknown is the reason a call after it cannot be judged (then the
// list the client must hold cannot be told).
func lastAcceptedBy(ws []writeObs, pt finalState) (want *writeObs, unknown string) {
	for i := range ws {
		switch w := &ws[i]; {
		case w.Prompt >= pt.prompts || !w.Shaped:
		case w.Accepted:
			want, unknown = w, ""
		case w.Unknown != "" && unknown == "":
			unknown = w.Unknown
		}
	}
	return want, unknown
}

func evalPriority(ev *Evidence) verdict {
	return judgeEach(planEntries(ev), nil, func(fs *failures, _ int, e planEntryObs) {
		if !e.HasPriority {
			fs.add(failf("plan #%d entry %d (%q) has no priority; ACP requires one on every plan entry: send high, medium or low (the reference sends \"medium\")", e.plan.Seq, e.n, e.Content).at(e.plan.Seq, fmt.Sprintf("entry %d has no priority", e.n)))
			return
		}
		switch e.Priority {
		case "high", "medium", "low":
		default:
			fs.add(failf("plan #%d entry %d (%q) has priority %q", e.plan.Seq, e.n, e.Content, e.Priority).at(e.plan.Seq, fmt.Sprintf("entry %d has priority %q", e.n, e.Priority)))
		}
	}, "no plan entry observed")
}

func evalPriorityMedium(ev *Evidence) verdict {
	return judgeEach(planEntries(ev), nil, func(fs *failures, _ int, e planEntryObs) {
		if e.Priority != "medium" {
			fs.add(failf("plan #%d entry %d (%q) has priority %q, want the constant \"medium\"", e.plan.Seq, e.n, e.Content, e.Priority).at(e.plan.Seq, fmt.Sprintf("entry %d has priority %q", e.n, e.Priority)))
		}
	}, "no plan entry observed")
}

func evalNonNull(ev *Evidence) verdict {
	return judgeEach(allPlans(ev), nil, func(fs *failures, _ int, p planObs) {
		switch {
		case p.Null:
			fs.add(failf("plan #%d has \"entries\": null", p.Seq).at(p.Seq, `"entries": null`))
		case p.Missing:
			fs.add(failf("plan #%d has no \"entries\"", p.Seq).at(p.Seq, `no "entries"`))
		case p.Bad != "":
			fs.add(failf("plan #%d entries is not an array of objects: %s", p.Seq, p.Bad).at(p.Seq, "entries is not an array of objects"))
		}
	}, "no plan update observed")
}

func evalLoadCap(ev *Evidence) verdict {
	for _, s := range ev.Steps {
		if s.Op == driver.OpInitialize && s.Error == "" && ev.version(s.Proc) == driver.ACPv2 {
			// v2 has no loadSession: session/resume (from the start, as
			// a load) is part of the session capabilities.
			var ir struct {
				Capabilities struct {
					Session json.RawMessage `json:"session"`
				} `json:"capabilities"`
			}
			_ = json.Unmarshal(s.Result, &ir)
			if ss := string(ir.Capabilities.Session); ss == "" || ss == "null" {
				return failf("initialize does not advertise capabilities.session, whose baseline includes session/resume (protocol version 2 has no loadSession: a resume from the start is its load)").at(s.RespSeq, "no capabilities.session")
			}
			return pass()
		}
		if s.Op == driver.OpInitialize && s.Error == "" {
			var ir struct {
				AgentCapabilities struct {
					LoadSession *bool `json:"loadSession"`
				} `json:"agentCapabilities"`
			}
			_ = json.Unmarshal(s.Result, &ir)
			if ir.AgentCapabilities.LoadSession == nil || !*ir.AgentCapabilities.LoadSession {
				return failf("initialize does not advertise agentCapabilities.loadSession: true").at(s.RespSeq, "no agentCapabilities.loadSession: true")
			}
			return pass()
		}
	}
	return skipf("no initialize answer")
}

// loadExpect is the list a load must end on and the plans the load showed.
func loadExpect(ev *Evidence) ([]Todo, []planObs, *verdict) {
	if !ev.Case.HasStep(driver.OpLoadSession) {
		v := skipf("the case has no loadSession step")
		return nil, nil, &v
	}
	if ev.LoadSkipped != "" {
		// Load is part of the contract: an agent that cannot load cannot
		// replay the plan.
		v := failf("the agent does not advertise agentCapabilities.loadSession; the spec makes the plan durable across session/load (advertise loadSession and replay the last plan before answering session/load)")
		if ev.v2() {
			v = failf("the agent does not advertise capabilities.session; the spec makes the plan durable across a load, on protocol version 2 session/resume from the start (advertise capabilities.session and replay the last plan before answering session/resume)")
		}
		for _, s := range ev.Steps {
			if s.Op == driver.OpInitialize && s.RespSeq >= 0 {
				v = v.at(s.RespSeq, "no agentCapabilities.loadSession: true")
				break
			}
		}
		return nil, nil, &v
	}
	refused, loaded := "", false
	for _, s := range ev.Steps {
		switch {
		case s.Op != driver.OpLoadSession:
		case s.Refused != "":
			refused = s.Refused
		case s.Error != "":
			v := failf("%s was answered with an error: %s", ev.loadMethod(), s.Error).at(s.RespSeq, ev.loadMethod()+" answered with an error")
			return nil, nil, &v
		case s.RespSeq >= 0:
			loaded = true
		}
	}
	if refused != "" && !loaded {
		// Nothing in ACP or the spec requires an agent to load a session
		// it has open: the cases that restart the agent first judge the load.
		v := skipf("%s; nothing in ACP or the spec requires an agent to load a session it has open: the cases that restart the agent before the load judge it", refused)
		return nil, nil, &v
	}
	w, unknown := lastAcceptedBy(ev.writes(), finalState{prompts: ev.promptsBeforeRestart()})
	switch {
	case unknown != "":
		v := skipf("the list the load must end on cannot be told: %s", unknown)
		return nil, nil, &v
	case w == nil:
		v := skipf("no accepted write before the restart")
		return nil, nil, &v
	}
	want := w.Todos
	var replay []planObs
	for _, p := range ev.plans() {
		if p.Segment == "load" {
			replay = append(replay, p)
		}
	}
	return want, replay, nil
}

func evalLoadBefore(ev *Evidence) verdict {
	want, replay, v := loadExpect(ev)
	if v != nil {
		return *v
	}
	var before []planObs
	for _, p := range replay {
		if !p.AfterResponse {
			before = append(before, p)
		}
	}
	switch {
	case len(before) > 0:
		last := before[len(before)-1]
		if !sameList(last.todos(), want) {
			lastS, wantS := planVs(last, want)
			return failf("the last plan replayed before the %s answer is %s%s, want %s", ev.loadMethod(), lastS, whoseList(ev, last), wantS).
				at(last.Seq, "the last plan replayed before the "+ev.loadMethod()+" answer")
		}
		return pass()
	case len(replay) > 0:
		return failf("the plan was replayed only after the %s answer (%d update(s) after it)", ev.loadMethod(), len(replay))
	default:
		return failf("%s replayed no plan (want %s)", ev.loadMethod(), todosString(want))
	}
}

// whoseList names the scripted call whose list plan p shows (" (the
// list of call_4)"), "" when none: a replay of a call the agent should
// have refused points back at it.
func whoseList(ev *Evidence, p planObs) string {
	for i := len(ev.Writes) - 1; i >= 0; i-- {
		if w := ev.Writes[i]; w.Shaped && sameList(p.todos(), w.Todos) {
			return " (the list of " + w.CallID + ")"
		}
	}
	return ""
}

func evalLoadLast(ev *Evidence) verdict {
	want, replay, v := loadExpect(ev)
	if v != nil {
		return *v
	}
	if len(replay) == 0 {
		return failf("%s replayed no plan (want %s)", ev.loadMethod(), todosString(want))
	}
	last := replay[len(replay)-1]
	if !sameList(last.todos(), want) {
		lastS, wantS := planVs(last, want)
		return failf("the last plan replayed on load is %s%s, want the last accepted list %s", lastS, whoseList(ev, last), wantS).
			at(last.Seq, "the last plan replayed on load")
	}
	return pass()
}

func evalExit(ev *Evidence) verdict {
	procs := ev.Procs
	switch {
	case ev.Aborted != "":
		return skipf("the case did not complete")
	case ev.pooled():
		// The pooled processes that ended with the case: those its
		// restart retired (ProcResult.Retired), which ended as a
		// restart's do.
		procs = slices.DeleteFunc(slices.Clone(procs), func(p driver.ProcResult) bool { return p.Retired == "" })
		if len(procs) == 0 {
			return skipf("the case ran as a session of a pooled process, which did not end with it: how the agent exits is judged on the cases with a process of their own")
		}
	}
	var cut []string
	learned := ""
	v := judgeEach(procs, nil, func(fs *failures, _ int, p driver.ProcResult) {
		switch {
		case p.ExitedEarly || strings.HasPrefix(p.Shutdown, "exited after stdin closed"):
		case p.GraceCut != "":
			cut, learned = append(cut, fmt.Sprint(p.Index+1)), p.GraceCut
		default:
			fs.add(failf("agent process %d %s", p.Index+1, p.Shutdown))
		}
	}, "no agent process")
	if v.Outcome != Pass || len(cut) == 0 {
		return v
	}
	// A process signalled before its grace was out showed nothing of how
	// the agent exits: the run judged that where the grace was waited out
	// (the process the reason names), never a pass here.
	who := "agent process " + cut[0] + " was"
	if len(cut) > 1 {
		who = "agent processes " + strings.Join(cut, ", ") + " were"
	}
	v = naf("%s%s signalled before the grace was out, once the run had seen that %s (ACP-EXIT-1 is judged there)", NotJudgedPrefix, who, learned)
	v.withheld = true
	return v
}

func first(s []string, n int) []string {
	if len(s) <= n {
		return s
	}
	return append(append([]string(nil), s[:n]...), fmt.Sprintf("… %d more", len(s)-n))
}

// flaglessWire names the wire a result came on when that wire has no
// error flag ("" on a wire with one): there the mock reads a result as an
// error only by its "Error:" prefix, and an agent that words its refusals
// otherwise is told so.
func (ev *Evidence) flaglessWire(r result) string {
	if !r.Found || r.Request >= len(ev.Journal) {
		return ""
	}
	e := ev.Journal[r.Request]
	if e.ToolErrors != mockmodel.ToolErrorsPrefix {
		return ""
	}
	if wire := map[string]string{mockmodel.WireOpenAIChat: "OpenAI chat completions", mockmodel.WireOpenAIResponses: "OpenAI Responses"}[e.Wire]; wire != "" {
		return wire
	}
	return e.Wire
}

// refusalWords are what a tool result that refuses a call says, in any
// wording: "failed to parse …", "invalid todos: …", "refused: duplicate
// content …".
var refusalWords = regexp.MustCompile(`(?i)\b(error|invalid|refus|reject|fail|not allowed|must|cannot|can't|duplicate|unknown)`)

// readsAsRefusal reports whether a result's text reads as a refusal (as
// against "Updated todo list: …", an acceptance).
func readsAsRefusal(text string) bool { return refusalWords.MatchString(text) }

// loadMethod is the request a load step sent: session/load, or on
// protocol version 2 session/resume (replaying from the start).
func (ev *Evidence) loadMethod() string {
	v := ev.version(0)
	for _, st := range ev.Steps {
		if st.Op == driver.OpLoadSession {
			v = ev.version(st.Proc)
		}
	}
	if v == driver.ACPv2 {
		return "session/resume"
	}
	return "session/load"
}
