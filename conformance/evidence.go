package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/todolist"
	"github.com/todoharness/todoharness/internal/textcut"
	"github.com/todoharness/todoharness/mockmodel"
)

// Evidence is everything observed while running one case: the two wires
// (ACP both ways, the model journal), the steps and the processes. It is
// the whole input of the judge (Judge): it serialises to JSON
// (evidence.json beside a case's transcript, see WriteEvidence) and a saved
// one is judged again with `todoharness conform --judge DIR`, without
// starting anything.
type Evidence struct {
	// Format is EvidenceFormat when written by this version.
	Format int `json:"format"`
	// Run says what run the case was part of; Index is the case's
	// position in it (the probe first).
	Run   RunInfo `json:"run"`
	Index int     `json:"index"`
	// Repeat is the number of the run (1, 2, ...) the case was part of
	// when the cases were run several times (Config.Repeat), else 0.
	Repeat int `json:"repeat,omitempty"`

	Case    *Case             `json:"case"`
	Dialect driver.Dialect    `json:"dialect"`
	Script  *mockmodel.Script `json:"script,omitempty"`
	// Started is when the case started.
	Started time.Time `json:"started"`
	// CaseRecord is what the driver observed: the two wires, the steps,
	// the processes and how the case ended (driver.CaseRecord documents
	// it). ScriptWait is the time a case after the first waited, before
	// its first prompt, for the dialect the first case detects (its
	// script is written in it).
	driver.CaseRecord
	Writes []Write `json:"writes"`

	// NotRun says why the case was not run at all (the first case could
	// not get initialize answered): no check is judged on it and nothing
	// is blamed on the agent.
	NotRun string `json:"notRun,omitempty"`

	// Policy is the configured in_progress policy (Config.Policy).
	Policy string `json:"policy,omitempty"`

	// PlanTies records, in a written evidence.json (--out), which
	// write the judge tied each plan update of a prompt to, and why. It is
	// derived: the judge never reads it, and ties them again.
	PlanTies []PlanTie `json:"planTies,omitempty"`

	// PooledFailure is what the case failed as a session of a pooled
	// process, when it was then run again alone in a fresh process (this
	// evidence is that run's; Config.Pool).
	PooledFailure *PooledFailure `json:"pooledFailure,omitempty"`
	// NotRunAgain says why a case that failed as a session of a pooled
	// process was not run again alone (Config.Confirmed): its failures
	// were already confirmed alone in a fresh process on other cases, and
	// this evidence is its pooled session's, unconfirmed ("" otherwise).
	NotRunAgain string `json:"notRunAgain,omitempty"`
	// ConfirmedBy names, for each check such a case failed there, the
	// case of the run that had confirmed the same failure alone in a
	// fresh process when it ended (Config.RerunPooled; nil when an
	// exploration's Config.Confirmed decided).
	ConfirmedBy map[string]string `json:"confirmedBy,omitempty"`

	// validator is set by the judge on its own copy of the evidence;
	// memo keeps what the checks derive from it for every copy, once the
	// case has ended (nil: nothing kept).
	validator *driver.SchemaValidator
	memo      *judgeMemo
	// beside is set by the judge on its own copy: the other cases of the
	// run that were sessions of the same pooled process (ACP-ISOLATION-1
	// reads them).
	beside []*Evidence
}

// evidenceKeys is the order of the keys of an evidence's JSON form: the
// driver's (driver.CaseRecord) among the runner's, as evidence was saved
// before Evidence embedded the driver's record.
const evidenceKeys = "format run index repeat case dialect script cwd home started duration answered exitWait scriptWait " +
	"wire journal sideRequests steps procs offer writes aborted stopped notRun interrupted loadSkipped promptsRun modelErrors notStarted policy planTies pooledFailure " +
	"notRunAgain confirmedBy"

// MarshalJSON writes ev with its keys in the order of evidenceKeys. Nothing
// is escaped for HTML here: an encoder that does (json.Marshal) escapes
// the result, one that does not (MarshalEvidence) keeps it as it is.
func (ev Evidence) MarshalJSON() ([]byte, error) {
	type plain Evidence // without this method
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode((*plain)(&ev)); err != nil {
		return nil, err
	}
	return orderKeys(buf.Bytes(), strings.Fields(evidenceKeys))
}

