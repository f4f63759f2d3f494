// Package todopolicy reads a todo tool's in_progress policy from the
// tool's description: single (at most one task in progress, the contract's
// rule) or parallel (several, when work runs in parallel; the original
// implementation's allowParallelInProgress). The conformance runner
// (`conform --policy auto`, from the tools an agent offers the model) and
// `log check --policy auto` (from the tools a session log recorded in its
// request headers) both use it; it depends on nothing of either.
package todopolicy
