package conformance

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// selectionCases are four cases: a probe that feeds the tool check, two
// plan cases and a load case.
func selectionCases() []*Case {
	return []*Case{
		{ID: "probe", Probe: true, Checks: []string{"TW-TOOL-1"}},
		{ID: "plan-a", Checks: []string{"TW-PLAN-1", "TW-REPLACE-1"}},
		{ID: "plan-b", Checks: []string{"TW-PLAN-1"}},
		{ID: "load", Checks: []string{"TW-LOAD-1", "TW-LOAD-2"}},
	}
}

func caseIDsOf(cs []*Case) []string {
	var ids []string
	for _, c := range cs {
		ids = append(ids, c.ID)
	}
	return ids
}

// Select chooses the cases and checks a command line names, once, from
// one catalogue: the checks in catalogue order (not by name), only the
// cases that feed them, the shard with the probe in each, and with
// FedOnly the checks the cases feed.
func TestSelect(t *testing.T) {
	cat := Catalogue()
	var always []string
	for _, c := range cat {
		if c.Always {
			always = append(always, c.ID)
		}
	}
	// inCatalogueOrder is ids as the catalogue orders them.
	inCatalogueOrder := func(ids ...string) []string {
		var out []string
		for _, c := range cat {
			if slices.Contains(ids, c.ID) {
				out = append(out, c.ID)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name       string
		s          Selection
		all        []*Case
		cases      []string
		only       []string
		unfed      bool // Unfed is not empty
		wantErr    string
		onlyIsNil  bool
		casesIsNil bool
	}{
		{name: "every case and check", all: selectionCases(), cases: []string{"probe", "plan-a", "plan-b", "load"}, onlyIsNil: true},
		{name: "case glob", s: Selection{Cases: []string{"plan-*"}}, all: selectionCases(), cases: []string{"plan-a", "plan-b"}, onlyIsNil: true},
		{name: "checks in catalogue order, the cases that feed them", s: Selection{Checks: []string{"TW-REPLACE-1", "TW-PLAN-1", "TW-LOAD-1"}}, all: selectionCases(),
			cases: []string{"plan-a", "plan-b", "load"}, only: inCatalogueOrder("TW-PLAN-1", "TW-REPLACE-1", "TW-LOAD-1")},
		{name: "a check every case feeds keeps every case", s: Selection{Checks: always[:1]}, all: selectionCases(),
			cases: []string{"probe", "plan-a", "plan-b", "load"}, only: always[:1]},
		{name: "shard 2 of 3 keeps the probe", s: Selection{Shard: 1, Shards: 3}, all: selectionCases(), cases: []string{"probe", "plan-a"}, onlyIsNil: true},
		{name: "fed only", s: Selection{Cases: []string{"load"}, FedOnly: true}, all: selectionCases(), cases: []string{"load"},
			only: inCatalogueOrder(append([]string{"TW-LOAD-1", "TW-LOAD-2"}, always...)...), unfed: true},
		{name: "no cases at all: the checks alone", s: Selection{Checks: []string{"TW-PLAN-1"}, FedOnly: true}, all: nil, casesIsNil: true, only: []string{"TW-PLAN-1"}},
		{name: "a case pattern matching nothing", s: Selection{Cases: []string{"plan-c"}}, all: selectionCases(), wantErr: `--case "plan-c" matches no case`},
		{name: "a malformed case pattern", s: Selection{Cases: []string{"["}}, all: selectionCases(), wantErr: `--case "[": syntax error in pattern`},
		{name: "a check pattern matching nothing", s: Selection{Checks: []string{"TW-NOPE-*"}}, all: selectionCases(), wantErr: `--check "TW-NOPE-*" matches no check`},
		{name: "a check no selected case feeds", s: Selection{Cases: []string{"load"}, Checks: []string{"TW-PLAN-1"}}, all: selectionCases(), wantErr: "no selected case feeds TW-PLAN-1"},
		{name: "no case loaded", all: []*Case{}, wantErr: "no case selected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sel, err := tc.s.Select(tc.all)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(sel.Catalogue) != len(cat) {
				t.Errorf("the selection's catalogue has %d checks, the catalogue %d", len(sel.Catalogue), len(cat))
			}
			if got := caseIDsOf(sel.Cases); !slices.Equal(got, tc.cases) || (sel.Cases == nil) != tc.casesIsNil {
				t.Errorf("cases %q (nil: %v), want %q", got, sel.Cases == nil, tc.cases)
			}
			if (sel.Only == nil) != tc.onlyIsNil || !slices.Equal(sel.Only, tc.only) {
				t.Errorf("only %q, want %q", sel.Only, tc.only)
			}
			if (len(sel.Unfed) > 0) != tc.unfed || slices.ContainsFunc(sel.Unfed, func(id string) bool { return slices.Contains(sel.Only, id) }) {
				t.Errorf("unfed %q beside only %q", sel.Unfed, sel.Only)
			}
		})
	}
}

// SelectJudged keeps every case of the saved evidence (no case feeding
// the checks is no error: the judge says NOT-RUN) and selects the checks
// as Select does.
func TestSelectJudged(t *testing.T) {
	cases := selectionCases()[3:] // load only
	sel, err := Selection{Checks: []string{"TW-PLAN-1", "TW-LOAD-1"}, FedOnly: true}.SelectJudged(cases)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(sel.Cases, cases) || !slices.Equal(sel.Only, []string{"TW-LOAD-1"}) || !slices.Equal(sel.Unfed, []string{"TW-PLAN-1"}) {
		t.Errorf("cases %q, only %q, unfed %q", caseIDsOf(sel.Cases), sel.Only, sel.Unfed)
	}
	if _, err := (Selection{Checks: []string{"X-*"}}).SelectJudged(cases); err == nil || !strings.Contains(err.Error(), `--check "X-*" matches no check`) {
		t.Errorf("a pattern matching no check: %v", err)
	}
}
