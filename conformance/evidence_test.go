package conformance

import (
	"encoding/json"
	"fmt"
	conformancefixtures "github.com/todoharness/todoharness/fixtures/conformance"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/todoharness/todoharness/conformance/breakage"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/mockmodel"
)

// The evidence in testdata/evidence was captured once from the fake agent,
// the reference agent with its faults, and the mutants (see
// testdata/evidence/README.md). These tests judge it and read it directly:
// every eval and the plan attribution, with no agent started.

var savedRuns sync.Map // archive name -> []*Evidence

// savedRun returns the captured run name (testdata/evidence/NAME.jsonl.gz).
func savedRun(t *testing.T, name string) []*Evidence {
	t.Helper()
	if evs, ok := savedRuns.Load(name); ok {
		return evs.([]*Evidence)
	}
	evs, err := ReadEvidenceArchive(filepath.Join(evidenceDir, name+".jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	savedRuns.Store(name, evs)
	return evs
}

// savedCase returns a copy of one case's evidence of a captured run, ready
// to judge (its slices are its own: a test may edit them).
func savedCase(t *testing.T, run, id string) *Evidence {
	t.Helper()
	for _, ev := range savedRun(t, run) {
		if ev.Case.ID == id {
			e := judgeable(ev, sharedValidator(t))
			e.memo = nil // an edit would not show through the run's memo
			e.Wire = append([]driver.WireMsg(nil), ev.Wire...)
			e.Steps = append([]driver.StepResult(nil), ev.Steps...)
			e.Procs = append([]driver.ProcResult(nil), ev.Procs...)
			e.Journal = append(e.Journal[:0:0], ev.Journal...)
			return e
		}
	}
	t.Fatalf("run %s has no case %s", run, id)
	return nil
}

// savedRunWants is what each captured run must fail: the registry's rows
// (conformance/breakage: fake-, bridge-, tool-, composition-NAME) and these.
var savedRunWants = map[string][]string{
	"fake-ok":          nil,
	"reference":        nil,
	"mutant-as-claude": nil, "mutant-as-codex": nil, "mutant-as-gemini": nil, "mutant-as-opencode": nil,
	"fake-garbage":   {"ACP-JSONRPC-1"},
	"fake-slow-exit": {"ACP-EXIT-1"},
	// Its own rules keep duplicates and show them untrimmed: todo_write's
	// rules refuse them.
	"fake-accept-dup-raw": {"TW-FINAL-1", "TW-PLAN-1", "TW-VALID-DUP"},
	// Refusals worded without "Error:" on a wire with no error flag: read
	// as refusals (their words, the failed ACP status), they fail only the
	// checks of how a todo_write refusal reaches the model.
	"fake-no-error-prefix": {"TW-VALID-BADSTATUS", "TW-VALID-DUP", "TW-VALID-EMPTY", "TW-VALID-NOTARRAY", "TW-VALID-TWOACTIVE", "TW-VALID-WS"},
	// Forced into another dialect, the fake offers todo_write and not that
	// dialect's tool: no scripted call reaches a todo tool of the agent, so
	// nothing is judged of the calls.
	"fake-no-error-prefix-as-opencode": {"TW-TOOL-1"},
	"fake-accept-empty-as-opencode":    {"TW-TOOL-1"},
	"fake-plan-on-reject-as-opencode":  {"ACP-SCHEMA-1", "TW-TOOL-1"},
	"fake-ok-as-codex":                 {"TW-TOOL-1"},
}

func savedRunNames(t *testing.T) []string {
	files, err := filepath.Glob(filepath.Join(evidenceDir, "*.jsonl.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no captured evidence in %s: %v", evidenceDir, err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".jsonl.gz"))
	}
	return names
}

// Every captured run, judged again, fails exactly what it failed when it
// ran: the registry's rows, and the table above for the others.
func TestJudgeSavedEvidence(t *testing.T) {
	t.Parallel()
	want := map[string][]string{}
	for k, v := range savedRunWants {
		want[k] = v
	}
	for _, b := range breakage.All() {
		if b.Layer != breakage.Protocol {
			want[string(b.Layer)+"-"+b.Name] = b.Fails
		}
	}
	names := savedRunNames(t)
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			w, ok := want[name]
			if !ok {
				t.Fatalf("no expectation for the captured run %s: add it to savedRunWants", name)
			}
			rep, err := Judge(savedRun(t, name), JudgeConfig{Checks: capturedChecks(t), Validator: sharedValidator(t)})
			if err != nil {
				t.Fatal(err)
			}
			// A check no captured case feeds (a check newer than the
			// capture, fed only by newer cases) cannot fail there.
			w = fedIn(rep, w)
			// Captured before built-in cases it lacks, the run may miss
			// the row's failures of the checks those cases feed (every
			// case checks, too), and nothing else.
			missing := casesNotIn(t, savedRun(t, name))
			w = slices.DeleteFunc(slices.Clone(w), func(id string) bool {
				return !slices.Contains(rep.FailedIDs(), id) && fedByAny(id, missing)
			})
			if got := rep.FailedIDs(); !reflect.DeepEqual(got, w) && !(len(got) == 0 && len(w) == 0) {
				dumpFailures(t, rep)
				t.Errorf("failed %v, want %v (captured without the cases %v)", got, w, caseIDs(missing))
			}
			if len(w) == 0 {
				for _, c := range rep.Checks {
					if c.Outcome != Pass && c.Outcome != NA && !(c.Outcome == NotRun && c.Reason == NoCaseFeeds) {
						t.Errorf("%s: %s %s", c.ID, c.Outcome, c.Reason)
					}
				}
			}
		})
	}
	for name := range savedRunWants {
		if !strings.Contains(" "+strings.Join(names, " ")+" ", " "+name+" ") {
			t.Errorf("savedRunWants lists %s, which is not captured (testdata/evidence)", name)
		}
	}
}

