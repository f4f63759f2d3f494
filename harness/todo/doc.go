// Package todo is the todo_write plugin: the model-facing tool that replaces
// the agent's whole task list on every call and records it as a todo/write
// event on the calling agent's session log. It writes only the event; UIs
// (the stdio checklist, the ACP plan) render it from the log.
package todo
