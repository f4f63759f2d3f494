// Package todolist owns the todo_write contract's value rules and its
// in_progress policy: what a task list may hold once its schema is kept
// (content non-empty once trimmed and unique, a known status, at most one
// task in_progress under the single policy), how content is trimmed (Trim:
// as the contract's JavaScript does, which is not Go's strings.TrimSpace;
// EdgeSpaces are the characters common trim functions disagree on), and
// how a todo tool's description states the policy. The todo tool
// (harness/todo), the session log checker (harness/session), the
// conformance judge and the exploration oracle and generator (conformance,
// conformance/explore) all apply these rules; none keeps a copy. It
// depends on nothing of the harness.
package todolist
