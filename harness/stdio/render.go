package stdio

import (
	"io"
	"strings"

	"github.com/todoharness/todoharness/harness/session"
)

// Glyph returns the checklist glyph of a status: [x] completed,
// [~] in_progress, [ ] pending (and anything unknown).
func Glyph(status string) string {
	switch status {
	case session.StatusCompleted:
		return "[x]"
	case session.StatusInProgress:
		return "[~]"
	default:
		return "[ ]"
	}
}

// RenderTodos returns the checklist printed on a todo/write: a blank line,
// "  [todos]", then "    <glyph> <content>" per item.
func RenderTodos(todos []session.TodoItem) string {
	var b strings.Builder
	b.WriteString("\n  [todos]\n")
	for _, t := range todos {
		b.WriteString("    ")
		b.WriteString(Glyph(t.Status))
		b.WriteString(" ")
		b.WriteString(t.Content)
		b.WriteString("\n")
	}
	return b.String()
}

// WriteTodos writes RenderTodos(todos) to w.
func WriteTodos(w io.Writer, todos []session.TodoItem) error {
	_, err := io.WriteString(w, RenderTodos(todos))
	return err
}