// orderKeys rewrites the JSON object obj with its keys in the order of
// keys, each value as it is; a key not in keys is an error.
func orderKeys(obj []byte, keys []string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("conformance: evidence: not an object (%v)", err)
	}
	vals := map[string]json.RawMessage{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, fmt.Errorf("conformance: evidence: %w", err)
		}
		k, _ := t.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, fmt.Errorf("conformance: evidence: key %q: %w", k, err)
		}
		vals[k] = v
	}
	out := make([]byte, 0, len(obj))
	out = append(out, '{')
	for _, k := range keys {
		v, ok := vals[k]
		if !ok {
			continue
		}
		if len(out) > 1 {
			out = append(out, ',')
		}
		out = append(append(append(append(out, '"'), k...), '"', ':'), v...)
		delete(vals, k)
	}
	for k := range vals {
		return nil, fmt.Errorf("conformance: evidence: key %q has no place in evidenceKeys", k)
	}
	return append(out, '}'), nil
}

// judgeMemo keeps what several checks derive from one case's evidence,
// found once: the messages' schema validation (ACP-SCHEMA-1 and
// ACP-SCHEMA-2 read the same), the plan updates (read by every plan
// check, some once per write), the writes' verdicts and the sessions the
// updates name (updateSessions). A case is judged twice (its progress line,
// then the run): the judge's copies of the evidence (judgeable) share it.
// What it keeps is read, never changed.
type judgeMemo struct {
	schema struct {
		mu         sync.Mutex
		v          *driver.SchemaValidator // the validator the result is from
		wire       int                     // the number of messages it covers
		bad, draft []schemaProblem
		n          int
	}
	plans  wireMemo[[]planObs]
	writes struct {
		mu   sync.Mutex
		done bool
		key  writesKey // what of the evidence they are from
		obs  []writeObs
	}
	sessions wireMemo[sessionUse]
	// failures is caseFailures' answer on the case as it ran, for the
	// catalogue and validator it is from: a pooled case is judged so as
	// it ends, before the runs again alone and by the judge (pooledFailure).
	failures struct {
		mu   sync.Mutex
		key  failuresKey
		done bool
		ids  []string
	}
}

// wireMemo keeps one thing derived from a case's messages and steps.
type wireMemo[T any] struct {
	mu          sync.Mutex
	done        bool
	wire, steps int // the messages and steps it is from
	val         T
}

// get returns what find derives from ev, found again when ev's messages
// or steps are not those it was found from (a copy that grew).
func (m *wireMemo[T]) get(ev *Evidence, find func() T) T {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.done || m.wire != len(ev.Wire) || m.steps != len(ev.Steps) {
		m.val, m.wire, m.steps, m.done = find(), len(ev.Wire), len(ev.Steps), true
	}
	return m.val
}

// writesKey is what of the evidence the writes' verdicts are derived
// from, by size: a copy that grew (or another dialect) derives them again.
type writesKey struct {
	wire, steps, journal, writes, prompts int
	tool                                  string
}

// warmJudgeMemo finds, once the case has ended, what the judge derives
// from its evidence with validator v (the schema validation, the plan
// updates) and keeps it in the memo: judged later, the case reads it
// there. Nothing else changes.
func (ev *Evidence) warmJudgeMemo(v *driver.SchemaValidator) {
	if ev.memo == nil || v == nil || ev.NotRun != "" || ev.Interrupted != "" {
		return
	}
	e := judgeable(ev, v)
	schemaProblems(e)
	e.plans()
	e.writes()
	e.updateSessions()
}

// RunInfo is what a case's evidence records of the run it was part of:
// enough to judge a folder of saved evidence as one run.
type RunInfo struct {
	Agent string `json:"agent"`
	// DialectSource says how the dialect was chosen (detected, forced,
	// default); ToolsOffered lists the tools offered in the probe case.
	DialectSource string   `json:"dialectSource"`
	ToolsOffered  []string `json:"toolsOffered,omitempty"`
	// Started is when the run started.
	Started  time.Time     `json:"started"`
	Parallel int           `json:"parallel"`
	Timeout  time.Duration `json:"timeout"`
	// Env names the variables the run added to the agent's environment
	// (--env, a preset's): their names only, a value may be a secret.
	Env []string `json:"env,omitempty"`
	// Shard is the slice of the cases the run was ("2/4", Config.Shard;
	// "" for a whole run); ToolVersion and CatalogueVersion the
	// todoharness and catalogue versions that ran it. conform merge joins
	// only shards of one run: the same agent and versions, each shard once.
	Shard            string `json:"shard,omitempty"`
	ToolVersion      string `json:"toolVersion,omitempty"`
	CatalogueVersion int    `json:"catalogueVersion,omitempty"`
	// Pool is PoolOn when the cases that need no fresh process ran as
	// sessions of pooled agent processes (Config.Pool); "" (saved before
	// there was a pool, or PoolOff) when every case had a process of its
	// own.
	Pool string `json:"pool,omitempty"`
	// RerunPooled is, with Pool on, what became of a case that failed as
	// a session of a pooled process (Config.RerunPooled): RerunKnown or
	// RerunEvery ("" in evidence saved before it was a choice: every).
	RerunPooled string `json:"rerunPooled,omitempty"`
}

