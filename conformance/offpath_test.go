package conformance

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/driver"
)

// The judge off the scripted path (issue 22): several writes in one model
// turn with the announcements interleaved as real agents do, a replay
// addressed to another session, every failure of a check against the
// baseline, and what the client holds at the end of a turn. The evidence
// is synthetic (synthRun) or a captured run, edited.

// twoWritesOneTurn is a case whose one model turn makes writes A, B, C
// (B refused when refuseB).
func twoWritesOneTurn(refuseB bool) string {
	reject := ""
	if refuseB {
		reject = "\n        reject: true"
	}
	return `title: several writes in one model turn
checks: [TW-PLAN-1, TW-REPLACE-1, TW-REJECT-KEEP-1, TW-VALID-BADSTATUS]
steps:
  - op: initialize
  - op: newSession
  - op: prompt
    text: go
script:
  - toolCalls:
      - name: todo_write
        arguments:
          todos: [{content: first task, status: in_progress}]
      - name: todo_write` + reject + `
        arguments:
          todos: [{content: first task, status: completed}, {content: second task, status: ` + map[bool]string{true: "done", false: "in_progress"}[refuseB] + `}]
      - name: todo_write
        arguments:
          todos: [{content: first task, status: completed}, {content: second task, status: completed}]
  - text: DONE
`
}

// Lists of twoWritesOneTurn, as plan entries.
var (
	listA    = `[{"content":"first task","status":"in_progress","priority":"medium"}]`
	listB    = `[{"content":"first task","status":"completed","priority":"medium"},{"content":"second task","status":"in_progress","priority":"medium"}]`
	listBBad = `[{"content":"first task","status":"completed","priority":"medium"},{"content":"second task","status":"done","priority":"medium"}]`
	listC    = `[{"content":"first task","status":"completed","priority":"medium"},{"content":"second task","status":"completed","priority":"medium"}]`
)

// Session updates of a synthetic turn ("s1" is the session the client created).
func upPlan(entries string) string {
	return `{"sessionUpdate":"plan","entries":` + entries + `}`
}
func upCall(id string) string {
	return `{"sessionUpdate":"tool_call","toolCallId":"` + id + `","title":"todo","status":"in_progress"}`
}
func upCallDone(id string) string {
	return `{"sessionUpdate":"tool_call_update","toolCallId":"` + id + `","status":"completed"}`
}

// upCallFailed reports call id refused (its final status failed).
func upCallFailed(id string) string {
	return `{"sessionUpdate":"tool_call_update","toolCallId":"` + id + `","status":"failed"}`
}

// synth builds the evidence of a run step by step, for session s1 (made
// by session/new). No model journal: a write is accepted unless the case
// refuses it (so the TW-VALID checks, which read the model's results, are
// not judged on it).
type synth struct {
	ev   *Evidence
	proc int
}

func newSynth(t *testing.T, caseYAML string) *synth {
	t.Helper()
	c, err := LoadCase([]byte(caseYAML), "synth.yaml", "synth")
	if err != nil {
		t.Fatal(err)
	}
	d, err := driver.DialectByName(driver.DialectTodoWrite)
	if err != nil {
		t.Fatal(err)
	}
	return &synth{ev: &Evidence{Format: EvidenceFormat, Case: c, Dialect: d, Writes: c.Writes()}}
}

func (s *synth) add(dir, line string) int {
	_, m := driver.Classify([]byte(line))
	m.Seq, m.Dir, m.Proc = len(s.ev.Wire), dir, s.proc
	s.ev.Wire = append(s.ev.Wire, m)
	return m.Seq
}