// fedIn keeps the IDs of ids that some case of the judged run feeds.
// casesNotIn lists the built-in cases a captured run has none of.
func casesNotIn(t *testing.T, evs []*Evidence) []*Case {
	t.Helper()
	cases, err := LoadCases(conformancefixtures.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, ev := range evs {
		have[ev.Case.ID] = true
	}
	return slices.DeleteFunc(cases, func(c *Case) bool { return have[c.ID] })
}

// fedByAny says whether one of cases feeds check id (every case feeds a
// check that applies to every case).
func fedByAny(id string, cases []*Case) bool {
	c, ok := catalogueIndex(Catalogue())[id]
	return len(cases) > 0 && ok && (c.Always || slices.ContainsFunc(cases, func(k *Case) bool { return k.Feeds(id) }))
}

func caseIDs(cases []*Case) []string {
	var ids []string
	for _, c := range cases {
		ids = append(ids, c.ID)
	}
	return ids
}

func fedIn(rep *Report, ids []string) []string {
	var out []string
	for _, id := range ids {
		if c, ok := rep.Check(id); ok && !(c.Outcome == NotRun && c.Reason == NoCaseFeeds) {
			out = append(out, id)
		}
	}
	return out
}

// evalCase is one eval on one captured case, perhaps edited.
type evalCase struct {
	check, run, caseID string
	edit               func(t *testing.T, ev *Evidence)
	want               Outcome
	reason             string // in the verdict's reason
}

// Each check fails somewhere in the captured evidence (or on an edit of
// it), with a reason that says what was seen; and passes on the reference
// agent.
func TestEvalsOnSavedEvidence(t *testing.T) {
	t.Parallel()
	cases := []evalCase{
		{"RUN-1", "bridge-crash-on-prompt", "empty-list", nil, Fail, "no answer to session/prompt: the agent exited (exit status 3)"},
		{"RUN-1", "fake-hang-on-prompt", "plan-basic", nil, Fail, "case timeout"},
		{"ACP-INIT-1", "reference", "plan-basic", func(t *testing.T, ev *Evidence) {
			ev.Steps[0].Result = []byte(`{"protocolVersion":2,"agentCapabilities":{}}`)
		}, Fail, "answered protocolVersion 2, want 1"},
		{"ACP-JSONRPC-1", "fake-garbage", "empty-list", nil, Fail, `line "hello, I am not JSON-RPC": not a JSON object`},
		{"ACP-SCHEMA-1", "bridge-no-priority", "empty-list", nil, Fail, "missing property 'priority'"},
		{"ACP-SCHEMA-2", "reference", "plan-basic", func(t *testing.T, ev *Evidence) {
			ev.Wire = append(ev.Wire, received(len(ev.Wire), `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":10,"size":100}}}`))
		}, Fail, "session/update usage_update"},
		{"ACP-EXIT-1", "fake-slow-exit", "empty-list", nil, Fail, "did not exit within 2s of stdin closing: SIGTERM"},
		{"ACP-TURN-1", "fake-updates-after-response", "plan-basic", nil, Fail, "prompt 1: 4 update(s) of the turn (tool_call, plan, tool_call_update, agent_message_chunk) came after its session/prompt answer, from "},
		{"ACP-TURN-1", "bridge-updates-after-response", "load-after-several", nil, Fail, "prompt 2: "},
		{"ACP-TOOLSTATUS-1", "reference", "reject-empty", func(t *testing.T, ev *Evidence) {
			// The refused call reported completed over ACP.
			n := 0
			for i, m := range ev.Wire {
				if m.UpdateKind() == "tool_call_update" && strings.Contains(m.Line, `"toolCallId":"call_2"`) {
					ev.Wire[i].Line, n = strings.Replace(m.Line, `"status":"failed"`, `"status":"completed"`, 1), n+1
				}
			}
			if n == 0 {
				t.Fatal("no tool_call_update of call_2 to edit")
			}
		}, Fail, "call_2: the agent reported its tool call completed, but its model was told an error (its result starts with \"Error:\")"},
		{"TW-TOOL-1", "fake-rename-tool", "tool-offered", nil, Fail, `no model request offers a "todo_write" tool (1 request(s)); tools offered: [todo_list]`},
		{"TW-SCHEMA-1", "tool-loose-schema", "tool-offered", nil, Fail, `parameters.required is [], want it to include "todos"`},
		{"TW-SCHEMA-2", "tool-extra-status", "tool-offered", nil, Fail, "want exactly"},
		{"TW-SCHEMA-2", "reference", "tool-offered", func(t *testing.T, ev *Evidence) {
			// The status a plain string, as opencode's todowrite has it.
			e := &ev.Journal[0]
			e.Tools = slices.Clone(e.Tools)
			for i, tool := range e.Tools {
				if tool.Name == "todo_write" {
					e.Tools[i].Parameters = []byte(`{"type":"object","required":["todos"],"properties":{"todos":{"type":"array","items":{"type":"object","required":["content","status"],"properties":{"content":{"type":"string"},"status":{"type":"string"}}}}}}`)
				}
			}
		}, Fail, "status is a free string (no enum); the contract wants an enum of the three values completed, in_progress, pending"},
		{"TW-SCHEMA-3", "reference", "tool-offered", func(t *testing.T, ev *Evidence) {
			// A session field and claude's activeForm required as well.
			e := &ev.Journal[0]
			e.Tools = slices.Clone(e.Tools)
			for i, tool := range e.Tools {
				if tool.Name == "todo_write" {
					e.Tools[i].Parameters = []byte(`{"type":"object","required":["todos","session"],"properties":{"session":{"type":"string"},"todos":{"type":"array","items":{"type":"object","required":["content","status","activeForm"],"properties":{"content":{"type":"string"},"activeForm":{"type":"string"},"status":{"type":"string","enum":["pending","in_progress","completed"]}}}}}}`)
				}
			}
		}, Fail, `the schema requires "session" of the parameters; "activeForm" on every item, which the contract's calls do not send`},
		{"TW-REPLACE-1", "bridge-no-plan", "replace", nil, Fail, "no plan shows exactly the new list"},
		{"TW-EMPTY-1", "bridge-no-plan", "empty-list", nil, Fail, "no plan with zero entries was sent"},
		{"TW-VALID-EMPTY", "tool-accept-empty", "reject-empty", nil, Fail, "was accepted: the model saw a result without the error flag"},
		// An acceptance on a wire with no error flag: the fix is to refuse
		// (the rule of that wire said); a refusal in words only: the fix is
		// the "Error:" prefix.
		{"TW-VALID-EMPTY", "tool-accept-empty", "reject-empty", nil, Fail, `; refuse such a call: answer it with an error result (on OpenAI chat completions a tool result carries no error flag: it counts as an error only when its text starts with "Error:") and send no plan`},
		{"TW-VALID-EMPTY", "fake-no-error-prefix", "reject-empty", nil, Fail, `"failed to parse function arguments: invalid todo: `},
		{"TW-VALID-EMPTY", "fake-no-error-prefix", "reject-empty", nil, Fail, `; on OpenAI chat completions a tool result carries no error flag: it counts as an error only when its text starts with "Error:" (start the refusal with it)`},
		{"TW-VALID-EMPTY", "tool-accept-empty", "reject-empty", func(t *testing.T, ev *Evidence) {
			for i := range ev.Journal {
				ev.Journal[i].ToolErrors = mockmodel.ToolErrorsFlag // as if on a wire with an error flag
			}
		}, Fail, "refuse such a call: answer it with an error result and send no plan"},
		{"TW-VALID-WS", "tool-accept-blank", "reject-whitespace", nil, Fail, "was accepted"},
		{"TW-VALID-DUP", "bridge-accept-duplicates", "reject-duplicate", nil, Fail, "call_2 was accepted"},
		{"TW-VALID-TWOACTIVE", "composition-allow-parallel-in-progress", "reject-two-active", nil, Fail, "call_2 was accepted"},
		{"TW-VALID-BADSTATUS", "bridge-plan-on-reject", "reject-bad-status", nil, Fail, "was rejected but a plan update followed it"},
		{"TW-VALID-NOTARRAY", "tool-string-list", "reject-not-array", nil, Fail, "was accepted"},
		{"TW-REJECT-KEEP-1", "bridge-plan-on-reject", "load-after-several", nil, Fail, "after the rejected call call_4 the plan changed to"},
		{"TW-COUNTS-1", "bridge-wrong-counts", "empty-list", nil, Fail, "reports 2 pending, the list has 1"},
		{"TW-COUNTS-2", "bridge-wrong-counts", "plan-basic", nil, Fail, "the original says"},
		{"TW-HISTORY-1", "bridge-echo-list", "empty-list", nil, Fail, "carries the list item \"read the parser code\""},
		{"TW-HISTORY-1", "bridge-echo-list", "plan-basic", nil, Fail, "; the tool result reports only the counts, the list travels in the call alone"},
		{"TW-HISTORY-2", "reference", "replace", func(t *testing.T, ev *Evidence) {
			// The agent sends the model its call with other arguments.
			for k := range ev.Journal {
				e := &ev.Journal[k]
				e.Messages = append(e.Messages[:0:0], e.Messages...)
				for i, m := range e.Messages {
					for j, p := range m.Content {
						if p.ID == "call_1" {
							m.Content = append(m.Content[:0:0], m.Content...)
							m.Content[j].Arguments = `{"todos":[]}`
							e.Messages[i] = m
						}
					}
				}
			}
		}, Fail, `the call call_1 has arguments {"todos":[]}`},
		{"TW-PLAN-1", "bridge-no-plan", "plan-basic", nil, Fail, "no plan update shows call_1"},
		{"TW-PLAN-1", "bridge-plan-on-reject", "reject-duplicate", nil, Fail, "a plan update (prompt 1, #9) shows"},
		{"TW-PLAN-1", "bridge-plan-on-reject", "reject-duplicate", nil, Fail, ": shows the list of the refused call call_2; the tool call announced last before it was call_2"},
		{"TW-FINAL-1", "bridge-no-plan", "replace", nil, Fail, "at the end of prompt 1 the client holds no plan; the last accepted list is call_2's"},
		{"TW-FINAL-1", "bridge-no-load-replay", "load-replay", nil, Fail, "at session/load the client holds no plan"},
		{"TW-FINAL-1", "bridge-plan-on-reject", "reject-empty", nil, Fail, "at the end of prompt 1 the client holds [\"read the parser code\" completed, \"\" in_progress] (#9); the last accepted list is call_1's"},
		{"ACP-SESSION-1", "reference", "load-replay", func(t *testing.T, ev *Evidence) {
			replayTo(t, ev, "another-session")
		}, Fail, `session/update(s) (first #13) name session "another-session", want the session being loaded, `},
		// Trimmed with Go's strings.TrimSpace: U+FEFF kept, U+0085 and
		// U+001F cut. The SHOULD check names each character; the MUST
		// checks take the lists for the writes' (TestTrimEdgesFailOnlyTheShould).
		{"TW-PLAN-TRIM-1", "fake-go-trim", "trim-edge-characters", nil, Fail, `plan #6 shows call_1's list with entry 1 "\ufeffread the parser code\ufeff" where the contract's trim gives "read the parser code": U+FEFF ZERO WIDTH NO-BREAK SPACE (BOM): trimmed by JavaScript's String.prototype.trim() (the contract's), kept by Go's strings.TrimSpace, Python's str.strip() and Rust's str::trim; U+0085 NEXT LINE (NEL): trimmed by Go's strings.TrimSpace, Python's str.strip() and Rust's str::trim, kept by JavaScript's String.prototype.trim() (the contract's); U+001F INFORMATION SEPARATOR ONE: trimmed by Python's str.strip(), kept by`},
		{"TW-PLAN-PRIORITY-1", "bridge-no-priority", "plan-basic", nil, Fail, "has no priority; ACP requires one on every plan entry: send high, medium or low"},
		{"TW-PLAN-PRIORITY-2", "bridge-no-priority", "plan-basic", nil, Fail, `want the constant "medium"`},
		{"TW-PLAN-NONNULL-1", "bridge-null-entries", "empty-list", nil, Fail, `has "entries": null`},
		{"TW-LOAD-CAP-1", "fake-no-load", "load-replay", nil, Fail, "does not advertise agentCapabilities.loadSession"},
		{"TW-LOAD-1", "bridge-replay-after-response", "load-replay", nil, Fail, "replayed only after the session/load answer"},
		{"TW-LOAD-1", "bridge-no-load-replay", "load-after-several", nil, Fail, "session/load replayed no plan"},
		{"TW-LOAD-2", "bridge-plan-on-reject", "load-after-several", nil, Fail, "the last plan replayed on load is"},
	}
	failing := map[string]bool{}
	for _, tc := range cases {
		failing[tc.check] = true
	}
	cat := catalogueIndex(Catalogue())
	// Every eval fails on real evidence: a captured case of this table,
	// or the run of a breakage row that fails a check of it (a check that
	// reuses an eval, a new validCheck, needs nothing more). A row's run
	// is real evidence judged in make test: TestRunFakeAgentFaults runs
	// the fake agent's rows, the tier:conformance table the others (not
	// the example agent's, which skip without python3), each failing
	// exactly its Fails; the clean runs (TestRunFakeAgentPasses, the
	// reference agent's spec) pass every check. So a new check with a new
	// eval needs a row here only to pin the words of its failure.
	evalFails := map[uintptr]bool{}
	for id := range failing {
		evalFails[reflect.ValueOf(cat[id].eval).Pointer()] = true
	}
	for _, b := range breakage.All() {
		if b.Layer == breakage.Example {
			continue
		}
		for _, id := range slices.Concat(b.Fails, b.FailsPooled) {
			evalFails[reflect.ValueOf(cat[id].eval).Pointer()] = true
		}
	}
	for _, c := range Catalogue() {
		if !evalFails[reflect.ValueOf(c.eval).Pointer()] {
			t.Errorf("%s: neither a captured case of this table nor a breakage row (conformance/breakage) fails its eval: add the row that must fail it", c.ID)
		}
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%s/%s", tc.check, tc.run, tc.caseID), func(t *testing.T) {
			ev := savedCase(t, tc.run, tc.caseID)
			c, ok := cat[tc.check]
			if !ok {
				t.Fatalf("no check %s", tc.check)
			}
			// Unedited, the reference agent passes it (where the case feeds it).
			if tc.edit != nil {
				if v := judgeCheck(ev, c); tc.run == "reference" && v.Outcome != Pass {
					t.Fatalf("before the edit: %s %q, want pass", v.Outcome, v.Reason)
				}
				tc.edit(t, ev)
			}
			v := judgeCheck(ev, c)
			if v.Outcome != tc.want || !strings.Contains(v.Reason, tc.reason) {
				t.Errorf("%s %q, want %s with %q", v.Outcome, v.Reason, tc.want, tc.reason)
			}
		})
	}
}

