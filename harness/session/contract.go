package session

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// Policy is how many todos may be in_progress at once.
type Policy string

// The todo_write policies: the contract's default allows one in_progress
// item; the original's current default composition allows several when work
// runs in parallel (allowParallelInProgress).
const (
	PolicySingle   Policy = "single"
	PolicyParallel Policy = "parallel"
)

// ParsePolicy accepts "single" or "parallel".
func ParsePolicy(s string) (Policy, error) {
	switch Policy(s) {
	case PolicySingle, PolicyParallel:
		return Policy(s), nil
	}
	return "", fmt.Errorf("unknown policy %q: want single or parallel", s)
}

// Invariant is one rule `todoharness log check` judges, with a stable ID.
type Invariant struct {
	ID   string
	Text string
}

// Invariants returns every rule `log check` judges, in the order it reports
// them. The LOG-* rules are checked by Reader and Checker (a log that
// breaks them does not load for appending); the TODO-* rules judge each
// todo/write payload against the todo_write contract (CheckTodoWrite).
func Invariants() []Invariant {
	return []Invariant{
		{"LOG-LINE", "every line is valid UTF-8 and decodes as a header or an event, within the line limit; only a last line with no trailing newline (torn) is dropped, with a warning"},
		{"LOG-HEADER", "line 1 is the session header: type \"session\" and a non-empty id"},
		{"LOG-FORMAT", "all events have seq envelopes (runtime format) or none do (committed-fixture format, seq synthesised in file order); packed chunk rows have texts/args, an index and dt deltas that fit them"},
		{"LOG-TYPE", "every event has a type; types this tool does not model are kept in order and warned about once per type"},
		{"LOG-SEQ", "seq is non-negative and strictly increasing"},
		{"LOG-DATA", "the data of every modelled event is a JSON object"},
		{"LOG-TURN", "turns do not nest and their numbers increase; turn/end names the open turn; every modelled event is inside an open turn"},
		{"LOG-STEP", "steps do not nest inside a turn; step markers name the open turn and step; a turn does not end inside a step; step-scoped events (assistant chunk/message, tool call/result) name the open turn and step"},
		{"LOG-TOOL", "a tool/call has a callId; a tool/result follows a tool/call with its callId in the same turn"},
		{"LOG-SURFACE", "surface events (user/message, assistant/message, tool/result, context/message, steering/message) carry surfaceOp; sourceEventSeqs name earlier events; no other modelled event carries either"},
		{"TODO-ARRAY", "a todo/write payload is an object whose todos is an array"},
		{"TODO-ITEM", "each todo is an object with a string content that is not empty once trimmed"},
		{"TODO-STATUS", "each todo's status is pending, in_progress or completed"},
		{"TODO-UNIQUE", "no two todos have the same content"},
		{"TODO-ACTIVE", "at most one todo is in_progress under the single policy (any number under the parallel policy)"},
	}
}

// Finding is one way a todo/write payload breaks the contract.
type Finding struct {
	ID  string
	Msg string
}

func (f Finding) String() string { return f.Msg + " [" + f.ID + "]" }

// CheckTodoWrite judges the data of a todo/write event against the
// todo_write contract under policy p and returns every finding (none: the
// write is valid).
func CheckTodoWrite(data []byte, p Policy) []Finding {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil || top == nil {
		return []Finding{{"TODO-ARRAY", "data is not a JSON object"}}
	}
	raw, ok := top["todos"]
	if !ok {
		return []Finding{{"TODO-ARRAY", "missing field \"todos\""}}
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return []Finding{{"TODO-ARRAY", fmt.Sprintf("todos is %s, not an array", jsonKind(raw))}}
	}
	var out []Finding
	seen := map[string]int{}
	active := 0
	for i, it := range items {
		var item map[string]json.RawMessage
		if err := json.Unmarshal(it, &item); err != nil || item == nil {
			out = append(out, Finding{"TODO-ITEM", fmt.Sprintf("todos[%d] is %s, not an object", i, jsonKind(it))})
			continue
		}
		var content string
		if c, ok := item["content"]; !ok {
			out = append(out, Finding{"TODO-ITEM", fmt.Sprintf("todos[%d] has no content", i)})
		} else if json.Unmarshal(c, &content) != nil {
			out = append(out, Finding{"TODO-ITEM", fmt.Sprintf("todos[%d].content is %s, not a string", i, jsonKind(c))})
		} else if strings.TrimSpace(content) == "" {
			out = append(out, Finding{"TODO-ITEM", fmt.Sprintf("todos[%d].content is empty once trimmed", i)})
		} else if j, dup := seen[content]; dup {
			out = append(out, Finding{"TODO-UNIQUE", fmt.Sprintf("todos[%d].content %q repeats todos[%d]", i, content, j)})
		} else {
			seen[content] = i
		}
		var status string
		st, ok := item["status"]
		switch {
		case !ok:
			out = append(out, Finding{"TODO-STATUS", fmt.Sprintf("todos[%d] has no status", i)})
		case json.Unmarshal(st, &status) != nil:
			out = append(out, Finding{"TODO-STATUS", fmt.Sprintf("todos[%d].status is %s, not a string", i, jsonKind(st))})
		case status == StatusInProgress:
			active++
		case status != StatusPending && status != StatusCompleted:
			out = append(out, Finding{"TODO-STATUS", fmt.Sprintf("todos[%d].status %q is not pending, in_progress or completed", i, status)})
		}
	}
	if active > 1 && p != PolicyParallel {
		out = append(out, Finding{"TODO-ACTIVE", fmt.Sprintf("%d todos are in_progress: invalid under the single policy (at most one); the parallel policy allows it (--policy parallel)", active)})
	}
	return out
}

func jsonKind(raw json.RawMessage) string {
	b := bytes.TrimSpace(raw)
	if len(b) == 0 {
		return "empty"
	}
	switch b[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}
