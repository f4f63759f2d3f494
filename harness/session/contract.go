package session

// Invariant is one rule `todoharness log check` judges, with a stable ID.
type Invariant struct {
	ID   string
	Text string
}

// Invariants returns every rule `log check` judges, in the order it reports
// them. The LOG-* rules are checked by Reader and Checker (a log that
// breaks them does not load for appending); the TODO-* rules judge each
// todo/write payload against the todo_write contract (todolist.CheckWrite).
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