// received is a message from the agent at wire position seq.
func received(seq int, line string) driver.WireMsg {
	_, m := driver.Classify([]byte(line))
	m.Seq, m.Dir = seq, driver.Received
	return m
}

// planRow renders one observed plan for the table below.
func planRow(p planObs) string {
	after := ""
	if p.AfterResponse {
		after = " after-answer"
	}
	return fmt.Sprintf("#%d p%d %s/%d%s for %q: %s", p.Seq, p.Proc+1, p.Segment, p.Prompt+1, after, p.CallID, planString(p))
}

// dropToolCalls removes the tool_call and tool_call_update notifications:
// the plans can then only be matched to writes greedily, by content.
func dropToolCalls(t *testing.T, ev *Evidence) {
	var kept []driver.WireMsg
	for _, m := range ev.Wire {
		if k := m.UpdateKind(); k != "tool_call" && k != "tool_call_update" {
			kept = append(kept, m)
		}
	}
	ev.Wire = kept
}

// plans ties each plan update to the request it follows (and the tool call
// announced before it); match ties plans to writes, by toolCallId when the
// agent announces its calls, else greedily by content; gap is what a
// rejected call produced.
func TestPlanAttributionOnSavedEvidence(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, run, caseID string
		edit              func(t *testing.T, ev *Evidence)
		plans             []string
		planOf            []int
		gaps              []int // len(gap(i)) for each refused write, -1 for an accepted one
	}{
		{"a load replays before its answer", "fake-ok", "load-replay", nil, []string{
			`#6 p1 prompt/1 for "call_1": ["read the parser code" in_progress, "write the failing test" pending, "run the full test suite" pending]`,
			`#13 p2 load/1 for "": ["read the parser code" in_progress, "write the failing test" pending, "run the full test suite" pending]`,
		}, []int{0}, []int{-1}},
		{"a replay after the load's answer", "fake-replay-after-response", "load-replay", nil, []string{
			`#6 p1 prompt/1 for "call_1": ["read the parser code" in_progress, "write the failing test" pending, "run the full test suite" pending]`,
			`#14 p2 load/1 after-answer for "": ["read the parser code" in_progress, "write the failing test" pending, "run the full test suite" pending]`,
		}, []int{0}, []int{-1}},
		{"writes over prompts, a refusal, a load that replays the history", "reference", "load-after-several", nil, []string{
			`#6 p1 prompt/1 for "call_1": ["read the parser code" in_progress, "write the failing test" pending, "fix the tokenizer bug" pending]`,
			`#9 p1 prompt/1 for "call_2": ["read the parser code" completed, "write the failing test" in_progress, "fix the tokenizer bug" pending]`,
			`#15 p1 prompt/2 for "call_3": ["read the parser code" completed, "write the failing test" completed, "fix the tokenizer bug" in_progress]`,
			`#26 p2 load/1 for "call_1": ["read the parser code" in_progress, "write the failing test" pending, "fix the tokenizer bug" pending]`,
			`#29 p2 load/1 for "call_2": ["read the parser code" completed, "write the failing test" in_progress, "fix the tokenizer bug" pending]`,
			`#34 p2 load/1 for "call_3": ["read the parser code" completed, "write the failing test" completed, "fix the tokenizer bug" in_progress]`,
			`#42 p2 prompt/3 for "call_5": ["read the parser code" completed, "write the failing test" completed, "fix the tokenizer bug" completed]`,
		}, []int{0, 1, 2, -1, 3}, []int{-1, -1, -1, 0, -1}},
		{"the same, matched greedily (no tool calls announced)", "reference", "load-after-several", dropToolCalls, nil,
			[]int{0, 1, 2, -1, 3}, []int{-1, -1, -1, 0, -1}},
		{"a plan for a refused call", "bridge-plan-on-reject", "reject-duplicate", nil, []string{
			`#6 p1 prompt/1 for "call_1": ["read the parser code" in_progress, "write the failing test" pending]`,
			`#9 p1 prompt/1 for "call_2": ["read the parser code" completed, "write the failing test" in_progress, " write the failing test " pending]`,
		}, []int{0, -1}, []int{-1, 1}},
		{"a plan for a refused call, greedily", "bridge-plan-on-reject", "reject-duplicate", dropToolCalls, nil,
			[]int{0, -1}, []int{-1, 1}},
		{"no plan for a refused call", "fake-ok", "reject-duplicate", nil, []string{
			`#6 p1 prompt/1 for "call_1": ["read the parser code" in_progress, "write the failing test" pending]`,
		}, []int{0, -1}, []int{-1, 0}},
		{"no plan at all", "bridge-no-plan", "replace", nil, []string{}, []int{-1, -1}, []int{-1, -1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := savedCase(t, tc.run, tc.caseID)
			if tc.edit != nil {
				tc.edit(t, ev)
			}
			if tc.plans != nil {
				got := []string{}
				for _, p := range ev.plans() {
					got = append(got, planRow(p))
				}
				if !reflect.DeepEqual(got, tc.plans) {
					t.Errorf("plans:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.plans, "\n"))
				}
			}
			m := ev.match()
			var gaps []int
			for i, w := range m.writes {
				n := -1
				if !w.Accepted {
					n = len(m.gap(i))
				}
				gaps = append(gaps, n)
			}
			if !reflect.DeepEqual(m.planOf, tc.planOf) || !reflect.DeepEqual(gaps, tc.gaps) {
				t.Errorf("planOf %v, gaps %v; want %v, %v", m.planOf, gaps, tc.planOf, tc.gaps)
			}
		})
	}
}

