package driver

import (
	"fmt"
	"strings"
	"testing"
)

// planLine is a session/update plan of n entries.
func planLine(n int) string {
	var entries []string
	for i := range n {
		entries = append(entries, fmt.Sprintf(`{"content":"task %d","priority":"medium","status":"pending"}`, i))
	}
	return `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[` + strings.Join(entries, ",") + `]}}}`
}

// A valid plan is validated without an error for each status and
// priority it does not have: the schema's enums written as a oneOf of
// constants (PlanEntryStatus, PlanEntryPriority) cost a failed branch and
// its error apiece, for every entry.
func TestValidPlanBuildsNoBranchErrors(t *testing.T) {
	v, err := NewSchemaValidator()
	if err != nil {
		t.Fatal(err)
	}
	_, one := Classify([]byte(planLine(1)))
	_, many := Classify([]byte(planLine(101)))
	a := testing.AllocsPerRun(5, func() {
		if err := v.Validate(one, true); err != nil {
			t.Fatal(err)
		}
	})
	b := testing.AllocsPerRun(5, func() {
		if err := v.Validate(many, true); err != nil {
			t.Fatal(err)
		}
	})
	// 74 an entry when every other branch built its error, 45 without.
	if per := (b - a) / 100; per > 60 {
		t.Errorf("%.0f allocations an entry (%.0f for 1 entry, %.0f for 101): the other branches' errors are built", per, a, b)
	}
}

// The quick validator (enums for oneOfs of constants) accepts exactly what
// the schema as written accepts: on every session/update line the
// repository holds, each broken the ways TestUpdateByBranchAgreesWithTheUnion
// breaks them, and each with its enum values (status, priority, kind) made
// wrong, in the stable and the unstable schema; the errors are the
// schema's own.
func TestQuickValidatorAgrees(t *testing.T) {
	lines := updateLines(t)
	for _, schemaJSON := range [][]byte{acpSchemaJSON, acpUnstableSchemaJSON} {
		v, err := newSchemaValidator(schemaJSON)
		if err != nil {
			t.Fatal(err)
		}
		slow, err := newSchemaValidator(schemaJSON)
		if err != nil {
			t.Fatal(err)
		}
		if v.quick == nil {
			t.Fatal("no quick validator")
		}
		slow.quick = nil
		agree(t, [2]string{"quick", "as written"}, v, slow, lines, func(l string) []string {
			return append(mutations(t, l, v.updateKinds), enumMutations(l)...)
		}, true)
	}
}

// enumMutations are line with each value of a status, priority or kind
// field (at any depth) made another case, another word, a number or null.
func enumMutations(line string) []string {
	var out []string
	for _, field := range []string{`"status":"`, `"priority":"`, `"kind":"`} {
		i := strings.Index(line, field)
		if i < 0 {
			continue
		}
		start := i + len(field)
		end := start + strings.IndexByte(line[start:], '"')
		val := line[start:end]
		for _, bad := range []string{`"` + strings.ToUpper(val) + `"`, `"` + val + ` "`, `"done"`, `""`, `1`, `null`} {
			out = append(out, line[:start-1]+bad+line[end+1:])
		}
	}
	return out
}