// step sends request op (initialize, newSession, prompt, loadSession),
// receives the updates ups for s1, then the answer.
func (s *synth) step(op string, ups ...string) {
	req := map[string]string{
		driver.OpInitialize:  `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`,
		driver.OpNewSession:  `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{"cwd":"/w","mcpServers":[]}}`,
		driver.OpPrompt:      `{"jsonrpc":"2.0","id":3,"method":"session/prompt","params":{"sessionId":"s1","prompt":[{"type":"text","text":"go"}]}}`,
		driver.OpLoadSession: `{"jsonrpc":"2.0","id":2,"method":"session/load","params":{"sessionId":"s1","cwd":"/w","mcpServers":[]}}`,
	}[op]
	result := map[string]string{
		driver.OpInitialize: `{"protocolVersion":1,"agentCapabilities":{"loadSession":true}}`, driver.OpNewSession: `{"sessionId":"s1"}`,
		driver.OpPrompt: `{"stopReason":"end_turn"}`, driver.OpLoadSession: `{}`,
	}[op]
	st := driver.StepResult{Index: len(s.ev.Steps), Op: op, Proc: s.proc, ReqSeq: s.add(driver.Sent, req)}
	if op == driver.OpPrompt {
		st.Prompt = s.ev.PromptsRun
		s.ev.PromptsRun++
	}
	for _, u := range ups {
		s.add(driver.Received, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s1","update":`+u+`}}`)
	}
	st.RespSeq = s.add(driver.Received, `{"jsonrpc":"2.0","id":0,"result":`+result+`}`)
	st.Result = json.RawMessage(result)
	s.ev.Steps = append(s.ev.Steps, st)
}

// restart ends the agent process: the next steps are another's.
func (s *synth) restart() {
	s.ev.Steps = append(s.ev.Steps, driver.StepResult{Index: len(s.ev.Steps), Op: driver.OpRestart, Proc: s.proc, ReqSeq: -1, RespSeq: -1})
	s.proc++
}

// synthRun is the evidence of a one-prompt case run against an agent that
// sent ups during the prompt turn.
func synthRun(t *testing.T, caseYAML string, ups ...string) *Evidence {
	t.Helper()
	s := newSynth(t, caseYAML)
	s.step(driver.OpInitialize)
	s.step(driver.OpNewSession)
	s.step(driver.OpPrompt, ups...)
	return judgeable(s.ev, nil)
}

// judgeOne judges check id on ev.
func judgeOne(t *testing.T, ev *Evidence, id string) verdict {
	t.Helper()
	c, ok := catalogueIndex(Catalogue())[id]
	if !ok {
		t.Fatalf("no check %s", id)
	}
	return judgeCheck(ev, c)
}

// Finding 1: a plan is tied to the write whose list it shows, whatever
// announcements come between. opencode announces call_2 before call_1's
// plan; the verdicts are those of the same plans announced in order.
func TestPlanAttributionIgnoresInterleaving(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		refuseB bool
		ups     []string
		checks  map[string]Outcome
		ties    []string // "#seq call" for each plan
	}{
		{"in order", false, []string{
			upCall("call_1"), upPlan(listA), upCallDone("call_1"),
			upCall("call_2"), upPlan(listB), upCallDone("call_2"),
			upCall("call_3"), upPlan(listC), upCallDone("call_3"),
		}, map[string]Outcome{"TW-PLAN-1": Pass, "TW-REPLACE-1": Pass, "TW-FINAL-1": Pass}, []string{"#6 call_1", "#9 call_2", "#12 call_3"}},
		{"opencode: the next call announced before the plan", false, []string{
			upCall("call_1"), upCallDone("call_1"), upCall("call_2"), upPlan(listA),
			upCallDone("call_1"), upCallDone("call_2"), upCall("call_3"), upPlan(listB), upCallDone("call_3"), upPlan(listC),
		}, map[string]Outcome{"TW-PLAN-1": Pass, "TW-REPLACE-1": Pass, "TW-FINAL-1": Pass}, []string{"#8 call_1", "#12 call_2", "#14 call_3"}},
		{"opencode: valid, invalid, valid", true, []string{
			upCall("call_1"), upCallDone("call_1"), upCall("call_2"), upPlan(listA),
			upCallDone("call_1"), upCallFailed("call_2"), upCall("call_3"), upPlan(listC), upCallDone("call_3"),
		}, map[string]Outcome{"TW-PLAN-1": Pass, "TW-REJECT-KEEP-1": Pass, "TW-FINAL-1": Pass}, []string{"#8 call_1", "#12 call_3"}},
		{"a plan for the refused call, announced as the next one", true, []string{
			upCall("call_1"), upPlan(listA), upCall("call_2"), upCall("call_3"), upPlan(listBBad), upPlan(listC),
			upCallDone("call_1"), upCallFailed("call_2"), upCallDone("call_3"),
		}, map[string]Outcome{"TW-PLAN-1": Fail, "TW-REJECT-KEEP-1": Fail, "TW-FINAL-1": Pass}, []string{"#6 call_1", "#9 ", "#10 call_3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := synthRun(t, twoWritesOneTurn(tc.refuseB), tc.ups...)
			for id, want := range tc.checks {
				if v := judgeOne(t, ev, id); v.Outcome != want {
					t.Errorf("%s: %s %q, want %s", id, v.Outcome, v.Reason, want)
				}
			}
			var ties []string
			for _, tie := range ev.match().ties {
				ties = append(ties, fmt.Sprintf("#%d %s", tie.Seq, tie.Call))
			}
			if strings.Join(ties, ", ") != strings.Join(tc.ties, ", ") {
				t.Errorf("ties %v, want %v", ties, tc.ties)
			}
		})
	}
}

