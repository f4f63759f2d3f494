package todolist

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// Finding is one way a recorded todo/write payload breaks the contract.
type Finding struct {
	ID  string
	Msg string
}

func (f Finding) String() string { return f.Msg + " [" + f.ID + "]" }

// CheckWrite judges the data of a todo/write event (a JSON object with a
// todos array) against the contract under policy p and returns every
// finding (none: the write is valid). The IDs are the TODO-* rules of
// `log check`. Unlike the tool it judges content as recorded, untrimmed.
func CheckWrite(data []byte, p Policy) []Finding {
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
		out = append(out, checkContent(i, item, seen)...)
		f, inProgress := checkStatus(i, item)
		out = append(out, f...)
		if inProgress {
			active++
		}
	}
	if !p.Allows(active) {
		out = append(out, Finding{"TODO-ACTIVE", fmt.Sprintf("%d todos are in_progress: invalid under the single policy (at most one); the parallel policy allows it (--policy parallel)", active)})
	}
	return out
}

// checkContent judges the content of todos[i]; seen maps each content
// met so far to its index.
func checkContent(i int, item map[string]json.RawMessage, seen map[string]int) []Finding {
	var content string
	c, ok := item["content"]
	switch {
	case !ok:
		return []Finding{{"TODO-ITEM", fmt.Sprintf("todos[%d] has no content", i)}}
	case json.Unmarshal(c, &content) != nil:
		return []Finding{{"TODO-ITEM", fmt.Sprintf("todos[%d].content is %s, not a string", i, jsonKind(c))}}
	case Blank(content):
		return []Finding{{"TODO-ITEM", fmt.Sprintf("todos[%d].content is empty once trimmed", i)}}
	}
	if j, dup := seen[content]; dup {
		return []Finding{{"TODO-UNIQUE", fmt.Sprintf("todos[%d].content %q repeats todos[%d]", i, content, j)}}
	}
	seen[content] = i
	return nil
}

// checkStatus judges the status of todos[i] and reports whether it is
// in_progress.
func checkStatus(i int, item map[string]json.RawMessage) ([]Finding, bool) {
	var status string
	st, ok := item["status"]
	switch {
	case !ok:
		return []Finding{{"TODO-STATUS", fmt.Sprintf("todos[%d] has no status", i)}}, false
	case json.Unmarshal(st, &status) != nil:
		return []Finding{{"TODO-STATUS", fmt.Sprintf("todos[%d].status is %s, not a string", i, jsonKind(st))}}, false
	case status == StatusInProgress:
		return nil, true
	case !KnownStatus(status):
		return []Finding{{"TODO-STATUS", fmt.Sprintf("todos[%d].status %q is not pending, in_progress or completed", i, status)}}, false
	}
	return nil, false
}

// jsonKind names the JSON type of raw for a finding.
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
