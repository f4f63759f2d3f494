package conformance

import "testing"

func TestExpectedFailuresParse(t *testing.T) {
	es, err := ParseExpectedFailures([]byte("- id: TW-COUNTS-1\n  reason: we word it differently\n"), "b.yaml")
	if err != nil || len(es) != 1 || es[0].ID != "TW-COUNTS-1" {
		t.Fatalf("%v %v", es, err)
	}
	if es, err := ParseExpectedFailures(nil, "empty.yaml"); err != nil || len(es) != 0 {
		t.Errorf("empty file: %v %v", es, err)
	}
	for _, bad := range []string{"- id: X\n", "- reason: r\n", "- {id: X, reason: r, extra: 1}\n", "id: X\n"} {
		if _, err := ParseExpectedFailures([]byte(bad), "b.yaml"); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if err := validateExpected([]ExpectedFailure{{ID: "TW-PLAN-1", Reason: "r"}, {ID: "TW-PLAN-1", Reason: "r"}}, Catalogue()); err == nil {
		t.Error("duplicate entry accepted")
	}
}
