package snapshot

import (
	"fmt"
	"sort"
	"strings"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/llm/cassette/fromlog"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/mockmodel"
)

// Log is one session log of a scenario: the parent (session.jsonl) or a
// child (session.N.jsonl, a subagent's).
type Log struct {
	// Name is the file name ("session.jsonl", "session.1.jsonl").
	Name string
	Log  *session.Loaded
}

// ScriptFromLogs rebuilds the model's answers from a scenario's logs: one
// mock turn per model step, in the order the model was asked, with the
// reasoning, text and tool calls of the step's assistant/message (its
// chunks when it has none), streamed in the recorded pieces (the deltas of
// its assistant/chunk events), with its finish reason and usage.
//
// Steps are ordered by their start time when every log has times; in logs
// without times (the original's committed-fixture format) the parent's
// steps come in file order and each child's steps follow the parent step
// that made the n-th tool call answered after the step ended, which holds
// for subagents run one at a time. The warnings say what was assumed or
// left out.
func ScriptFromLogs(name string, logs []Log) (*mockmodel.Script, []string, error) {
	type step struct {
		log   int
		order int
		time  int64
		turn  mockmodel.Turn
		calls int // tool calls the step made
	}
	var (
		all      []step
		warnings []string
		timed    = true
	)
	for li, l := range logs {
		steps, w, err := fromlog.Steps(l.Log.Events)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", l.Name, err)
		}
		for _, s := range w {
			warnings = append(warnings, l.Name+": "+s)
		}
		for i, s := range steps {
			t, w, err := turnOf(s)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: turn %d step %d: %w", l.Name, s.Turn, s.Step, err)
			}
			for _, x := range w {
				warnings = append(warnings, fmt.Sprintf("%s: turn %d step %d: %s", l.Name, s.Turn, s.Step, x))
			}
			at := l.Log.Events[s.Index].Time
			if at == 0 {
				timed = false
			}
			all = append(all, step{log: li, order: i, time: at, turn: t, calls: len(t.ToolCalls)})
		}
	}
	if len(all) == 0 {
		return nil, warnings, fmt.Errorf("%s: no model step with assistant/chunk events to rebuild an answer from", name)
	}
	if timed {
		sort.SliceStable(all, func(i, j int) bool { return all[i].time < all[j].time })
	} else if len(logs) > 1 {
		// Parent steps in order; child k after the parent step that made
		// a tool call, one child per such step, in file order.
		var parent, out []step
		children := map[int][]step{}
		for _, s := range all {
			if s.log == 0 {
				parent = append(parent, s)
			} else {
				children[s.log] = append(children[s.log], s)
			}
		}
		next := 1
		for _, s := range parent {
			out = append(out, s)
			for c := 0; c < s.calls && next < len(logs); c++ {
				out = append(out, children[next]...)
				next++
			}
		}
		for ; next < len(logs); next++ {
			out = append(out, children[next]...)
		}
		all = out
		warnings = append(warnings, "the logs have no times: each child's model steps are served after the parent step whose tool call started it (in file order)")
	}
	s := &mockmodel.Script{Name: name, SideText: "Untitled"}
	for _, x := range all {
		s.Turns = append(s.Turns, x.turn)
	}
	if err := s.Validate(); err != nil {
		return nil, warnings, err
	}
	return s, warnings, nil
}

// turnOf rebuilds one step's answer.
func turnOf(s fromlog.Step) (mockmodel.Turn, []string, error) {
	t := turnFromChunks(s.Chunks)
	var warnings []string
	if m := s.Message; m != nil && !agreesWith(m, t) {
		// The message is what the model's answer assembled to: it must
		// agree with the chunks, which are what the mock streams.
		warnings = append(warnings, "the assistant/message differs from what the chunks assemble to: the chunks are served")
	}
	switch t.Finish {
	case llm.FinishStop, llm.FinishToolCalls, llm.FinishLength, llm.FinishContentFilter:
	case "":
		warnings = append(warnings, "no finish chunk: served as a complete answer")
	default:
		warnings = append(warnings, fmt.Sprintf("finish %q has no mock equivalent: served as stop", t.Finish))
		t.Finish = llm.FinishStop
	}
	if t.Finish == llm.FinishStop && len(t.ToolCalls) > 0 {
		t.Finish = ""
	}
	return t, warnings, nil
}

// turnFromChunks is the mock turn that streams the chunks.
func turnFromChunks(chunks []llm.Chunk) mockmodel.Turn {
	var (
		t      mockmodel.Turn
		calls  = map[int]*mockmodel.ToolCall{} // by block index
		order  []int
		reason strings.Builder
		text   strings.Builder
	)
	for _, c := range chunks {
		switch c.Type {
		case llm.ChunkReasoningDelta:
			if c.Text != "" {
				t.ReasoningDeltas = append(t.ReasoningDeltas, c.Text)
				reason.WriteString(c.Text)
			}
		case llm.ChunkTextDelta:
			if c.Text != "" {
				t.TextDeltas = append(t.TextDeltas, c.Text)
				text.WriteString(c.Text)
			}
		case llm.ChunkToolCallDelta:
			idx := 0
			if c.Index != nil {
				idx = *c.Index
			}
			tc, ok := calls[idx]
			if !ok {
				tc = &mockmodel.ToolCall{}
				calls[idx] = tc
				order = append(order, idx)
			}
			addToolCallDelta(tc, c)
		case llm.ChunkUsage:
			if c.Usage != nil {
				u := *c.Usage
				t.Usage = &u
			}
		case llm.ChunkFinish:
			if c.Reason != nil {
				t.Finish = c.Reason.Kind
			}
		}
	}
	t.Reasoning, t.Text = reason.String(), text.String()
	for _, idx := range order {
		tc := *calls[idx]
		if tc.RawArguments == "" {
			tc.RawArguments = "{}"
			tc.ArgumentDeltas = nil
		}
		t.ToolCalls = append(t.ToolCalls, tc)
	}
	return t
}

// addToolCallDelta adds a tool-call chunk to the call it continues.
func addToolCallDelta(tc *mockmodel.ToolCall, c llm.Chunk) {
	if c.ID != "" {
		tc.ID = c.ID
	}
	if c.Name != "" {
		tc.Name = c.Name
	}
	if c.ArgumentsDelta != nil && *c.ArgumentsDelta != "" {
		tc.ArgumentDeltas = append(tc.ArgumentDeltas, *c.ArgumentsDelta)
		tc.RawArguments += *c.ArgumentsDelta
	}
}

// agreesWith reports whether the assembled message m has the reasoning,
// the text and the number of tool calls of turn t.
func agreesWith(m *session.AssistantMessage, t mockmodel.Turn) bool {
	var mr, mt strings.Builder
	nCalls := 0
	for _, p := range m.Content {
		switch p.Type {
		case llm.PartReasoning:
			mr.WriteString(p.Text)
		case llm.PartText:
			mt.WriteString(p.Text)
		case llm.PartToolCall:
			nCalls++
		}
	}
	return mr.String() == t.Reasoning && mt.String() == t.Text && nCalls == len(t.ToolCalls)
}