// An agent that coalesces a turn's writes into one plan is described as
// such: TW-PLAN-1 fails (one plan per write), TW-FINAL-1 passes (the
// client ends on the last list).
func TestCoalescedWritesAreDescribed(t *testing.T) {
	t.Parallel()
	ev := synthRun(t, twoWritesOneTurn(false), upCall("call_1"), upCall("call_2"), upCall("call_3"), upPlan(listC),
		upCallDone("call_1"), upCallDone("call_2"), upCallDone("call_3"))
	v := judgeOne(t, ev, "TW-PLAN-1")
	if v.Outcome != Fail || !strings.Contains(v.Reason, "the agent coalesced the writes call_1 to call_3 of prompt 1 into one plan update (#8 shows call_3's list)") {
		t.Errorf("TW-PLAN-1: %s %q", v.Outcome, v.Reason)
	}
	if len(v.all()) != 2 {
		t.Errorf("TW-PLAN-1: %d failures, want one per write not shown: %q", len(v.all()), v.all())
	}
	if v := judgeOne(t, ev, "TW-FINAL-1"); v.Outcome != Pass {
		t.Errorf("TW-FINAL-1: %s %q", v.Outcome, v.Reason)
	}
}

// Finding 4: codex shows a turn's plans in reverse order; the client ends
// the turn on a stale list. TW-FINAL-1 says so; TW-PLAN-1 says the plans
// came out of order (not that a plan was "sent for" the wrong call).
func TestFinalPlanOfATurn(t *testing.T) {
	t.Parallel()
	ev := synthRun(t, twoWritesOneTurn(false),
		upCall("call_1"), upCall("call_2"), upCall("call_3"), upPlan(listC), upPlan(listB), upPlan(listA))
	v := judgeOne(t, ev, "TW-FINAL-1")
	want := `at the end of prompt 1 the client holds ["first task" in_progress] (#10) (call_1's list: stale); the last accepted list is call_3's`
	if v.Outcome != Fail || !strings.Contains(v.Reason, want) || v.Lines[10] == "" {
		t.Errorf("TW-FINAL-1: %s %q %v, want fail with %q marking #10", v.Outcome, v.Reason, v.Lines, want)
	}
	v = judgeOne(t, ev, "TW-PLAN-1")
	if v.Outcome != Fail || !strings.Contains(strings.Join(v.all(), "\n"), "shows the list of call_1 after a later write was shown: out of order") {
		t.Errorf("TW-PLAN-1: %s %q", v.Outcome, v.all())
	}
}

// replayTo readdresses the session/updates a load sent (process 2) to
// session id.
func replayTo(t *testing.T, ev *Evidence, id string) {
	t.Helper()
	n := 0
	for i, m := range ev.Wire {
		if m.Proc == 1 && m.Dir == driver.Received && m.Method == "session/update" {
			var u struct {
				Params struct {
					SessionID string `json:"sessionId"`
				} `json:"params"`
			}
			if err := json.Unmarshal([]byte(m.Line), &u); err != nil {
				t.Fatal(err)
			}
			ev.Wire[i].Line = strings.Replace(m.Line, `"sessionId":"`+u.Params.SessionID+`"`, `"sessionId":"`+id+`"`, 1)
			n++
		}
	}
	if n == 0 {
		t.Fatal("the premise: no update on process 2")
	}
}