// capturedChecks is the catalogue the saved runs were captured with: the
// checks that some saved case feeds. A check added since feeds none of them
// and would leave every saved run INCOMPLETE; it is proven live by its
// breakage row (suites/conformance), and its eval here by a captured case
// that fails it (TestEvalsOnSavedEvidence holds every eval to that).
func capturedChecks(t *testing.T) []Check {
	t.Helper()
	var cases []*Case
	for _, ev := range savedRun(t, "reference") {
		cases = append(cases, ev.Case)
	}
	return FedChecks(Catalogue(), cases)
}

// A long list is written short in a reason: its first items, or both
// lists compared where they first differ, with how many items are left
// out; an item's content is cut between characters.
func TestLongListsShortInReasons(t *testing.T) {
	t.Parallel()
	list := func(n int, change int) []Todo {
		var ts []Todo
		for i := range n {
			ts = append(ts, Todo{Content: fmt.Sprintf("step %d of the long plan", i+1), Status: "pending"})
		}
		if change >= 0 {
			ts[change].Status = "completed"
		}
		return ts
	}
	long := todosString(list(120, -1))
	if len(long) > 400 || !strings.Contains(long, `"step 1 of the long plan" pending`) || !strings.HasSuffix(long, "… 115 more] (120 items)") {
		t.Errorf("a 120-item list in a reason (%d bytes): %s", len(long), long)
	}
	if short := todosString(list(8, -1)); !strings.Contains(short, `"step 8 of the long plan"`) || strings.Contains(short, "more") {
		t.Errorf("an 8-item list is not whole: %s", short)
	}
	var entries []PlanEntry
	for _, t := range list(120, 86) {
		entries = append(entries, PlanEntry{Content: t.Content, Status: t.Status})
	}
	got, want := planVs(planObs{Entries: entries}, list(120, -1))
	for _, s := range []string{got, want} {
		if !strings.HasPrefix(s, "[… 85 before, ") || !strings.Contains(s, `"step 87 of the long plan"`) || !strings.HasSuffix(s, "… 30 more] (120 items)") {
			t.Errorf("compared where they differ (item 87): %s", s)
		}
	}
	if !strings.Contains(got, `"step 87 of the long plan" completed`) || !strings.Contains(want, `"step 87 of the long plan" pending`) {
		t.Errorf("the differing item is not shown in both:\n%s\n%s", got, want)
	}
	cut := todosString([]Todo{{Content: "x" + strings.Repeat("é", 100), Status: "pending"}})
	if !utf8.ValidString(cut) || len(cut) > itemShown+40 || !strings.Contains(cut, `"… pending`) {
		t.Errorf("a long item: %q", cut)
	}
}