// The pool modes (RunInfo.Pool, Report.Pool, conform --pool).
const (
	PoolOn  = "on"
	PoolOff = "off"
)

// envNames is the names of K=V pairs.
func envNames(env []string) []string {
	var out []string
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		out = append(out, k)
	}
	return out
}

// PlanEntry is one entry of an observed plan update.
type PlanEntry struct {
	Content     string `json:"content"`
	Status      string `json:"status"`
	Priority    string `json:"priority,omitempty"`
	HasPriority bool   `json:"-"`
}

// planObs is one plan update on the wire.
type planObs struct {
	Seq, Proc int
	// Segment is the request the plan follows: "prompt", "load" or "" (none).
	Segment string
	// Prompt is the prompt number for Segment "prompt".
	Prompt int
	// AfterResponse: for a load segment, the plan came after the response.
	AfterResponse bool
	// CallID is the toolCallId of the last tool_call / tool_call_update of
	// the same segment before the plan ("" when none).
	CallID string
	// PlanID is the planId of a plan_update ("" for a v1 plan).
	PlanID        string
	Entries       []PlanEntry
	Null, Missing bool
	Bad           string // entries not decodable
	// NotText: an entry's content is no JSON string (read as "").
	NotText bool
}

func (p planObs) todos() []Todo {
	out := make([]Todo, 0, len(p.Entries))
	for _, e := range p.Entries {
		out = append(out, Todo{Content: e.Content, Status: e.Status})
	}
	return out
}

// sameList reports whether a plan's entries (shown) show list: the same
// statuses, and each content as the contract trims it or differing from
// that only in the characters common trim functions disagree on
// (todolist.EdgeDiff): an agent that did trim, with another trim
// function, fails TW-PLAN-TRIM-1 (a SHOULD), not the MUST checks.
func sameList(shown, list []Todo) bool {
	return slices.EqualFunc(shown, list, func(x, y Todo) bool {
		return x.Status == y.Status && todolist.SameShown(x.Content, y.Content)
	})
}

// sameTrimmed is slices.Equal with the contents trimmed (a refused list
// shown as the model sent it, untrimmed, is still that list).
func sameTrimmed(a, b []Todo) bool {
	return slices.EqualFunc(a, b, func(x, y Todo) bool {
		return x.Status == y.Status && todolist.SameShown(todolist.Trim(x.Content), todolist.Trim(y.Content))
	})
}

// How a list is written in a reason: a list of up to listWhole items
// whole; a longer one as listShown items and how many are before and
// after them (the whole list is on its wire line: the transcript, the
// HTML report's checklist, evidence.json); an item's content cut to
// itemShown bytes.
const (
	listWhole = 8
	listShown = 5
	itemShown = 80
)

// todosString writes a list in a reason: its first items when it is long.
func todosString(ts []Todo) string { return todosFrom(ts, 0) }

// todosFrom writes a list in a reason; a long one shows the items from
// at (one before it too): where it differs from the list it is compared
// with (planVs).
func todosFrom(ts []Todo, at int) string {
	if len(ts) == 0 {
		return "[]"
	}
	lo, hi := 0, len(ts)
	if len(ts) > listWhole {
		lo = min(max(at-1, 0), len(ts)-listShown)
		hi = lo + listShown
	}
	var parts []string
	if lo > 0 {
		parts = append(parts, fmt.Sprintf("… %d before", lo))
	}
	for _, t := range ts[lo:hi] {
		content := fmt.Sprintf("%q", textcut.Prefix(t.Content, itemShown))
		if len(t.Content) > itemShown {
			content += textcut.Ellipsis
		}
		parts = append(parts, content+" "+textcut.Truncate(t.Status, itemShown))
	}
	if hi < len(ts) {
		parts = append(parts, fmt.Sprintf("… %d more", len(ts)-hi))
	}
	out := "[" + strings.Join(parts, ", ") + "]"
	if hi-lo < len(ts) {
		out += fmt.Sprintf(" (%d items)", len(ts))
	}
	return out
}

// firstDiff is the index of the first item where a and b differ (the
// shorter's length when one begins the other).
func firstDiff(a, b []Todo) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

// plans extracts the plan updates from the wire, each tied to the request
// it follows.
func (ev *Evidence) plans() []planObs {
	if ev.memo == nil {
		return ev.findPlans()
	}
	return ev.memo.plans.get(ev, ev.findPlans)
}

