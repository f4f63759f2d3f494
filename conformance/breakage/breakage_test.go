package breakage_test

import (
	"slices"
	"sort"
	"testing"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/breakage"
	"github.com/todoharness/todoharness/harness/acp"
)

// The registry is well formed: one row per name and layer, sorted known
// check IDs, and a row for every fault the bridge knows.
func TestRegistry(t *testing.T) {
	known := map[string]conformance.Check{}
	for _, c := range conformance.Catalogue() {
		known[c.ID] = c
	}
	seen := map[string]bool{}
	for _, b := range breakage.All() {
		if seen[b.Label()] {
			t.Errorf("%s: two rows", b.Label())
		}
		seen[b.Label()] = true
		if len(b.Fails) == 0 && b.Why == "" {
			t.Errorf("%s: fails nothing, and Why does not say why that is right", b.Label())
		}
		if b.Mutation != nil && b.Layer != breakage.Fake {
			t.Errorf("%s: a Mutation, which only the fake agent applies", b.Label())
		}
		if !sort.StringsAreSorted(b.Fails) || !sort.StringsAreSorted(b.FailsPooled) {
			t.Errorf("%s: Fails or FailsPooled not sorted: %v, %v", b.Label(), b.Fails, b.FailsPooled)
		}
		if b.FailsPooled != nil && b.Layer != breakage.Bridge {
			t.Errorf("%s: FailsPooled, which only the bridge rows' pooled runs (tier:conformance) prove", b.Label())
		}
		for _, id := range slices.Concat(b.Fails, b.FailsPooled) {
			if _, ok := known[id]; !ok {
				t.Errorf("%s: unknown check %s", b.Label(), id)
			}
		}
	}
	var faults []string
	for _, f := range acp.KnownFaults() {
		faults = append(faults, string(f))
	}
	bridge := breakage.Names(breakage.Bridge)
	slices.Sort(bridge)
	if !slices.Equal(faults, bridge) {
		t.Errorf("bridge rows %v, acp.KnownFaults %v: want one row per fault", bridge, faults)
	}
}

// Every MUST check is failed by some breakage of an agent the
// tier:conformance suite always runs (the suite proves each row's Fails):
// not the runner tests' fake agent, and not the example agent, which needs
// python3.
func TestEveryMustCheckHasABreakage(t *testing.T) {
	for _, c := range conformance.Catalogue() {
		if c.Level != conformance.MUST {
			continue
		}
		found := false
		for _, b := range breakage.All() {
			found = found || (b.Layer != breakage.Fake && b.Layer != breakage.Example && (b.FailsCheck(c.ID) || slices.Contains(b.Pooled(), c.ID)))
		}
		if !found {
			t.Errorf("%s (MUST): no breakage row fails it; add its ID to the Fails of the breakage that must fail it", c.ID)
		}
	}
}
