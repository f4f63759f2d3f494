package snapshot

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/internal/testutil"
)

// oneStepLog is a log of one model step at time t answering text, with a
// tool call when call is set.
func oneStepLog(t int64, text string, call string) *session.Loaded {
	var evs []session.Event
	add := func(typ string, data string) {
		evs = append(evs, session.Event{Type: typ, Seq: len(evs), Time: t, Data: json.RawMessage(data)})
	}
	add(session.TypeTurnStart, `{"turn":1}`)
	add(session.TypeStepStart, `{"turn":1,"step":1}`)
	add(session.TypeAssistantChunk, fmt.Sprintf(`{"turn":1,"step":1,"chunk":{"type":"text-delta","index":0,"text":%q}}`, text))
	finish := "stop"
	if call != "" {
		add(session.TypeAssistantChunk, fmt.Sprintf(`{"turn":1,"step":1,"chunk":{"type":"tool-call-delta","index":1,"id":%q,"name":"subagent","argumentsDelta":"{}"}}`, call))
		finish = "tool-calls"
	}
	add(session.TypeAssistantChunk, `{"turn":1,"step":1,"chunk":{"type":"finish","reason":{"kind":"`+finish+`"}}}`)
	add(session.TypeStepEnd, `{"turn":1,"step":1}`)
	return &session.Loaded{Events: evs}
}

// merge concatenates the steps of logs into one log (turn 1, steps 1..n).
func merge(logs ...*session.Loaded) *session.Loaded {
	out := &session.Loaded{}
	for i, l := range logs {
		for _, e := range l.Events {
			if e.Type == session.TypeTurnStart && i > 0 {
				continue
			}
			e.Data = json.RawMessage(strings.ReplaceAll(string(e.Data), `"step":1`, fmt.Sprintf(`"step":%d`, i+1)))
			e.Seq = len(out.Events)
			out.Events = append(out.Events, e)
		}
	}
	return out
}

func texts(t *testing.T, logs []Log) ([]string, []string) {
	t.Helper()
	s, warnings, err := ScriptFromLogs("x", logs)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, turn := range s.Turns {
		out = append(out, turn.Text)
	}
	return out, warnings
}

// A subagent's steps are served when it asked: by time when the logs have
// times, after the parent step whose tool call started it when not.
func TestScriptFromLogsOrdersChildSteps(t *testing.T) {
	parent := merge(oneStepLog(100, "delegate", "c1"), oneStepLog(400, "after", ""))
	child := oneStepLog(200, "child", "")
	got, _ := texts(t, []Log{{"session.jsonl", parent}, {"session.1.jsonl", child}})
	if want := []string{"delegate", "child", "after"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("timed: %q, want %q", got, want)
	}
	untimed := merge(oneStepLog(0, "delegate", "c1"), oneStepLog(0, "after", ""))
	got, warnings := texts(t, []Log{{"session.jsonl", untimed}, {"session.1.jsonl", oneStepLog(0, "child", "")}})
	if want := []string{"delegate", "child", "after"}; !reflect.DeepEqual(got, want) {
		t.Fatalf("untimed: %q, want %q", got, want)
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "the logs have no times") {
		t.Fatalf("warnings %q, want the assumption stated", warnings)
	}
}

// The todo-plan session becomes two mock turns streamed in the recorded
// pieces, the tool call with its recorded id and arguments.
func TestScriptFromTheTodoPlanLog(t *testing.T) {
	path := filepath.Join(testutil.RepoRoot(), "fixtures", "interop", "deepseek-harness", "todo-plan", SessionFile)
	ld, err := session.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s, warnings, err := ScriptFromLogs("todo-plan", []Log{{SessionFile, ld}})
	if err != nil {
		t.Fatal(err)
	}
	if len(warnings) != 0 || len(s.Turns) != 2 {
		t.Fatalf("%d turns, warnings %q; want 2 and none", len(s.Turns), warnings)
	}
	first, second := s.Turns[0], s.Turns[1]
	if len(first.ToolCalls) != 1 || first.ToolCalls[0].ID != "call_00_OK2ZF1DYrsKHQQtxfQlJ0810" || first.ToolCalls[0].Name != "todo_write" ||
		!strings.Contains(first.ToolCalls[0].RawArguments, `"read the code"`) || len(first.ToolCalls[0].ArgumentDeltas) < 5 {
		t.Fatalf("turn 1 tool calls %+v", first.ToolCalls)
	}
	if first.ReasoningDeltas[0] != "The" || first.ReasoningDeltas[1] != " user" || strings.Join(first.ReasoningDeltas, "") != first.Reasoning {
		t.Fatalf("turn 1 reasoning deltas %q", first.ReasoningDeltas)
	}
	if !reflect.DeepEqual(second.TextDeltas, []string{"D", "ONE"}) || second.Finish != "stop" {
		t.Fatalf("turn 2 text deltas %q, finish %q", second.TextDeltas, second.Finish)
	}
}