// Finding 2: a load that replays the plan to another session restores
// nothing in an editor: ACP-SESSION-1 fails, and the plan checks do not
// count the replay.
func TestReplayToAnotherSession(t *testing.T) {
	t.Parallel()
	for _, caseID := range []string{"load-replay", "load-after-several"} {
		t.Run(caseID, func(t *testing.T) {
			ev := savedCase(t, "reference", caseID)
			for _, id := range []string{"ACP-SESSION-1", "TW-LOAD-1", "TW-LOAD-2", "TW-FINAL-1"} {
				if v := judgeOne(t, ev, id); v.Outcome != Pass {
					t.Fatalf("the premise: %s %s %q", id, v.Outcome, v.Reason)
				}
			}
			replayTo(t, ev, "another-session")
			for id, want := range map[string]string{
				"ACP-SESSION-1": `name session "another-session", want the session being loaded`,
				"TW-LOAD-1":     "session/load replayed no plan",
				"TW-LOAD-2":     "session/load replayed no plan",
				"TW-FINAL-1":    "at session/load the client holds no plan",
			} {
				if v := judgeOne(t, ev, id); v.Outcome != Fail || !strings.Contains(v.Reason, want) {
					t.Errorf("%s: %s %q, want fail with %q", id, v.Outcome, v.Reason, want)
				}
			}
		})
	}
}

// Finding 3: a baseline entry matches failures one by one. wrong-counts
// fails TW-COUNTS-1 on call_1 and on call_2 of the replace case: an entry
// for call_1 does not hide call_2.
func TestBaselineMatchesEachFailure(t *testing.T) {
	t.Parallel()
	c, _ := judgeSaved(t, "bridge-wrong-counts", nil, "replace").Check("TW-COUNTS-1")
	if len(c.Cases) != 1 || len(c.Cases[0].Failures) != 2 {
		t.Fatalf("the premise: TW-COUNTS-1 fails twice in replace: %+v", c.Cases)
	}
	for _, tc := range []struct {
		match   string
		outcome Outcome
		reason  string
	}{
		{"call_1", Fail, "call_2: the result"},
		{"call_2", Fail, "call_1: the result"},
		{"/call_[12]/", XFail, "call_1: the result"},
	} {
		t.Run(tc.match, func(t *testing.T) {
			es := []ExpectedFailure{{ID: "TW-COUNTS-1", Reason: "known", Cases: []string{"replace"}, Match: tc.match}}
			rep := judgeSaved(t, "bridge-wrong-counts", es, "replace")
			c, _ := rep.Check("TW-COUNTS-1")
			cv := c.Cases[0]
			if cv.Outcome != tc.outcome || !strings.HasPrefix(cv.Reason, tc.reason) {
				t.Errorf("%s %q, want %s %q", cv.Outcome, cv.Reason, tc.outcome, tc.reason)
			}
			if tc.outcome == Fail && rep.FailsRun(c) != true {
				t.Errorf("an unmatched failure does not fail the run")
			}
			expected := 0
			for _, f := range cv.Failures {
				if f.Expected != "" {
					expected++
				}
			}
			if want := map[Outcome]int{Fail: 1, XFail: 2}[tc.outcome]; expected != want {
				t.Errorf("%d failures marked expected, want %d: %+v", expected, want, cv.Failures)
			}
		})
	}
	// The summary shows the first failure and the count:
	// report_text_test.go's TestSummaryCountsTheFailuresOfACase.
}

// A load's replay sent after its answer, arriving only once the next
// prompt was sent, is still the load's: TW-LOAD-1 fails it as late, and
// the client holds the plan after the load (TW-FINAL-1 passes).
func TestLateReplayCountsForTheLoad(t *testing.T) {
	t.Parallel()
	s := newSynth(t, `title: late replay
checks: [TW-LOAD-1, TW-LOAD-2]
steps:
  - op: initialize
  - op: newSession
  - op: prompt
    text: go
  - op: restart
  - op: initialize
  - op: loadSession
  - op: prompt
    text: go on
script:
  - toolCalls:
      - name: todo_write
        arguments:
          todos: [{content: first task, status: in_progress}]
  - text: DONE
  - text: DONE
`)
	s.step(driver.OpInitialize)
	s.step(driver.OpNewSession)
	s.step(driver.OpPrompt, upCall("call_1"), upPlan(listA), upCallDone("call_1"))
	s.restart()
	s.step(driver.OpInitialize)
	s.step(driver.OpLoadSession)
	s.step(driver.OpPrompt, upPlan(listA)) // the replay, after the next request
	ev := judgeable(s.ev, nil)
	for id, want := range map[string]Outcome{"TW-LOAD-1": Fail, "TW-LOAD-2": Pass, "TW-FINAL-1": Pass, "ACP-SESSION-1": Pass} {
		if v := judgeOne(t, ev, id); v.Outcome != want {
			t.Errorf("%s: %s %q, want %s", id, v.Outcome, v.Reason, want)
		}
	}
}