// evidence.json stores what the agent sent at its size ("<" is one byte,
// not six as \u003c), within the bound --judge reads: evidence over it is
// written without the model requests' bodies, else refused; what is
// written reads back.
func TestEvidenceFileBound(t *testing.T) {
	t.Parallel()
	ev := *savedRun(t, "fake-ok")[0]
	ev.Wire = append(slices.Clone(ev.Wire), driver.WireMsg{Seq: len(ev.Wire), Dir: driver.Received, Kind: driver.KindInvalid, Line: strings.Repeat("<", 1<<20)})
	ev.Journal = slices.Clone(ev.Journal)
	if len(ev.Journal) == 0 {
		t.Fatal("the saved case has no journal")
	}
	ev.Journal[0].Raw = json.RawMessage(`"` + strings.Repeat("b", 200<<10) + `"`)
	b, err := MarshalEvidence(&ev)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) > 1<<20+300<<10 {
		t.Errorf("evidence with 1 MiB of \"<\" on the wire encodes to %d bytes", len(b))
	}
	dir := t.TempDir()
	d := filepath.Join(dir, ev.Case.ID)
	if err := os.Mkdir(d, 0o755); err != nil {
		t.Fatal(err)
	}
	// Over the bound with the bodies, within it without them.
	if err := writeEvidence(d, &ev, len(b)-100<<10); err != nil {
		t.Fatal(err)
	}
	evs, err := ReadEvidenceDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if got := evs[0]; len(got.Journal[0].Raw) != 0 || got.Wire[len(got.Wire)-1].Line != ev.Wire[len(ev.Wire)-1].Line {
		t.Errorf("written over the bound: raw body of %d bytes kept, wire line kept %v", len(got.Journal[0].Raw), got.Wire[len(got.Wire)-1].Line == ev.Wire[len(ev.Wire)-1].Line)
	}
	// Over the bound even without them: refused, naming the case.
	err = writeEvidence(d, &ev, 1<<20)
	if err == nil || !strings.Contains(err.Error(), "case "+ev.Case.ID) || !strings.Contains(err.Error(), "--judge reads") {
		t.Errorf("evidence over the bound: %v", err)
	}
}