// findPlans finds the plan updates of the wire (plans).
func (ev *Evidence) findPlans() []planObs {
	var out []planObs
	bySeq := ev.planSegments()
	// A plan that arrives in a prompt's segment before the model was even
	// asked anything for that prompt cannot show one of its writes: after a
	// load, it is the load's replay, late (sent after the answer).
	firstAsked := ev.firstRequestTimes()
	// A plan announced by a tool call of an earlier prompt is a replay too.
	callPrompt := map[string]int{}
	for _, w := range ev.Writes {
		callPrompt[w.CallID] = w.Prompt
	}
	foreign := ev.updateSessions().foreign
	cur, prev, curProc, lastCall := planSegment{}, planSegment{}, -1, ""
	for _, m := range ev.Wire {
		if m.Proc != curProc {
			cur, prev, curProc, lastCall = planSegment{}, planSegment{}, m.Proc, ""
		}
		if s, ok := bySeq[m.Seq]; ok && m.Dir == driver.Sent {
			prev, cur, lastCall = cur, s, ""
			continue
		}
		if m.Dir != driver.Received || m.Kind != driver.KindNotification || m.Method != "session/update" || foreign[m.Seq] {
			continue // an update for another session counts for no plan check (ACP-SESSION-1)
		}
		if !mayBePlanOrCall(m.Line) {
			continue // none of the kinds read below: most of a turn's updates are text chunks
		}
		update, kind, ok := planUpdate(m.Line)
		if !ok {
			continue
		}
		if kind == "tool_call" || kind == "tool_call_update" {
			var id string
			if json.Unmarshal(update["toolCallId"], &id) == nil {
				lastCall = id
			}
			continue
		}
		fields, planID, isPlan := ev.planFields(kind, update, m.Proc)
		if !isPlan {
			continue
		}
		p := planObs{Seq: m.Seq, Proc: m.Proc, Segment: cur.kind, Prompt: cur.prompt, CallID: lastCall, PlanID: planID}
		if cur.kind == "load" && cur.respSeq >= 0 && m.Seq > cur.respSeq {
			p.AfterResponse = true
		}
		if cur.kind == "prompt" && prev.kind == "load" {
			t, asked := firstAsked[cur.prompt]
			cp, known := callPrompt[lastCall]
			if !asked || m.Time.Before(t) || (known && cp < cur.prompt) {
				p.Segment, p.AfterResponse = "load", true
			}
		}
		ev.readPlanEntries(&p, fields)
		out = append(out, p)
	}
	return out
}

// planUpdate is the update of a session/update line and its
// sessionUpdate kind, as findPlans reads them (ok false: not JSON).
func planUpdate(line string) (update map[string]json.RawMessage, kind string, ok bool) {
	var n struct {
		Params struct {
			Update map[string]json.RawMessage `json:"update"`
		} `json:"params"`
	}
	if json.Unmarshal([]byte(line), &n) != nil {
		return nil, "", false
	}
	_ = json.Unmarshal(n.Params.Update["sessionUpdate"], &kind)
	return n.Params.Update, kind, true
}

// mayBePlanOrCall reports whether a session/update line may carry a
// sessionUpdate findPlans reads (plan, plan_update, tool_call,
// tool_call_update). A JSON string decodes to one of them only when the
// line holds its text ("plan" is in both plan kinds, "tool_call" in both
// call kinds) or spells its letters with \u escapes (the only JSON escapes
// that make letters): false is certain, and findPlans then skips the line
// without decoding it, as it would skip it decoded.
func mayBePlanOrCall(line string) bool {
	return strings.Contains(line, "plan") || strings.Contains(line, "tool_call") || strings.Contains(line, `\u`)
}

// planSegment is the request a wire position follows: the last request
// the client sent ("prompt", "load" or "" for another).
type planSegment struct {
	kind    string
	prompt  int
	respSeq int
}

// planSegments maps the seq of each request the runner sent to the
// segment it opens.
func (ev *Evidence) planSegments() map[int]planSegment {
	bySeq := map[int]planSegment{}
	for _, s := range ev.Steps {
		if s.ReqSeq < 0 {
			continue
		}
		switch s.Op {
		case driver.OpPrompt:
			bySeq[s.ReqSeq] = planSegment{kind: "prompt", prompt: s.Prompt, respSeq: s.RespSeq}
		case driver.OpLoadSession:
			bySeq[s.ReqSeq] = planSegment{kind: "load", respSeq: s.RespSeq}
		default:
			bySeq[s.ReqSeq] = planSegment{kind: "", respSeq: s.RespSeq}
		}
	}
	return bySeq
}

