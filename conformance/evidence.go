package conformance

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/todoharness/todoharness/harness/llm"
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
	Dialect Dialect           `json:"dialect"`
	Script  *mockmodel.Script `json:"script,omitempty"`
	Cwd     string            `json:"cwd,omitempty"`
	// Home is the case's throw-away home folder (see Target.Home).
	Home string `json:"home,omitempty"`
	// Started is when the case started; Duration its wall time.
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"duration"`
	// Answered is when (from the case start) its last step was answered:
	// the case then gave up its parallel slot, and what followed was the
	// settle and the agent's exit. ExitWait is the time spent waiting for
	// the agent processes to exit once their stdin closed (grace periods
	// and signals included).
	Answered time.Duration `json:"answered,omitempty"`
	ExitWait time.Duration `json:"exitWait,omitempty"`

	Wire []WireMsg `json:"wire"`
	// Journal is what the agent sent the model for the script, in the
	// mock's canonical form (whatever wire API it came on): the checks
	// read only its canonical fields (Messages, Tools, System, TurnIndex,
	// Time), never Raw or Path. Entries keep their Index in the mock's
	// journal; side requests are left out.
	Journal []mockmodel.JournalEntry `json:"journal"`
	// SideRequests are the requests that offered no tools (titles, topic
	// checks), answered with SideText outside the script.
	SideRequests []mockmodel.JournalEntry `json:"sideRequests,omitempty"`
	Steps        []StepResult             `json:"steps"`
	Procs        []ProcResult             `json:"procs"`
	Writes       []Write                  `json:"writes"`

	// Aborted says why the case did not run to completion ("" when it did):
	// the agent hung, crashed or broke the protocol.
	Aborted string `json:"aborted,omitempty"`
	// Stopped says which request of the case was answered with an error
	// (the case stops there; the checks that needed it fail, quoting it).
	Stopped string `json:"stopped,omitempty"`
	// NotRun says why the case was not run at all (the first case could
	// not get initialize answered); Interrupted why the run was stopped
	// before the case finished (cancelled, e.g. Ctrl-C). Either way no
	// check is judged on it and nothing is blamed on the agent.
	NotRun      string `json:"notRun,omitempty"`
	Interrupted string `json:"interrupted,omitempty"`
	// LoadSkipped says why a loadSession step was skipped (the steps after
	// it are skipped too); PromptsRun counts the prompt steps sent.
	LoadSkipped string `json:"loadSkipped,omitempty"`
	PromptsRun  int    `json:"promptsRun"`
	// ModelErrors are the mock model's refusals (past the end of the
	// script, a failed expect, a malformed request).
	ModelErrors []string `json:"modelErrors,omitempty"`

	// Policy is the configured in_progress policy (Config.Policy).
	Policy string `json:"policy,omitempty"`

	// validator is set by the judge on its own copy of the evidence;
	// memo keeps what the checks derive from it for every copy, once the
	// case has ended (nil: nothing kept).
	validator *SchemaValidator
	memo      *judgeMemo
}

// judgeMemo keeps what several checks derive from one case's evidence,
// found once: the messages' schema validation (ACP-SCHEMA-1 and
// ACP-SCHEMA-2 read the same) and the plan updates (read by every plan
// check, some once per write). A case is judged twice (its progress line,
// then the run): the judge's copies of the evidence (judgeable) share it.
// What it keeps is read, never changed.
type judgeMemo struct {
	schema struct {
		mu         sync.Mutex
		v          *SchemaValidator // the validator the result is from
		wire       int              // the number of messages it covers
		bad, draft []schemaProblem
		n          int
	}
	plans struct {
		mu          sync.Mutex
		done        bool
		wire, steps int // the messages and steps the plans are from
		plans       []planObs
	}
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
}

// StepResult is one step as run.
type StepResult struct {
	Index int    `json:"index"`
	Op    string `json:"op"`
	Proc  int    `json:"proc"`
	// Prompt is the 0-based prompt number (prompt steps only).
	Prompt int `json:"prompt"`
	// ReqSeq and RespSeq are the wire positions of the request and of the
	// last message seen when its answer arrived (-1 when not sent).
	ReqSeq   int             `json:"reqSeq"`
	RespSeq  int             `json:"respSeq"`
	Duration time.Duration   `json:"duration"`
	Result   json.RawMessage `json:"result,omitempty"`
	Error    string          `json:"error,omitempty"`
	Skipped  string          `json:"skipped,omitempty"`
	// Settle is how long the runner waited after the answer for both
	// wires to go quiet (prompt steps, and the last step); Settled says
	// why the wait ended.
	Settle  time.Duration `json:"settle,omitempty"`
	Settled string        `json:"settled,omitempty"`
}

// ProcResult is one agent process of a case.
type ProcResult struct {
	Index int      `json:"index"`
	Argv  []string `json:"argv"`
	// InProcess: the agent ran as a function in the runner's process
	// (Target.InProcess), not as a process.
	InProcess bool `json:"inProcess,omitempty"`
	// StartedAt is the offset from the case start; Startup the time from
	// process start to the initialize answer (process start + handshake).
	StartedAt time.Duration   `json:"startedAt"`
	Startup   time.Duration   `json:"startup"`
	Init      json.RawMessage `json:"init,omitempty"`
	// Shutdown says how the process ended; Exit its exit status.
	Shutdown string `json:"shutdown"`
	Exit     string `json:"exit"`
	// ExitedEarly: the process was gone before the runner closed its stdin.
	ExitedEarly    bool            `json:"exitedEarly,omitempty"`
	Stderr         string          `json:"stderr,omitempty"`
	ClientRequests []ClientRequest `json:"clientRequests,omitempty"`
	// Killed lists the descendants of the agent still running when it
	// ended (in its process group or out of it), which the runner killed.
	Killed []string `json:"killed,omitempty"`
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
	CallID        string
	Entries       []PlanEntry
	Null, Missing bool
	Bad           string // entries not decodable
}

func (p planObs) todos() []Todo {
	out := make([]Todo, 0, len(p.Entries))
	for _, e := range p.Entries {
		out = append(out, Todo{Content: e.Content, Status: e.Status})
	}
	return out
}

func sameTodos(a, b []Todo) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func todosString(ts []Todo) string {
	if len(ts) == 0 {
		return "[]"
	}
	parts := make([]string, len(ts))
	for i, t := range ts {
		parts[i] = fmt.Sprintf("%q %s", t.Content, t.Status)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// plans extracts the plan updates from the wire, each tied to the request
// it follows.
func (ev *Evidence) plans() []planObs {
	if ev.memo == nil {
		return ev.findPlans()
	}
	m := &ev.memo.plans
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.done || m.wire != len(ev.Wire) || m.steps != len(ev.Steps) {
		m.plans, m.wire, m.steps, m.done = ev.findPlans(), len(ev.Wire), len(ev.Steps), true
	}
	return m.plans
}

// findPlans finds the plan updates of the wire (plans).
func (ev *Evidence) findPlans() []planObs {
	var out []planObs
	// segment of each wire position: the last request the client sent.
	type seg struct {
		kind    string
		prompt  int
		respSeq int
	}
	bySeq := map[int]seg{}
	for _, s := range ev.Steps {
		if s.ReqSeq < 0 {
			continue
		}
		switch s.Op {
		case OpPrompt:
			bySeq[s.ReqSeq] = seg{kind: "prompt", prompt: s.Prompt, respSeq: s.RespSeq}
		case OpLoadSession:
			bySeq[s.ReqSeq] = seg{kind: "load", respSeq: s.RespSeq}
		default:
			bySeq[s.ReqSeq] = seg{kind: "", respSeq: s.RespSeq}
		}
	}
	// A plan that arrives in a prompt's segment before the model was even
	// asked anything for that prompt cannot show one of its writes: after a
	// load, it is the load's replay, late (sent after the answer).
	firstAsked := ev.firstRequestTimes()
	// A plan announced by a tool call of an earlier prompt is a replay too.
	callPrompt := map[string]int{}
	for _, w := range ev.Writes {
		callPrompt[w.CallID] = w.Prompt
	}
	cur, prev, curProc, lastCall := seg{}, seg{}, -1, ""
	for _, m := range ev.Wire {
		if m.Proc != curProc {
			cur, prev, curProc, lastCall = seg{}, seg{}, m.Proc, ""
		}
		if s, ok := bySeq[m.Seq]; ok && m.Dir == Sent {
			prev, cur, lastCall = cur, s, ""
			continue
		}
		if m.Dir != Received || m.Kind != KindNotification || m.Method != "session/update" {
			continue
		}
		var n struct {
			Params struct {
				Update map[string]json.RawMessage `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal([]byte(m.Line), &n) != nil {
			continue
		}
		var kind string
		_ = json.Unmarshal(n.Params.Update["sessionUpdate"], &kind)
		if kind == "tool_call" || kind == "tool_call_update" {
			var id string
			if json.Unmarshal(n.Params.Update["toolCallId"], &id) == nil {
				lastCall = id
			}
			continue
		}
		if kind != "plan" {
			continue
		}
		p := planObs{Seq: m.Seq, Proc: m.Proc, Segment: cur.kind, Prompt: cur.prompt, CallID: lastCall}
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
		raw, ok := n.Params.Update["entries"]
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
				_ = json.Unmarshal(e["content"], &pe.Content)
				if ev.Dialect.Name != DialectTodoWrite {
					// Trimming is todo_write's rule: other agents may show
					// content as the model sent it, and the canonical lists
					// are trimmed.
					pe.Content = strings.TrimSpace(pe.Content)
				}
				_ = json.Unmarshal(e["status"], &pe.Status)
				if pr, ok := e["priority"]; ok {
					pe.HasPriority = true
					_ = json.Unmarshal(pr, &pe.Priority)
				}
				p.Entries = append(p.Entries, pe)
			}
		}
		out = append(out, p)
	}
	return out
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
	// Inferred: IsError is not on the wire but inferred (see writes).
	Inferred bool
	Text     string
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