// Issue 41 item 1: an agent that trims content with another common trim
// function (Go's here) shows lists that differ from the contract's only
// at U+FEFF, U+0085 and U+001F: every MUST check takes them for the
// writes' lists, and only TW-PLAN-TRIM-1 (SHOULD) fails, on every plan,
// the load's replay included.
func TestTrimEdgesFailOnlyTheShould(t *testing.T) {
	t.Parallel()
	ev := savedCase(t, "fake-go-trim", "trim-edge-characters")
	for _, c := range Catalogue() {
		if !c.Always && !ev.Case.Feeds(c.ID) {
			continue
		}
		v := judgeCheck(ev, c)
		if c.Shared && v.Outcome == NA {
			continue // a process and a session of its own: shares nothing
		}
		want := Pass
		if c.ID == "TW-PLAN-TRIM-1" {
			want = Fail
			if n := len(v.all()); n != 3 {
				t.Errorf("TW-PLAN-TRIM-1: %d failures, want one per plan (2 of the prompt, 1 replayed): %q", n, v.all())
			}
		}
		if v.Outcome != want {
			t.Errorf("%s (%s): %s %q, want %s", c.ID, c.Level, v.Outcome, v.Reason, want)
		}
	}
	// A case whose contents every trim function trims alike: not judged.
	if v := judgeOne(t, savedCase(t, "fake-go-trim", "plan-basic"), "TW-PLAN-TRIM-1"); v.Outcome != NotRun || !strings.Contains(v.Reason, "no accepted write has content the common trim functions trim differently (U+001C, U+001D, U+001E, U+001F, U+0085, U+180E, U+FEFF)") {
		t.Errorf("plan-basic: %s %q, want not-run", v.Outcome, v.Reason)
	}
}

// Evidence written before a step recorded its session/cancel (cancelSeq
// absent, 0) is judged on its wire: a cancel sent after the step's prompt
// reached the step; without one on the wire, the step was never reached.
func TestCancelOfOlderEvidenceIsReadFromItsWire(t *testing.T) {
	t.Parallel()
	ev := savedCase(t, "fake-go-trim", "cancel-after-write")
	k := slices.IndexFunc(ev.Steps, func(s driver.StepResult) bool { return s.CancelSeq > 0 })
	if k < 0 {
		t.Fatal("the captured cancel-after-write sent no session/cancel")
	}
	ev.Steps[k].CancelSeq, ev.Steps[k].CancelAfter = 0, ""
	if why := ev.notReached(); why != "" {
		t.Errorf("older evidence with a session/cancel on its wire: %q, want the step reached", why)
	}
	ev.Wire = slices.DeleteFunc(ev.Wire, func(m driver.WireMsg) bool { return m.Method == "session/cancel" })
	if why := ev.notReached(); !strings.Contains(why, "never sent its session/cancel") {
		t.Errorf("older evidence without a session/cancel: %q, want the cancel never sent", why)
	}
}