// readPlanEntries reads the entries of a plan update into p.
func (ev *Evidence) readPlanEntries(p *planObs, update map[string]json.RawMessage) {
	raw, ok := update["entries"]
	switch {
	case !ok:
		p.Missing = true
	case string(raw) == "null":
		p.Null = true
	default:
		var entries []map[string]json.RawMessage
		if err := json.Unmarshal(raw, &entries); err != nil {
			p.Bad = err.Error()
		}
		for _, e := range entries {
			var pe PlanEntry
			if json.Unmarshal(e["content"], &pe.Content) != nil {
				p.NotText = true
			}
			if ev.Dialect.Name != driver.DialectTodoWrite {
				// Trimming is todo_write's rule: other agents may show
				// content as the model sent it, and the canonical lists
				// are trimmed.
				pe.Content = todolist.Trim(pe.Content)
			}
			_ = json.Unmarshal(e["status"], &pe.Status)
			if pr, ok := e["priority"]; ok {
				pe.HasPriority = true
				_ = json.Unmarshal(pr, &pe.Priority)
			}
			p.Entries = append(p.Entries, pe)
		}
	}
}

// sessionUse is what the client knows of the sessions the agent's
// updates name (ACP-SESSION-1).
type sessionUse struct {
	// updates counts the session/update notifications.
	updates int
	// problems are the updates that name no session the client created
	// or loaded on that process (or, during a load, not the loaded one),
	// in wire order.
	problems []sessionProblem
	// foreign are the seqs of the updates that name another session: they
	// count for no plan check.
	foreign map[int]bool
}

// sessionProblem is one update that names the wrong session.
type sessionProblem struct {
	seq, proc int
	named     string // "" when the update names none
	want      string // what it should name
}

// updateSessions checks the session each session/update names against
// the sessions the client created (session/new, from its request on) or
// loaded (session/load) on that process; between a load's request and its
// answer only the loaded session is right. ACP-SESSION-1, the plans, the
// tool calls' statuses and the seen-words read it: the memo keeps it for
// them, who read it, never change it.
func (ev *Evidence) updateSessions() sessionUse {
	if ev.memo == nil {
		return ev.findUpdateSessions()
	}
	return ev.memo.sessions.get(ev, ev.findUpdateSessions)
}

// findUpdateSessions finds what updateSessions returns.
func (ev *Evidence) findUpdateSessions() sessionUse {
	u := sessionUse{foreign: map[int]bool{}}
	type stepAt struct {
		op      string
		respSeq int
		result  json.RawMessage
	}
	reqs := map[int]stepAt{}
	for _, s := range ev.Steps {
		if s.ReqSeq >= 0 && (s.Op == driver.OpNewSession || s.Op == driver.OpLoadSession) {
			reqs[s.ReqSeq] = stepAt{s.Op, s.RespSeq, s.Result}
		}
	}
	known := map[int]map[string]bool{} // proc -> sessions
	loading, loadEnd := map[int]string{}, map[int]int{}
	var sess struct {
		SessionID string `json:"sessionId"`
	}
	for _, m := range ev.Wire {
		if known[m.Proc] == nil {
			known[m.Proc] = map[string]bool{}
		}
		if st, ok := reqs[m.Seq]; ok && m.Dir == driver.Sent {
			sess.SessionID = ""
			var req struct {
				Params struct {
					SessionID string `json:"sessionId"`
				} `json:"params"`
			}
			if st.op == driver.OpLoadSession && json.Unmarshal([]byte(m.Line), &req) == nil && req.Params.SessionID != "" {
				known[m.Proc][req.Params.SessionID] = true
				loading[m.Proc], loadEnd[m.Proc] = req.Params.SessionID, st.respSeq
			}
			if st.op == driver.OpNewSession && json.Unmarshal(st.result, &sess) == nil && sess.SessionID != "" {
				known[m.Proc][sess.SessionID] = true
			}
			continue
		}
		if l := loading[m.Proc]; l != "" && loadEnd[m.Proc] >= 0 && m.Seq >= loadEnd[m.Proc] {
			delete(loading, m.Proc)
		}
		if m.Dir != driver.Received || m.Kind != driver.KindNotification || m.Method != "session/update" {
			continue
		}
		u.updates++
		var n struct {
			Params struct {
				SessionID *string `json:"sessionId"`
			} `json:"params"`
		}
		_ = json.Unmarshal([]byte(m.Line), &n)
		named := ""
		if n.Params.SessionID != nil {
			named = *n.Params.SessionID
		}
		want := ""
		switch {
		case loading[m.Proc] != "":
			if named != loading[m.Proc] {
				want = "the session being loaded, " + loading[m.Proc]
			}
		case !known[m.Proc][named]:
			want = "a session the client created or loaded on this process"
			if len(known[m.Proc]) == 0 {
				want = "a session, but the client has none on this process yet"
			}
		}
		if want != "" {
			u.problems = append(u.problems, sessionProblem{seq: m.Seq, proc: m.Proc, named: named, want: want})
			if named != "" {
				u.foreign[m.Seq] = true
			}
		}
	}
	return u
}

