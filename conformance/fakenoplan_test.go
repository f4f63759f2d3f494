package conformance

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/harness/llm"
)

// A second fake agent, shaped as opencode 1.18 is against the mock: it
// offers its own todo tool (todowrite, status a free string, items with a
// priority and an id), sends no plan update at all, and reports every
// tool call over ACP, tool_call then tool_call_update with a final status
// and the tool's own output. Its rules are its own: any list of
// {content, status} strings is stored (empty content, duplicates, two
// tasks in progress, any status) and answered with the list as JSON; a
// list that is not an array, or an item without its content or status,
// fails. It is the fake of fakeagent_test.go with this tool in place of
// todo_write (mode "noplan"), and nothing stored to replay on load; the
// mode's other words:
//
//   - lying: the failed calls are reported completed over ACP (the model
//     is still told the error);
//   - mute: no tool_call_update at all, and every result is "ok" (a
//     result of no known form);
//   - no-status: no tool_call_update at all (Qwen Code sends none for its
//     todo_write), the results as they are;
//   - qwen: the tool is todo_write as qwen-code 0.24 has it: every item
//     requires an "id", a list without one is refused, and the results
//     are worded as its own.
const noPlanMode = "noplan"

const noPlanSchema = `{"type":"object","properties":{"todos":{"type":"array","items":{"type":"object","properties":{"content":{"type":"string"},"status":{"type":"string"},"priority":{"type":"string"},"id":{"type":"string"}},"required":["content","status","priority","id"]}}},"required":["todos"]}`

// ownTool is the fake's own todo tool in mode (nil: the fake's todo_write).
func ownTool(mode string) *fakeTool {
	words := strings.Split(mode, ",")
	if words[0] != noPlanMode {
		return nil
	}
	if slices.Contains(words, "probe-api") {
		probeAPI()
	}
	tool, schema, write := "todowrite", noPlanSchema, noPlanWrite
	if slices.Contains(words, "qwen") {
		tool, schema, write = "todo_write", qwenSchema, qwenWrite
	}
	return &fakeTool{name: tool, schema: schema, run: func(f *fakeState, id, name, args string) {
		f.notify(map[string]any{"sessionUpdate": "tool_call", "toolCallId": id, "title": name, "kind": "other", "status": "pending"})
		text, ok := "Error: unknown tool "+name, false
		if name == tool {
			text, ok = write(args)
		}
		status := map[bool]string{true: "completed", false: "failed"}[ok]
		if slices.Contains(words, "lying") {
			status = "completed"
		}
		if slices.Contains(words, "mute") {
			text = "ok"
		}
		f.answerTool(id, status, text, !slices.Contains(words, "mute") && !slices.Contains(words, "no-status"))
	}}
}

// probeAPI is what some agents do before their first model request: a
// reachability check (HEAD on the API's host) and a request on an endpoint
// the mock does not serve (GET /v1/models, refused): neither offers tools.
func probeAPI() {
	base := os.Getenv(driver.ModelURLEnv)
	c := &http.Client{Timeout: 10 * time.Second}
	for _, r := range []struct{ method, url string }{{http.MethodHead, strings.TrimSuffix(base, "/v1") + "/"}, {http.MethodGet, base + "/models"}} {
		req, err := http.NewRequest(r.method, r.url, nil)
		if err != nil {
			continue
		}
		if resp, err := c.Do(req); err == nil {
			resp.Body.Close()
		}
	}
}

const qwenSchema = `{"type":"object","properties":{"todos":{"type":"array","items":{"type":"object","properties":{"content":{"type":"string","minLength":1},"status":{"type":"string","enum":["pending","in_progress","completed"]},"id":{"type":"string","maxLength":500}},"required":["content","status","id"]}}},"required":["todos"]}`

