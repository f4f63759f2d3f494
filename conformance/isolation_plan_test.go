package conformance

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/mockmodel"
)

// listShape is when a session of emptyListSession ran: its prompt start
// after the first session's, its model asked asked after its prompt and
// its plan shown planAt after it; announce and noLookup change what the
// agent sends.
type listShape struct {
	start, asked, planAt time.Duration
	announce, noLookup   bool
}

// emptyListSession is a session of pooled agent process 1 whose model's
// one turn writes an empty list (call_1) and calls a lookup tool
// (call_2), then answers DONE, at the times of sh: the shape of a
// claude-code-acp exploration's session (seed 1, scenario 7), where the
// agent shows the write as a plan update and announces only the lookup
// call. announce adds a tool_call of call_1 after the plan and the
// write's own plan after it (an agent that announces its writes, as the
// reference does); noLookup leaves out the lookup call.
func emptyListSession(id string, sh listShape) *Evidence {
	start, asked, planAt := sh.start, sh.asked, sh.planAt
	t0 := time.Date(2026, 12, 7, 12, 50, 4, 0, time.UTC).Add(start)
	sid := `"sessionId":"` + id + `-session"`
	var wire []driver.WireMsg
	add := func(dir string, at time.Duration, line string) {
		_, m := driver.Classify([]byte(line))
		m.Seq, m.Dir, m.Time = len(wire), dir, t0.Add(at)
		wire = append(wire, m)
	}
	update := func(at time.Duration, u string) {
		add(driver.Received, at, `{"jsonrpc":"2.0","method":"session/update","params":{`+sid+`,"update":`+u+`}}`)
	}
	ms := time.Millisecond
	add(driver.Sent, -3*ms, `{"id":1,"jsonrpc":"2.0","method":"initialize","params":{"protocolVersion":1}}`)
	add(driver.Received, -3*ms, `{"id":1,"jsonrpc":"2.0","result":{"protocolVersion":1}}`)
	add(driver.Sent, -2*ms, `{"id":2,"jsonrpc":"2.0","method":"session/new","params":{"cwd":"/tmp/x","mcpServers":[]}}`)
	add(driver.Received, -2*ms, `{"id":2,"jsonrpc":"2.0","result":{`+sid+`}}`)
	add(driver.Sent, 0, `{"id":3,"jsonrpc":"2.0","method":"session/prompt","params":{"prompt":[{"text":"Plan the work with your todo tool, then reply DONE.","type":"text"}],`+sid+`}}`)
	prompt := len(wire) - 1
	update(asked+ms, `{"sessionUpdate":"agent_thought_chunk","content":{"type":"text","text":"carry carry done."}}`)
	update(planAt, `{"sessionUpdate":"plan","entries":[]}`)
	if sh.announce {
		update(planAt+ms, `{"sessionUpdate":"tool_call","toolCallId":"call_1","title":"todo_write","kind":"other","status":"pending"}`)
		update(planAt+2*ms, `{"sessionUpdate":"plan","entries":[]}`)
	}
	calls := []mockmodel.ToolCall{{Name: "TodoWrite", Arguments: map[string]any{"todos": []any{}}}}
	results := []llm.Message{{Role: llm.RoleTool, ToolCallID: "call_1", Content: []llm.Part{{Type: "text", Text: "Todos have been modified successfully."}}}}
	if !sh.noLookup {
		update(planAt+3*ms, `{"sessionUpdate":"tool_call","toolCallId":"call_2","title":"explore_lookup","kind":"other","status":"pending"}`)
		update(planAt+4*ms, `{"sessionUpdate":"tool_call_update","toolCallId":"call_2","status":"failed"}`)
		calls = append(calls, mockmodel.ToolCall{Name: "explore_lookup", Arguments: map[string]any{"query": "the carry step"}})
		results = append(results, llm.Message{Role: llm.RoleTool, ToolCallID: "call_2", IsError: true, Content: []llm.Part{{Type: "text", Text: "<tool_use_error>No such tool available: explore_lookup</tool_use_error>"}}})
	}
	update(planAt+6*ms, `{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"DONE"}}`)
	add(driver.Received, planAt+7*ms, `{"id":3,"jsonrpc":"2.0","result":{"stopReason":"end_turn"}}`)
	return &Evidence{
		Dialect: driver.Dialect{Name: "claude", Tool: "TodoWrite", ListField: "todos", ContentField: "content", StatusField: "status"},
		Case: &Case{ID: id,
			Steps: []driver.Step{{Op: driver.OpInitialize}, {Op: driver.OpNewSession}, {Op: driver.OpPrompt, Text: "Plan the work with your todo tool, then reply DONE."}},
			Script: []mockmodel.Turn{
				{Reasoning: "carry carry done.", ToolCalls: calls},
				{Text: "DONE"},
			}},
		CaseRecord: driver.CaseRecord{
			Wire: wire,
			Journal: []mockmodel.JournalEntry{
				{Index: 0, TurnIndex: 0, Time: t0.Add(asked), Tools: []llm.ToolSpec{{Name: "TodoWrite"}, {Name: "explore_lookup"}}},
				{Index: 1, TurnIndex: 1, Time: t0.Add(planAt + 5*ms), Messages: results},
			},
			Steps: []driver.StepResult{
				{Index: 0, Op: driver.OpInitialize, ReqSeq: 0, RespSeq: 1},
				{Index: 1, Op: driver.OpNewSession, ReqSeq: 2, RespSeq: 3, Result: json.RawMessage(`{` + sid + `}`)},
				{Index: 2, Op: driver.OpPrompt, ReqSeq: prompt, RespSeq: len(wire) - 1},
			},
			Procs:      []driver.ProcResult{{Pooled: "a session of pooled agent process 1 (pid 7)"}},
			PromptsRun: 1,
		},
		Writes: []Write{{Turn: 0, Prompt: 0, CallID: "call_1", Todos: []Todo{}, Shaped: true, Args: map[string]any{"todos": []any{}}}},
	}
}