// Issue 41 item 3: a hint follows from the evidence, or is not given.
// Plans in the order of the writes are never told to come in order, nor
// described as coalesced.
func TestHintsFollowTheEvidence(t *testing.T) {
	t.Parallel()
	untrimmedA := `[{"content":" first task","status":"in_progress","priority":"medium"}]`
	untrimmedC := `[{"content":"first task","status":"completed","priority":"medium"},{"content":"second task\t","status":"completed","priority":"medium"}]`
	for _, tc := range []struct {
		name        string
		ups         []string
		check       string
		want, never []string
	}{
		{"untrimmed plans, in order: TW-PLAN-1", []string{
			upCall("call_1"), upPlan(untrimmedA), upCallDone("call_1"), upCall("call_2"), upPlan(listB), upCallDone("call_2"),
			upCall("call_3"), upPlan(untrimmedC), upCallDone("call_3"),
		}, "TW-PLAN-1", []string{
			`no plan update shows call_1 (["first task" in_progress]); plans shown instead: #6 [" first task" in_progress] (shows the list of call_1 with its content untrimmed: show each item's content trimmed, as the contract trims it (JavaScript's String.prototype.trim()); the tool call announced last before it was call_1)`,
			`(shows the list of call_3 with its content untrimmed: show each item's content trimmed`,
		}, []string{"out of order", "order of the writes", "coalesced"}},
		{"untrimmed last plan: TW-FINAL-1", []string{
			upCall("call_1"), upPlan(listA), upCallDone("call_1"), upCall("call_2"), upPlan(listB), upCallDone("call_2"),
			upCall("call_3"), upPlan(untrimmedC), upCallDone("call_3"),
		}, "TW-FINAL-1", []string{
			`at the end of prompt 1 the client holds ["first task" completed, "second task\t" completed] (#12) (call_3's list, its content untrimmed); the last accepted list is call_3's ["first task" completed, "second task" completed]: show each item's content trimmed`,
		}, []string{"order of the writes", "stale"}},
		{"the last plan never sent: TW-FINAL-1 says it is stale, not out of order", []string{
			upCall("call_1"), upPlan(listA), upCallDone("call_1"), upCall("call_2"), upPlan(listB), upCallDone("call_2"),
			upCall("call_3"), upCallDone("call_3"),
		}, "TW-FINAL-1", []string{
			`at the end of prompt 1 the client holds ["first task" completed, "second task" in_progress] (#9) (call_2's list: stale); the last accepted list is call_3's ["first task" completed, "second task" completed]`,
		}, []string{"order of the writes"}},
		{"the previous list shown again in a write's stead: a repeat, not coalesced", []string{
			upCall("call_1"), upPlan(listA), upCallDone("call_1"), upCall("call_2"), upPlan(listA), upCallDone("call_2"),
			upCall("call_3"), upPlan(listC), upCallDone("call_3"),
		}, "TW-REPLACE-1", []string{
			`after call_2 (["first task" completed, "second task" in_progress]) no plan shows exactly the new list; plans shown instead: #9 ["first task" in_progress] (shows its list again (a repeat); the tool call announced last before it was call_2)`,
		}, []string{"coalesced", "out of order", "order of the writes"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v := judgeOne(t, synthRun(t, twoWritesOneTurn(false), tc.ups...), tc.check)
			all := strings.Join(v.all(), "\n")
			if v.Outcome != Fail {
				t.Fatalf("%s: %s %q, want fail", tc.check, v.Outcome, v.Reason)
			}
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("%s: %q\nwant it to say %q", tc.check, all, w)
				}
			}
			for _, n := range tc.never {
				if strings.Contains(all, n) {
					t.Errorf("%s: %q\nsays %q: the evidence does not show it", tc.check, all, n)
				}
			}
		})
	}
}
