package conformance

import (
	"strings"
	"testing"
)

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

// --write-baseline's file reads back as written: each case ID one ID
// (even "evil, plan-basic"), the reason "TODO" whole, and a case ID or a
// reason with a line break never starts an entry of its own.
func TestWriteBaselineQuotes(t *testing.T) {
	ids := []string{"evil, plan-basic", "a]b", "x # y", "line\n- id: TW-PLAN-1\n  reason: forged", `q"uote`}
	var cvs []CaseVerdict
	for _, id := range ids {
		cvs = append(cvs, CaseVerdict{Case: id, Outcome: Fail, Reason: "seen\n- id: TW-LOAD-1 # x"})
	}
	c, _ := catalogueIndex(Catalogue())["TW-PLAN-1"]
	r := &Report{Checks: []CheckResult{{Check: c, Outcome: Fail, Cases: cvs}}}
	var b strings.Builder
	if err := r.WriteBaseline(&b); err != nil {
		t.Fatal(err)
	}
	es, err := ParseExpectedFailures([]byte(b.String()), "baseline")
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	if len(es) != 1 || es[0].ID != "TW-PLAN-1" || es[0].Reason != BaselineTODO || strings.Join(es[0].Cases, "|") != strings.Join(ids, "|") {
		t.Errorf("read back %+v, want one TW-PLAN-1 entry for the cases %q\n%s", es, ids, b.String())
	}
	if !strings.Contains(b.String(), `  reason: "TODO"`) {
		t.Errorf("the reason is not quoted:\n%s", b.String())
	}
}

// A reason or match YAML ends at " #" is reported with its line and how
// to quote it; a quoted one, or a comment after a quoted value, is not.
func TestExpectedFailuresCutByComment(t *testing.T) {
	es, err := ParseExpectedFailures([]byte("- id: TW-LOAD-1\n  reason: tracked in #123\n  match: a # b\n- id: TW-LOAD-2\n  reason: \"tracked in #123\" # a note\n"), "b.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if es[0].Reason != "tracked in" || len(es[0].Cut) != 2 {
		t.Fatalf("entry 1: reason %q, cut %q", es[0].Reason, es[0].Cut)
	}
	for i, want := range []string{`line 2: reason "tracked in": YAML reads the rest of the line, "#123", as a comment; if it belongs to the reason, quote it: reason: "tracked in #123"`,
		`line 3: match "a": YAML reads the rest of the line, "# b", as a comment`} {
		if !strings.Contains(es[0].Cut[i], want) {
			t.Errorf("cut %d: %q, want %q", i, es[0].Cut[i], want)
		}
	}
	if es[1].Reason != "tracked in #123" || len(es[1].Cut) != 0 {
		t.Errorf("entry 2: reason %q, cut %q", es[1].Reason, es[1].Cut)
	}
}
