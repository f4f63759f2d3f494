// Package conformance is the conformance tier (ginkgo label
// tier:conformance): the black-box runner (package conformance) against the
// reference agent binary, built once per run. Every MUST and SHOULD check
// passes against the correct agent; a table breaks one behaviour at a time
// (the ACP bridge's $TODOHARNESS_FAULT faults, the test-only mutant agent's
// todo-tool mutations, a composition that allows parallel work, agents that
// hang, crash or print a banner) and asserts exactly which checks fail;
// every MUST check is failed by at least one of them. The expected-failures
// baseline, dialect detection and the CLI's exit status are tested here too.
package conformance
