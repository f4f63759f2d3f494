// Package stdio is the reference harness's terminal UI: it renders session
// events for a person at a terminal, notably the [todos] checklist printed on
// every todo/write.
package stdio