// firstRequestTimes maps each prompt to the time the mock model received
// its first request (prompts whose first turn was never requested are
// absent).
func (ev *Evidence) firstRequestTimes() map[int]time.Time {
	first := map[int]int{} // prompt -> its first script turn
	prompt, start := 0, true
	for ti, t := range ev.Case.Script {
		if start {
			first[prompt], start = ti, false
		}
		if len(t.ToolCalls) == 0 {
			prompt, start = prompt+1, true
		}
	}
	at := map[int]time.Time{}
	for p, turn := range first {
		for _, e := range ev.Journal {
			if e.TurnIndex == turn {
				at[p] = e.Time
				break
			}
		}
	}
	return at
}

// result is what the model saw as the result of one tool call.
type result struct {
	Found   bool
	Request int // position in Evidence.Journal of the first request carrying it
	IsError bool
	Text    string
}

// ResultRequest is the first model request that carried the result of
// scripted call callID (false: none did).
func (ev *Evidence) ResultRequest(callID string) (mockmodel.JournalEntry, bool) {
	res := ev.resultOf(callID)
	if !res.Found {
		return mockmodel.JournalEntry{}, false
	}
	return ev.Journal[res.Request], true
}

// resultOf finds the tool result for callID in the model journal.
func (ev *Evidence) resultOf(callID string) result {
	for i, e := range ev.Journal {
		for _, m := range e.Messages {
			if m.Role == llm.RoleTool && m.ToolCallID == callID {
				return result{Found: true, Request: i, IsError: m.IsError, Text: m.Text()}
			}
		}
	}
	return result{}
}

// writeObs is a scripted write and what the agent did with it (see
// callverdict.go): Accepted or Refused, or neither when nothing tells
// (Unknown says why).
type writeObs struct {
	Write
	Result result
	// ACP is what the agent reported of the call over ACP.
	ACP acpCall
	// Told is what the model was told by the result (ToldHow says how).
	Told    callVerdict
	ToldHow string
	// Accepted and Refused are the agent's verdict, By the signal that
	// decided it; Unknown says why neither can be told.
	Accepted, Refused bool
	By                string
	Unknown           string
}

// writes is every scripted call whose prompt was sent, with the agent's
// verdict on it (judgeCall); the memo keeps them for the case's checks,
// which read them, never change them.
func (ev *Evidence) writes() []writeObs {
	if ev.memo == nil {
		return ev.findWrites()
	}
	m := &ev.memo.writes
	m.mu.Lock()
	defer m.mu.Unlock()
	key := writesKey{len(ev.Wire), len(ev.Steps), len(ev.Journal), len(ev.Writes), ev.PromptsRun, ev.Dialect.Tool}
	if !m.done || m.key != key {
		m.obs, m.key, m.done = ev.findWrites(), key, true
	}
	return m.obs
}

// findWrites finds the writes' verdicts (writes).
func (ev *Evidence) findWrites() []writeObs {
	out := make([]writeObs, 0, len(ev.Writes))
	acp := ev.acpCalls()
	offered := ev.toolOffered()
	for _, w := range ev.Writes {
		if w.Prompt >= ev.PromptsRun {
			continue // its prompt was never sent
		}
		o := writeObs{Write: w, Result: ev.resultOf(w.CallID)}
		ev.judgeCall(&o, acp[w.CallID], offered)
		out = append(out, o)
	}
	return out
}

// shown reports whether a plan update of w's prompt shows w's list.
func (ev *Evidence) shown(w Write) bool {
	if !w.Shaped {
		return false
	}
	for _, p := range ev.plans() {
		if p.Segment == "prompt" && p.Prompt == w.Prompt && sameList(p.todos(), w.Todos) {
			return true
		}
	}
	return false
}

// matching ties plan updates to writes by what they show, whatever
// tool-call announcements come between (agents interleave them: opencode
// announces a turn's second call before the first call's plan). Within a
// prompt, each plan is tied to the first accepted write not yet shown whose
// list it shows, after the last write shown (in order; equal lists by
// order); a plan that shows the list of the write shown last again is a
// repeat of it. Any other plan is tied to no write (ties says why).
type matching struct {
	writes []writeObs
	plans  []planObs // prompt-segment plans, in wire order
	// planOf[i] is the index in plans of the plan showing write i's list,
	// -1 when none.
	planOf []int
	// sent[i] are the plans tied to write i: planOf[i], then its repeats.
	sent [][]int
	// matched[j] tells whether plans[j] is tied to an accepted write.
	matched []bool
	// ties[j] says which write plans[j] is tied to, and why.
	ties []PlanTie
}

