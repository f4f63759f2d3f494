// Package unit is the unit tier (ginkgo label tier:unit): the session log,
// its JSONL store, the todo_write tool through the real tool registry, the
// stdio checklist, and the interop fixture recorded by the original harness
// (loaded, checked, and run through `todoharness log check|show`).
package unit