// writeObs is a scripted write and how the agent took it.
type writeObs struct {
	Write
	Result result
	// Accepted is the agent's verdict when the model saw a result, else
	// the case's expectation.
	Accepted bool
}

func (ev *Evidence) writes() []writeObs {
	out := make([]writeObs, 0, len(ev.Writes))
	for _, w := range ev.Writes {
		if w.Prompt >= ev.PromptsRun {
			continue // its prompt was never sent
		}
		o := writeObs{Write: w, Result: ev.resultOf(w.CallID)}
		if o.Result.Found && !o.Result.IsError && w.Reject && ev.Dialect.Name != DialectTodoWrite &&
			ev.Journal[o.Result.Request].ToolErrors == mockmodel.ToolErrorsPrefix && !ev.shown(w) {
			// OpenAI chat and Responses carry no error flag: the mock reads
			// the harness's "Error:" wording, which other agents do not use
			// (codex: "failed to parse function arguments: ..."). There, a
			// result for a call the case's rules would refuse is taken as a
			// refusal unless the agent showed its list as a plan: other
			// dialects have their own validation rules (the TW-VALID checks
			// are n/a for them), so either verdict is fine as long as the
			// plan agrees with it.
			o.Result.IsError, o.Result.Inferred = true, true
		}
		if o.Result.Found {
			o.Accepted = !o.Result.IsError
		} else {
			o.Accepted = !w.Reject
		}
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
		if p.Segment == "prompt" && p.Prompt == w.Prompt && sameTodos(p.todos(), w.Todos) {
			return true
		}
	}
	return false
}