// qwenWrite refuses an item without an id, as qwen-code's todo_write does
// (its words), else applies noPlanWrite's rules.
func qwenWrite(raw string) (string, bool) {
	var a struct {
		Todos []map[string]any `json:"todos"`
	}
	if json.Unmarshal([]byte(raw), &a) == nil {
		for _, it := range a.Todos {
			if id, _ := it["id"].(string); strings.TrimSpace(id) == "" {
				return `Each todo must have a non-empty "id" string of at most 500 characters.`, false
			}
		}
	}
	if text, ok := noPlanWrite(raw); !ok {
		return text, ok
	}
	return "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress.", true
}

// noPlanWrite applies the fake's own rules to a todowrite call: the output
// and whether the call succeeded.
func noPlanWrite(raw string) (string, bool) {
	var a struct {
		Todos json.RawMessage `json:"todos"`
	}
	if err := json.Unmarshal([]byte(raw), &a); err != nil {
		return "Error: invalid arguments: " + err.Error(), false
	}
	var items []map[string]any
	if err := json.Unmarshal(a.Todos, &items); err != nil || items == nil {
		return "Error: the todowrite tool was called with invalid arguments: todos: expected array", false
	}
	for i, it := range items {
		for _, k := range []string{"content", "status"} {
			if _, ok := it[k].(string); !ok {
				return fmt.Sprintf("Error: the todowrite tool was called with invalid arguments: todos[%d].%s: expected string", i, k), false
			}
		}
	}
	b, _ := json.MarshalIndent(items, "", "  ")
	return string(b), true
}

// rejectCases runs only the built-in reject-* cases (the probe aside).
func rejectCases(c *Config) {
	var cs []*Case
	for _, k := range c.Cases {
		if strings.HasPrefix(k.ID, "reject-") {
			cs = append(cs, k)
		}
	}
	c.Cases = cs
}

// caseVerdict is check id's verdict on case cid.
func caseVerdict(t *testing.T, rep *Report, id, cid string) CaseVerdict {
	t.Helper()
	c, ok := rep.Check(id)
	if !ok {
		t.Fatalf("no check %s", id)
	}
	for _, cv := range c.Cases {
		if cv.Case == cid {
			return cv
		}
	}
	t.Fatalf("%s was not judged on %s", id, cid)
	return CaseVerdict{}
}

// An agent that sends no plan and reports each call's fate over ACP is
// judged on what it did: the calls it stored (ACP completed, its own
// output) are accepted, whatever the case's rules would do with them;
// only the calls it failed count as refused (issue 49.1).
func TestNoPlanAgentVerdictsFromToolCallStatus(t *testing.T) {
	t.Parallel()
	rep := runFake(t, noPlanMode, rejectCases)
	if rep.Dialect != driver.DialectOpencode {
		t.Fatalf("dialect %s, want opencode (detected)", rep.Dialect)
	}
	// Two calls refused, in reject-missing-field and reject-not-array;
	// the other reject cases' calls were taken. With no plan shown, that
	// the plan stood after them is not something the agent showed: not
	// judged, never a pass, and said where a call was refused.
	keep, _ := rep.Check("TW-REJECT-KEEP-1")
	if keep.Outcome != NotRun {
		t.Fatalf("TW-REJECT-KEEP-1 %s %q, want not run (no plan shown)", keep.Outcome, keep.Reason)
	}
	refused := 0
	for _, cv := range keep.Cases {
		refuses := cv.Case == "reject-missing-field" || cv.Case == "reject-not-array"
		noPlan := strings.Contains(cv.Reason, "showed no plan update in this case, so whether the plan stood after the refused call call_2 cannot be seen")
		if cv.Outcome == Pass || refuses != noPlan {
			t.Errorf("TW-REJECT-KEEP-1 on %s: %s %q", cv.Case, cv.Outcome, cv.Reason)
		}
		if noPlan {
			refused++
		}
	}
	if refused != 2 {
		t.Errorf("TW-REJECT-KEEP-1 names %d refused calls, want the 2 the agent failed", refused)
	}
	// reject-duplicate's call_2 was stored: it is the last accepted list.
	fin := caseVerdict(t, rep, "TW-FINAL-1", "reject-duplicate")
	if fin.Outcome != Fail || !strings.Contains(fin.Reason, "the last accepted list is call_2's") {
		t.Errorf("TW-FINAL-1 on reject-duplicate: %s %q, want a failure naming call_2's list", fin.Outcome, fin.Reason)
	}
	for _, c := range rep.Cases {
		for _, w := range c.Evidence().writes() {
			if w.Unknown != "" || w.Accepted == w.Refused {
				t.Errorf("%s %s: accepted %v refused %v unknown %q", c.ID, w.CallID, w.Accepted, w.Refused, w.Unknown)
			}
		}
	}
	if c, _ := rep.Check("ACP-TOOLSTATUS-1"); c.Outcome != Pass {
		t.Errorf("ACP-TOOLSTATUS-1 %s %q, want pass (every status agrees with the result)", c.Outcome, c.Reason)
	}
	// Its status is a free string (49.3): the reason says so.
	if c, _ := rep.Check("TW-SCHEMA-2"); c.Outcome != Fail || !strings.Contains(c.Reason, "status is a free string (no enum); the contract wants an enum of the three values completed, in_progress, pending") {
		t.Errorf("TW-SCHEMA-2: %s %q, want a failure saying status is a free string", c.Outcome, c.Reason)
	}
	if c, _ := rep.Check("TW-VALID-DUP"); c.Outcome != NA {
		t.Errorf("TW-VALID-DUP %s, want n/a for the opencode dialect", c.Outcome)
	}
}

