package conformance

import (
	"strings"
	"testing"
)

// FuzzUnmarshalEvidence is the evidence reader of `conform --judge`: any
// bytes either are refused with an error naming the file, or read as
// evidence that Judge judges without panicking.
func FuzzUnmarshalEvidence(f *testing.F) {
	for _, run := range []string{"reference", "fake-no-plan", "mutant-as-codex"} {
		savedLines(f, run, func(n int, line []byte) bool {
			f.Add(line)
			return n < 3
		})
	}
	f.Add([]byte(`{"format":1,"case":{"id":"x"},"dialect":{"name":"todo_write"}}`))
	f.Add([]byte(`{"format":1,"case":{"id":"x"},"dialect":{"name":"nope"}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ev, err := UnmarshalEvidence(data, "fuzz/evidence.json")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz/evidence.json") {
				t.Fatalf("the error does not name the file: %v", err)
			}
			return
		}
		if ev.Case == nil || ev.Case.ID == "" {
			t.Fatal("evidence without a case was read")
		}
		if err := knownDialect(ev.Dialect); err != nil {
			t.Fatalf("evidence with a dialect this version does not define was read: %v", err)
		}
		if _, err := Judge([]*Evidence{ev}, JudgeConfig{}); err != nil {
			return
		}
	})
}

// FuzzParseExpectedFailures is the baseline reader: any bytes are refused
// with an error naming the file, or read as entries that each have an id,
// a reason, and cases that are absent or name at least one case.
func FuzzParseExpectedFailures(f *testing.F) {
	f.Add([]byte("- id: TW-PLAN-1\n  reason: known\n"))
	f.Add([]byte("- id: TW-PLAN-1\n  reason: known\n  cases: [load-*, x]\n  match: /a+b/\n"))
	f.Add([]byte("- id: TW-PLAN-1\n  reason: known\n  cases: []\n"))
	f.Add([]byte("- &a {id: x, reason: y}\n- *a\n"))
	f.Add([]byte(""))
	f.Fuzz(func(t *testing.T, data []byte) {
		es, err := ParseExpectedFailures(data, "fuzz/base.yaml")
		if err != nil {
			if !strings.Contains(err.Error(), "fuzz/base.yaml") {
				t.Fatalf("the error does not name the file: %v", err)
			}
			return
		}
		for _, e := range es {
			if e.ID == "" || e.Reason == "" || (e.Cases != nil && len(e.Cases) == 0) {
				t.Fatalf("an entry read as %+v", e)
			}
			_ = e.matches(e.ID, "case", "reason")
		}
	})
}
