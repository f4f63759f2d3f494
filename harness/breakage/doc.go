// Package breakage holds the todo tool's rule relaxations the broken test
// agents use (Rules, RelaxTodo): the bridge fault accept-duplicates and the
// mutant agent's tool-layer breakages. Which breakage must fail which
// conformance check is test knowledge: the table is conformance/breakage.
package breakage