// A call reported completed while its model was told an error: the
// status check says so, on the tool_call_update that said it (49.1).
func TestNoPlanAgentStatusDisagreesWithResult(t *testing.T) {
	t.Parallel()
	rep := runFake(t, noPlanMode+",lying", rejectCases)
	cv := caseVerdict(t, rep, "ACP-TOOLSTATUS-1", "reject-not-array")
	if cv.Outcome != Fail || !strings.Contains(cv.Reason, "call_2: the agent reported its tool call completed, but its model was told an error") || len(cv.Lines) != 1 {
		t.Errorf("ACP-TOOLSTATUS-1 on reject-not-array: %s %q (lines %v), want a failure marking the update", cv.Outcome, cv.Reason, cv.Lines)
	}
	if c, _ := rep.Check("ACP-TOOLSTATUS-1"); c.Level != SHOULD {
		t.Errorf("ACP-TOOLSTATUS-1 is %s, want SHOULD", c.Level)
	}
}

// When nothing tells (no error flag, no plan, no final status, a result
// of no known form), the call's verdict is unknown: the checks that need
// it are not judged, say why, and never pass on it (49.1).
func TestNoPlanAgentSilentCallsAreNotJudged(t *testing.T) {
	t.Parallel()
	rep := runFake(t, noPlanMode+",mute", rejectCases)
	for _, id := range []string{"TW-REJECT-KEEP-1", "TW-FINAL-1", "TW-PLAN-1"} {
		if c, _ := rep.Check(id); c.Outcome != NotRun {
			t.Errorf("%s: %s %q, want not run", id, c.Outcome, c.Reason)
		}
		cv := caseVerdict(t, rep, id, "reject-duplicate")
		if cv.Outcome != NotRun || !strings.Contains(cv.Reason, "cannot tell whether the agent accepted or refused call_1") {
			t.Errorf("%s on reject-duplicate: %s %q, want not run: cannot tell", id, cv.Outcome, cv.Reason)
		}
	}
	if rep.Verdict == VerdictPass {
		t.Errorf("verdict %s with every call's fate unknown", rep.Verdict)
	}
}