// PlanTie is how the judge tied one plan update to a write: the evidence
// of TW-PLAN-1 and the checks that read the same matching (the JSON report
// lists them per case; the transcript marks them).
type PlanTie struct {
	// Seq is the plan update's wire position.
	Seq int `json:"seq"`
	// Call is the write it is tied to ("" when none).
	Call string `json:"call,omitempty"`
	// Why says what tied it (or why nothing did).
	Why string `json:"why"`
}

func (ev *Evidence) match() matching {
	m := matching{writes: ev.writes()}
	for _, p := range ev.plans() {
		if p.Segment == "prompt" {
			m.plans = append(m.plans, p)
		}
	}
	m.planOf = make([]int, len(m.writes))
	m.sent = make([][]int, len(m.writes))
	m.matched = make([]bool, len(m.plans))
	m.ties = make([]PlanTie, len(m.plans))
	for i := range m.writes {
		m.planOf[i] = -1
	}
	byPrompt := map[int][]int{} // prompt -> its accepted writes with a list, in order
	for i, w := range m.writes {
		if w.Accepted && w.Shaped {
			byPrompt[w.Prompt] = append(byPrompt[w.Prompt], i)
		}
	}
	next, last := map[int]int{}, map[int]int{} // per prompt: next candidate, write shown last
	for j, p := range m.plans {
		acc := byPrompt[p.Prompt]
		k, prev := next[p.Prompt], -1
		if l, ok := last[p.Prompt]; ok {
			prev = l
		}
		m.ties[j] = PlanTie{Seq: p.Seq}
		announced := ""
		if p.CallID != "" {
			announced = "; the tool call announced last before it was " + p.CallID
		}
		found := false
		for t := k; t < len(acc); t++ {
			i := acc[t]
			if sameList(p.todos(), m.writes[i].Todos) {
				m.planOf[i], m.matched[j] = j, true
				m.sent[i] = append(m.sent[i], j)
				next[p.Prompt], last[p.Prompt] = t+1, i
				why := "shows its accepted list, the next of prompt " + fmt.Sprint(p.Prompt+1) + " in order"
				if t > k {
					why = fmt.Sprintf("shows its accepted list (%d earlier write(s) of prompt %d not shown on their own)", t-k, p.Prompt+1)
				}
				m.ties[j] = PlanTie{Seq: p.Seq, Call: m.writes[i].CallID, Why: why + announced}
				found = true
				break
			}
		}
		switch {
		case found:
		case prev >= 0 && sameList(p.todos(), m.writes[prev].Todos):
			m.sent[prev] = append(m.sent[prev], j)
			m.matched[j] = true
			m.ties[j] = PlanTie{Seq: p.Seq, Call: m.writes[prev].CallID, Why: "shows its list again (a repeat)" + announced}
		default:
			m.ties[j].Why = m.untied(p) + announced
		}
	}
	return m
}

// untied says why plan p is tied to no write: a write's list it shows as
// it is (first) or only once its content is trimmed.
func (m matching) untied(p planObs) string {
	for _, exact := range []bool{true, false} {
		for _, w := range m.writes {
			if w.Prompt != p.Prompt || !w.Shaped || !sameTrimmed(p.todos(), w.Todos) || exact != sameList(p.todos(), w.Todos) {
				continue
			}
			switch {
			case w.Refused:
				return "shows the list of the refused call " + w.CallID
			case w.Accepted && exact:
				// Not tied although it shows the list: a later
				// write's plan came first.
				return "shows the list of " + w.CallID + " after a later write was shown: out of order"
			case w.Accepted:
				return "shows the list of " + w.CallID + " with its content untrimmed" + trimHint
			}
		}
	}
	return fmt.Sprintf("shows a list no accepted write of prompt %d has", p.Prompt+1)
}

// trimHint tells an agent whose plan shows untrimmed content what to do.
const trimHint = ": show each item's content trimmed, as the contract trims it (JavaScript's String.prototype.trim())"

// gap returns the plans a refused call i may have produced: the plans of
// its prompt shown after the plan of the accepted write before it and
// before the plan of the accepted write after it.
func (m matching) gap(i int) []planObs {
	w := m.writes[i]
	lo := -1
	for k := i - 1; k >= 0; k-- {
		if m.writes[k].Prompt != w.Prompt {
			break
		}
		if m.planOf[k] >= 0 {
			lo = m.planOf[k]
			break
		}
	}
	hi := len(m.plans)
	for k := i + 1; k < len(m.writes) && m.writes[k].Prompt == w.Prompt; k++ {
		if m.planOf[k] >= 0 {
			hi = m.planOf[k]
			break
		}
	}
	var out []planObs
	for j := lo + 1; j < hi; j++ {
		if p := m.plans[j]; p.Prompt == w.Prompt && !m.renders(j) {
			out = append(out, p)
		}
	}
	return out
}

