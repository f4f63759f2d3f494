// Package breakage is the one table of the ways the test suites break an
// agent on purpose, and of the conformance checks each breakage must fail:
// test knowledge, kept beside the conformance tests that read it.
//
// Four broken agents carry the breakages — the reference agent with a
// bridge fault ($TODOHARNESS_FAULT, harness/acp), the mutant test agent
// with a broken todo tool ($TODOHARNESS_MUTANT, suites/conformance/mutant),
// the fake agent of the runner's own tests (conformance), and the example
// agent for agent authors (docs/examples/minimal_agent.py, $FLAW) — plus a
// composition and two shell commands. A breakage has one name whatever
// agent carries it; the Layer says which. The tier:conformance table, the
// "every MUST check can be failed" spec and the runner's fake-agent table
// iterate over All, so adding a MUST check means adding its ID to the
// Fails of the breakage that must fail it (or a new row), nowhere else. A
// row of the fake agent may carry its fault itself (Breakage.Mutation: an
// edit of the offered schema, a plan entry or a result text), so a new such
// row is this table's row alone.
// The rule relaxations the tool-layer breakages use are harness code:
// harness/breakage (Rules, RelaxTodo).
package breakage