// ToldAccepted is captured run name with every result its model read as
// a refusal in words ("failed to parse function arguments: ... in ARGS")
// reworded as an acceptance that still quotes the arguments: an agent
// that refuses a call (its ACP status failed, nothing shown) but tells its
// model the call went through. Each such call then fails several checks
// that share no wire line (for the report's tests). The saved run itself
// is left as it was.
func ToldAccepted(t *testing.T, name string) []*Evidence {
	t.Helper()
	const refusal = "failed to parse function arguments: "
	var out []*Evidence
	for _, ev := range savedRun(t, name) {
		e := *ev
		e.memo = &judgeMemo{}
		e.Journal = append(e.Journal[:0:0], ev.Journal...)
		for k := range e.Journal {
			je := &e.Journal[k]
			je.Messages = append(je.Messages[:0:0], je.Messages...)
			for i, m := range je.Messages {
				if m.Role != llm.RoleTool || !strings.HasPrefix(m.Text(), refusal) {
					continue
				}
				m.Content = []llm.Part{{Type: llm.PartText, Text: "Updated todo list: 0 pending, 0 in progress, 0 completed; " + strings.TrimPrefix(m.Text(), refusal)}}
				je.Messages[i] = m
			}
		}
		out = append(out, &e)
	}
	return out
}

// An agent whose first requests to the model offer no tools (a
// reachability check, an endpoint the mock does not serve) still has its
// todo tool found, in the first request that offers tools (issue 41.5).
func TestProbeFindsToolsPastRequestsWithoutTools(t *testing.T) {
	t.Parallel()
	rep := runFake(t, noPlanMode+",probe-api", rejectCases)
	if rep.Dialect != driver.DialectOpencode || rep.DialectSource != "detected" {
		t.Errorf("dialect %s (%s), want opencode, detected", rep.Dialect, rep.DialectSource)
	}
	if c, _ := rep.Check("TW-TOOL-1"); c.Outcome != Pass {
		t.Errorf("TW-TOOL-1 %s %q, want pass", c.Outcome, c.Reason)
	}
	for _, c := range rep.Cases {
		for _, e := range c.Evidence().Journal {
			if e.Wire == "" && e.Path == "/" {
				t.Errorf("case %s: HEAD / was journaled as a refused request (%s)", c.ID, e.Error)
			}
		}
	}
}

// An agent whose todo_write requires an id on every item refuses every
// well-formed call of the contract: the report says so before any check,
// naming the field, and the refusals are read as refusals (from its own
// words: it reports no tool call status), not as acceptances (41.5).
func TestEveryWellFormedCallRefusedIsSaidFirst(t *testing.T) {
	t.Parallel()
	few := func(c *Config) {
		var cs []*Case
		for _, k := range c.Cases {
			if k.ID == "plan-basic" || k.ID == "replace" || k.ID == "reject-duplicate" {
				cs = append(cs, k)
			}
		}
		c.Cases = cs
	}
	// Detected, it is the qwen dialect: the calls carry ids, and are taken.
	rep := runFake(t, noPlanMode+",qwen,no-status", few)
	if rep.Dialect != driver.DialectQwen || rep.Note != "" {
		t.Errorf("dialect %s (%s), note %q; want qwen, detected from the id its schema requires, and no note", rep.Dialect, rep.DialectSource, rep.Note)
	}
	if keep, _ := rep.Check("TW-REPLACE-1"); keep.Outcome != Fail || !strings.Contains(keep.Reason, "no plan shows exactly the new list") {
		t.Errorf("TW-REPLACE-1 %s %q, want the no-plan failure of calls it took", keep.Outcome, keep.Reason)
	}
	// Forced into the canonical dialect (as before the qwen dialect was
	// known), no call carries an id and every one is refused.
	rep = runFake(t, noPlanMode+",qwen,no-status", func(c *Config) { few(c); c.Dialect = driver.DialectTodoWrite })
	if !strings.Contains(rep.Note, `the agent refused every well-formed todo call of the run`) || !strings.Contains(rep.Note, `its schema requires "id" on every item`) {
		t.Errorf("note %q, want it to say every well-formed call was refused, for want of an id", rep.Note)
	}
	for _, c := range rep.Cases {
		for _, w := range c.Evidence().writes() {
			if w.Accepted {
				t.Errorf("%s %s accepted (%s); the agent refused it", c.ID, w.CallID, w.By)
			}
		}
	}
	if c, _ := rep.Check("TW-PLAN-1"); c.Outcome == Fail {
		t.Errorf("TW-PLAN-1 fails (%q) on calls the agent refused", c.Reason)
	}
}
