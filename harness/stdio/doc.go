// Package stdio is the reference harness's terminal UI: it renders session
// events for a person at a terminal, notably the [todos] checklist printed on
// every todo/write (RenderTodos), and runs `todoharness chat` (Chat): a
// readline prompt on a terminal, a plain line reader on piped input, each
// line one agent turn rendered off the session log as it is written.
package stdio