// renders reports whether plans[j], tied to no write and showing no
// refused call's list, was announced as an accepted write of its prompt
// (the tool call announced last before it is one): a wrong rendering of
// that write's list (entries null, say), which is that write's failure,
// not a refused call's plan.
func (m matching) renders(j int) bool {
	p := m.plans[j]
	if m.matched[j] || p.CallID == "" {
		return false
	}
	for _, w := range m.writes {
		if w.Refused && w.Prompt == p.Prompt && w.Shaped && sameTrimmed(p.todos(), w.Todos) {
			return false
		}
	}
	for _, w := range m.writes {
		if w.CallID == m.plans[j].CallID {
			return w.Accepted && w.Prompt == m.plans[j].Prompt
		}
	}
	return false
}

// coalesced returns the write shown in write i's stead when the agent
// coalesced the writes of one prompt into one plan: the next accepted
// write of i's prompt that has a plan, with no plan for those between and
// no plan update at all after the plan of the write shown before i (-1
// when there is none).
func (m matching) coalesced(i int) int {
	lo := -1 // the plan of the write shown before i
	for k := i - 1; k >= 0 && m.writes[k].Prompt == m.writes[i].Prompt; k-- {
		if m.planOf[k] >= 0 {
			lo = m.planOf[k]
			break
		}
	}
	for k := i + 1; k < len(m.writes) && m.writes[k].Prompt == m.writes[i].Prompt; k++ {
		if !m.writes[k].Accepted || !m.writes[k].Shaped || m.planOf[k] < 0 {
			continue
		}
		for j, p := range m.plans {
			if p.Prompt != m.writes[i].Prompt {
				continue
			}
			if !m.matched[j] || (j > lo && j < m.planOf[k]) {
				// A plan of the prompt tied to no write, or another
				// plan update where i's was due (a repeat): not one
				// plan for several writes.
				return -1
			}
		}
		return k
	}
	return -1
}

// previousAccepted returns the list accepted before write i (any
// prompt); unknown is the reason a write after that one (or before i,
// when none was accepted) cannot be judged: then which list stands
// before i cannot be told.
func (m matching) previousAccepted(i int) (list []Todo, ok bool, unknown string) {
	for k := i - 1; k >= 0; k-- {
		w := m.writes[k]
		if w.Accepted && w.Shaped {
			return w.Todos, true, unknown
		}
		if w.Unknown != "" && w.Shaped {
			unknown = w.Unknown
		}
	}
	return nil, false, unknown
}

// offeredTool returns the dialect's tool spec as the first model request
// offering it offered it, and the names of every tool any request of the
// case offered (in the order first offered): an agent may open with a
// request that offers none (a probe of the API, a title).
func (ev *Evidence) offeredTool() (llm.ToolSpec, []string, bool) {
	var names []string
	seen := map[string]bool{}
	var spec llm.ToolSpec
	found := false
	for _, e := range ev.Journal {
		for _, t := range e.Tools {
			if !seen[t.Name] {
				seen[t.Name] = true
				names = append(names, t.Name)
			}
			if t.Name == ev.Dialect.Tool && !found {
				spec, found = t, true
			}
		}
	}
	return spec, names, found
}

// translatedArgs is the argument object the mock model sent for callID.
func (ev *Evidence) translatedArgs(callID string) (any, bool) {
	if ev.Script == nil {
		return nil, false
	}
	n := 0
	for _, t := range ev.Script.Turns {
		for _, c := range t.ToolCalls {
			n++
			id := c.ID
			if id == "" {
				id = fmt.Sprintf("call_%d", n)
			}
			if id == callID {
				b, err := json.Marshal(c.Arguments)
				if err != nil {
					return nil, false
				}
				var v any
				if json.Unmarshal(b, &v) != nil {
					return nil, false
				}
				return v, true
			}
		}
	}
	return nil, false
}

func jsonEqual(a string, b any) bool {
	var va any
	if json.Unmarshal([]byte(a), &va) != nil {
		return false
	}
	return reflect.DeepEqual(va, b)
}

// allRequests is the mock's whole journal: the script's requests and the
// side requests, in arrival order.
func (ev *Evidence) AllRequests() []mockmodel.JournalEntry {
	all := append(append([]mockmodel.JournalEntry(nil), ev.Journal...), ev.SideRequests...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].Index < all[j].Index })
	return all
}

// promptsBeforeRestart is the number of prompt steps before the first
// restart or load (all prompts when there is none): the writes a load
// must replay.
func (ev *Evidence) promptsBeforeRestart() int {
	n := 0
	for _, s := range ev.Case.Steps {
		if s.Op == driver.OpRestart || s.Op == driver.OpLoadSession {
			return n
		}
		if s.Op == driver.OpPrompt {
			n++
		}
	}
	return n
}