// matching ties plan updates to writes. When the agent announces its tool
// calls with the model's call ids (tool_call / tool_call_update before the
// plan), each plan belongs to the call announced last before it
// (attributed). Otherwise the writes and plans of one prompt are matched
// greedily in order by content.
type matching struct {
	writes []writeObs
	plans  []planObs // prompt-segment plans, in wire order
	// attributed: plans are tied to calls by toolCallId.
	attributed bool
	// planOf[i] is the index in plans of the plan showing write i's list,
	// -1 when none.
	planOf []int
	// sent[i] are the plans tied to write i (attributed mode; in greedy
	// mode, the matched plan only).
	sent [][]int
	// matched[j] tells whether plans[j] shows an accepted write's list.
	matched []bool
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
	byID := map[string]int{}
	for i, w := range m.writes {
		byID[w.CallID] = i
		m.planOf[i] = -1
	}
	for j, p := range m.plans {
		if i, ok := byID[p.CallID]; ok && p.Prompt == m.writes[i].Prompt {
			m.attributed = true
			m.sent[i] = append(m.sent[i], j)
		}
	}
	if m.attributed {
		for i, w := range m.writes {
			if !w.Accepted || !w.Shaped {
				continue
			}
			for _, j := range m.sent[i] {
				if sameTodos(m.plans[j].todos(), w.Todos) {
					m.planOf[i], m.matched[j] = j, true
					break
				}
			}
		}
		return m
	}
	next := 0
	lastPrompt := -1
	for i, w := range m.writes {
		if w.Prompt != lastPrompt {
			// Skip to this prompt's plans.
			for next < len(m.plans) && m.plans[next].Prompt < w.Prompt {
				next++
			}
			lastPrompt = w.Prompt
		}
		if !w.Accepted || !w.Shaped {
			continue
		}
		for j := next; j < len(m.plans) && m.plans[j].Prompt == w.Prompt; j++ {
			if sameTodos(m.plans[j].todos(), w.Todos) {
				m.planOf[i], m.matched[j] = j, true
				m.sent[i] = []int{j}
				next = j + 1
				break
			}
		}
	}
	return m
}