// isolationOf judges a and b, sessions of one pooled process, and gives
// the verdict of ACP-ISOLATION-1 on a.
func isolationOf(t *testing.T, a, b *Evidence) CaseVerdict {
	t.Helper()
	rep, err := Judge([]*Evidence{a, b}, JudgeConfig{Checks: capturedChecks(t), Validator: sharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	c, _ := rep.Check(ACPIsolation1)
	for _, cv := range c.Cases {
		if cv.Case == a.Case.ID {
			return cv
		}
	}
	t.Fatalf("no verdict of %s on case %s", ACPIsolation1, a.Case.ID)
	return CaseVerdict{}
}

// An empty plan a session is shown identifies nobody's list by itself: it
// is the session's own when its model wrote that empty list and the plan
// came after the model was asked for it, even when a tool call of another
// tool follows the plan (claude-code-acp shows a write as a plan and
// announces only the other calls: a claude exploration failed
// ACP-ISOLATION-1 on seed 1 scenario 7, "plan update #26 ([]), tied to no
// write of this session, shows exactly the list only case explore-9
// wrote"). The same plan shown before the model was asked anything, as a
// list the process kept from another session is, fails it, whatever write
// of the session the matching tied it to and whether a tool call follows
// it (with none, a list equal to the session's own coming write was no
// crossing before); so does one shown before an agent that announces its
// writes announced the session's.
func TestIsolationEmptyPlanOfTheSessionsOwnWrite(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	for _, tc := range []struct {
		name  string
		shape listShape
		want  Outcome
	}{
		{"its model wrote [] and was asked before the plan (claude-code-acp)", listShape{asked: 1 * ms, planAt: 3 * ms}, Pass},
		{"the plan came before the model was asked anything", listShape{asked: 2 * ms, planAt: 1 * ms}, Fail},
		// A list the process kept from another session, equal to the
		// session's own coming write, which the matching ties it to: no
		// tool call follows it.
		{"the plan came before the model was asked anything, no call announced", listShape{asked: 2 * ms, planAt: 1 * ms, noLookup: true}, Fail},
		{"the plan came before the agent announced the session's write", listShape{asked: 1 * ms, planAt: 3 * ms, announce: true}, Fail},
	} {
		a := emptyListSession("explore-7", tc.shape)
		b := emptyListSession("explore-9", listShape{asked: 1 * ms, planAt: 3 * ms})
		got := isolationOf(t, a, b)
		want := "plan update #6 ([]), tied to no write of this session, shows exactly the list only case explore-9 wrote (its call_1, prompt 1: [])"
		if got.Outcome != tc.want || tc.want == Fail && !strings.HasPrefix(got.Reason, want) {
			t.Errorf("%s: %s %q, want %s", tc.name, got.Outcome, got.Reason, tc.want)
		}
	}
}

// A session is shown nothing another session wrote after it saw it: in
// the claude exploration above, explore-7 was the first session of its
// pooled process, and explore-9 and explore-10, whose [] it was said to
// show, ran on that process after it had ended. A plan no write of the
// session explains (shown before its model was asked anything) showing a
// list another session wrote later, or an agent message carrying an item
// it wrote later, is no crossing; the same written before is one.
func TestIsolationLeavesWritesMadeAfterItSaw(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	const item = "an item only explore-9 wrote"
	for _, tc := range []struct {
		name  string
		start time.Duration // of explore-9, after explore-7's
		item  bool          // explore-9 writes item, explore-7's agent message carries it
		want  Outcome
	}{
		{"the list, written by a session that started after it ended", 20 * ms, false, Pass},
		{"the list, written before it was shown", -10 * ms, false, Fail},
		{"an item, written by a session that started after it ended", 20 * ms, true, Pass},
		{"an item, written before it was shown", -10 * ms, true, Fail},
	} {
		a := emptyListSession("explore-7", listShape{asked: 2 * ms, planAt: 1 * ms})
		b := emptyListSession("explore-9", listShape{start: tc.start, asked: 1 * ms, planAt: 3 * ms})
		want := "plan update #6 ([]), tied to no write of this session, shows exactly the list only case explore-9 wrote"
		if tc.item {
			b.Writes[0].Todos = []Todo{{Content: item, Status: "pending"}}
			k := len(a.Wire) - 1
			a.Wire = append(a.Wire[:k:k], received(k, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"explore-7-session","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"`+item+`"}}}}`), a.Wire[k])
			a.Wire[k].Time, a.Wire[k+1].Seq = a.Wire[k+1].Time, k+1
			a.Steps[2].RespSeq = k + 1
			want = fmt.Sprintf("the agent_message_chunk #%d carries %q, an item only case explore-9 wrote", k, item)
		}
		got := isolationOf(t, a, b)
		if got.Outcome != tc.want || tc.want == Fail && !strings.HasPrefix(got.Reason, want) {
			t.Errorf("%s: %s %q, want %s", tc.name, got.Outcome, got.Reason, tc.want)
		}
	}
}

// A plan entry whose content is no string shows no other session's
// list: a claude exploration (seed 2, 32 scenarios) failed ACP-ISOLATION-1
// on explore-14's plan [{"content":42,...}], the list of its own refused
// call, read as `["" pending]`, "the list only case explore-4 wrote" (a
// refused call of an empty content). The same plan with a content ""
// still fails it.
func TestIsolationPlanContentIsNoString(t *testing.T) {
	t.Parallel()
	ms := time.Millisecond
	for _, tc := range []struct {
		content string // as the plan entry's JSON
		want    Outcome
	}{
		{`42`, Pass},
		{`""`, Fail},
	} {
		a := emptyListSession("explore-14", listShape{asked: 1 * ms, planAt: 3 * ms})
		b := emptyListSession("explore-4", listShape{start: -10 * ms, asked: 1 * ms, planAt: 3 * ms})
		b.Writes[0].Todos, b.Writes[0].Reject = []Todo{{Content: "", Status: "pending"}}, true
		k := slices.IndexFunc(a.Wire, func(m driver.WireMsg) bool { return m.UpdateKind() == "plan" })
		a.Wire[k].Line = strings.Replace(a.Wire[k].Line, `"entries":[]`, `"entries":[{"content":`+tc.content+`,"status":"pending","priority":"medium"}]`, 1)
		got := isolationOf(t, a, b)
		want := `plan update #6 (["" pending]), tied to no write of this session, shows exactly the list only case explore-4 wrote`
		if got.Outcome != tc.want || tc.want == Fail && !strings.HasPrefix(got.Reason, want) {
			t.Errorf("content %s: %s %q, want %s", tc.content, got.Outcome, got.Reason, tc.want)
		}
	}
}
