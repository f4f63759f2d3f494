package scenario

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/todoharness/todoharness/harness/acp/transcript"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/internal/jsonx"
)

// keptKind reports whether ACPGolden keeps a session/update kind: the todo
// list as the editor sees it. Thought and message chunks (free-form model
// text) are left out.
func keptKind(kind string) bool {
	switch kind {
	case "plan", "tool_call", "tool_call_update":
		return true
	}
	return false
}

// ACPGolden normalises a raw agent-to-client transcript (DESIGN.md
// "Goldens": session ids -> {{sessionId}}, cwd -> {{cwd}}, JSON-RPC ids
// renumbered from 1) and keeps the plan, tool_call and tool_call_update
// notifications, the answers carrying a stopReason, and error answers, one
// JSON object per line with its keys sorted (wire key order differs between
// JSON encoders and means nothing). It works on our wire and on the original
// implementation's stdout.golden.jsonl alike.
func ACPGolden(wire [][]byte, cwd string) ([]byte, error) {
	n := transcript.Normalizer{}
	if cwd != "" {
		n.Cwds = []string{cwd}
	}
	norm, err := n.Normalize(wire)
	if err != nil {
		return nil, fmt.Errorf("normalise ACP transcript: %w", err)
	}
	var out bytes.Buffer
	for _, line := range bytes.Split(norm, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		kind, isUpdate, err := transcript.UpdateKind(line)
		if err != nil {
			return nil, fmt.Errorf("normalise ACP transcript: %w", err)
		}
		var answer struct {
			Result struct {
				StopReason string `json:"stopReason"`
			} `json:"result"`
			Error json.RawMessage `json:"error"`
		}
		_ = json.Unmarshal(line, &answer) // the same line: it is JSON
		keep := (isUpdate && keptKind(kind)) || answer.Result.StopReason != "" || len(answer.Error) > 0
		if !keep {
			continue
		}
		var v any
		if err := json.Unmarshal(line, &v); err != nil {
			return nil, fmt.Errorf("normalise ACP transcript: %w", err)
		}
		b, err := jsonx.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("normalise ACP transcript: %w", err)
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

// LogGolden renders the structure of a session log, one event per line as
// "<type> <canonical JSON>": turn and step markers, user messages, tool
// calls (arguments parsed, keys sorted), tool results, todo writes, and for
// assistant messages only the types of their parts (and tool call ids).
// Assistant chunks, seq numbers and times are left out: they count tokens,
// not behaviour. Unknown event types appear by type only.
func LogGolden(events []session.Event) ([]byte, error) {
	var out bytes.Buffer
	for _, e := range events {
		var v any
		switch e.Type {
		case session.TypeAssistantChunk:
			continue
		case session.TypeTurnStart, session.TypeTurnEnd, session.TypeStepStart, session.TypeStepEnd,
			session.TypeUserMessage, session.TypeToolResult, session.TypeTodoWrite,
			session.TypeContextMessage, session.TypeSteeringMessage:
			if err := json.Unmarshal(e.Data, &v); err != nil {
				return nil, fmt.Errorf("event seq %d (%s): %w", e.Seq, e.Type, err)
			}
		case session.TypeToolCall:
			var d session.ToolCall
			if err := e.Decode(&d); err != nil {
				return nil, err
			}
			var args any = d.Arguments
			var parsed any
			if json.Unmarshal([]byte(d.Arguments), &parsed) == nil {
				args = parsed
			}
			v = map[string]any{"turn": d.Turn, "step": d.Step, "callId": d.CallID, "name": d.Name, "arguments": args}
		case session.TypeAssistantMessage:
			var d session.AssistantMessage
			if err := e.Decode(&d); err != nil {
				return nil, err
			}
			parts := make([]string, 0, len(d.Content))
			for _, p := range d.Content {
				if p.ID != "" {
					parts = append(parts, p.Type+":"+p.ID)
				} else {
					parts = append(parts, p.Type)
				}
			}
			v = map[string]any{"turn": d.Turn, "step": d.Step, "parts": parts}
		default:
			out.WriteString(e.Type + "\n")
			continue
		}
		b, err := jsonx.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("event seq %d (%s): %w", e.Seq, e.Type, err)
		}
		out.WriteString(e.Type)
		out.WriteByte(' ')
		out.Write(b)
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}