// gap returns the plans a rejected call i produced: attributed, the plans
// tied to it; otherwise the plans shown after the call and before the next
// accepted write of the same prompt is shown.
func (m matching) gap(i int) []planObs {
	if m.attributed {
		var out []planObs
		for _, j := range m.sent[i] {
			out = append(out, m.plans[j])
		}
		return out
	}
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
		if m.plans[j].Prompt == w.Prompt {
			out = append(out, m.plans[j])
		}
	}
	return out
}

// previousAccepted returns the list accepted before write i (any prompt).
func (m matching) previousAccepted(i int) ([]Todo, bool) {
	for k := i - 1; k >= 0; k-- {
		if m.writes[k].Accepted && m.writes[k].Shaped {
			return m.writes[k].Todos, true
		}
	}
	return nil, false
}

// offeredTool returns the dialect's tool spec from the first model request.
func (ev *Evidence) offeredTool() (llm.ToolSpec, []string, bool) {
	if len(ev.Journal) == 0 {
		return llm.ToolSpec{}, nil, false
	}
	var names []string
	var spec llm.ToolSpec
	found := false
	for _, t := range ev.Journal[0].Tools {
		names = append(names, t.Name)
		if t.Name == ev.Dialect.Tool {
			spec, found = t, true
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
func (ev *Evidence) allRequests() []mockmodel.JournalEntry {
	all := append(append([]mockmodel.JournalEntry(nil), ev.Journal...), ev.SideRequests...)
	sort.SliceStable(all, func(i, j int) bool { return all[i].Index < all[j].Index })
	return all
}

// promptsBeforeRestart is the number of prompt steps before the first
// restart (all prompts when there is none).
func (ev *Evidence) promptsBeforeRestart() int {
	n := 0
	for _, s := range ev.Case.Steps {
		if s.Op == OpRestart {
			return n
		}
		if s.Op == OpPrompt {
			n++
		}
	}
	return n
}
