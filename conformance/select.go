package conformance

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
)

// Selection is which cases and checks a run takes, as a command line says
// it (conform's --case, --check, --fed-only, --shard). Select applies it
// once, to the catalogue built once: the run (Config.Checks, Config.Only)
// and its judge (JudgeConfig) take what it chose.
type Selection struct {
	// Cases are glob patterns of the case IDs to run (none: every case);
	// a pattern that matches no case is an error naming the cases.
	Cases []string
	// Checks are glob patterns of the check IDs to report (none: every
	// check); only the cases that feed one of them run. A pattern that
	// matches no check is an error naming the checks.
	Checks []string
	// FedOnly judges only the checks the selected cases feed (and those
	// every case feeds).
	FedOnly bool
	// Shard is the 0-based slice of the cases this run is, of Shards
	// (Shards <= 1: every case), by position; the probe is in every shard.
	Shard, Shards int
}

// Selected is a Selection applied.
type Selected struct {
	// Catalogue is the catalogue it was made from: the Checks of the run
	// and of its judge.
	Catalogue []Check
	// Cases are the cases to run (nil when none was given: an exploration
	// alone).
	Cases []*Case
	// Only are the checks judged (nil: every check).
	Only []string
	// Unfed are, with FedOnly, the checks left out of the verdict as no
	// selected case feeds them.
	Unfed []string
}

// Select applies s to every case of a run (all): the cases --case names,
// of those the ones that feed a --check, of those the shard; the checks
// --check names, with FedOnly only those the cases feed. No case (all
// empty) is an error; all nil is a run of no cases at all (an exploration
// alone), whose checks are still selected.
func (s Selection) Select(all []*Case) (*Selected, error) {
	sel := &Selected{Catalogue: Catalogue()}
	var err error
	if all != nil {
		if sel.Cases, err = matchCases(all, s.Cases); err != nil {
			return nil, err
		}
	}
	if sel.Only, err = sel.matchChecks(s.Checks); err != nil {
		return nil, err
	}
	if sel.Cases != nil {
		if sel.Cases, err = sel.feeding(sel.Cases); err != nil {
			return nil, err
		}
	}
	sel.Cases = shard(sel.Cases, s.Shard, s.Shards)
	if s.FedOnly && len(sel.Cases) > 0 {
		sel.Only, sel.Unfed = sel.fed(sel.Cases)
	}
	return sel, nil
}

// SelectJudged applies the checks of s (Checks, FedOnly) to the cases of
// saved evidence, judged again: they all stay.
func (s Selection) SelectJudged(cases []*Case) (*Selected, error) {
	sel := &Selected{Catalogue: Catalogue(), Cases: cases}
	var err error
	if sel.Only, err = sel.matchChecks(s.Checks); err != nil {
		return nil, err
	}
	if s.FedOnly {
		sel.Only, sel.Unfed = sel.fed(cases)
	}
	return sel, nil
}

// matchCases keeps the cases a pattern of pats matches (every case
// without pats).
func matchCases(all []*Case, pats []string) ([]*Case, error) {
	ids := make([]string, 0, len(all))
	for _, c := range all {
		ids = append(ids, c.ID)
	}
	for _, pat := range pats {
		if _, err := path.Match(pat, ""); err != nil {
			return nil, fmt.Errorf("--case %q: %w", pat, err)
		}
		if !slices.ContainsFunc(ids, func(id string) bool { return globMatch(pat, id) }) {
			return nil, fmt.Errorf("--case %q matches no case%s", pat, Suggest(pat, ids, "cases"))
		}
	}
	cases := all
	if len(pats) > 0 {
		cases = nil
		for _, c := range all {
			if slices.ContainsFunc(pats, func(p string) bool { return globMatch(p, c.ID) }) {
				cases = append(cases, c)
			}
		}
	}
	if len(cases) == 0 {
		return nil, errors.New("no case selected")
	}
	return cases, nil
}

// matchChecks resolves check patterns to check IDs, in catalogue order
// (nil without patterns).
func (sel *Selected) matchChecks(pats []string) ([]string, error) {
	if len(pats) == 0 {
		return nil, nil
	}
	ids := CheckIDs(sel.Catalogue)
	for _, pat := range pats {
		if _, err := path.Match(pat, ""); err != nil {
			return nil, fmt.Errorf("--check %q: %w", pat, err)
		}
		if !slices.ContainsFunc(ids, func(id string) bool { return globMatch(pat, id) }) {
			return nil, fmt.Errorf("--check %q matches no check%s", pat, Suggest(pat, ids, "checks"))
		}
	}
	var out []string
	for _, c := range sel.Catalogue {
		if slices.ContainsFunc(pats, func(p string) bool { return globMatch(p, c.ID) }) {
			out = append(out, c.ID)
		}
	}
	return out, nil
}

// feeding keeps the cases that feed one of sel.Only (all of them when it
// is nil or names a check every case feeds).
func (sel *Selected) feeding(cases []*Case) ([]*Case, error) {
	if sel.Only == nil {
		return cases, nil
	}
	idx := map[string]Check{}
	for _, c := range sel.Catalogue {
		idx[c.ID] = c
	}
	var kept []*Case
	for _, c := range cases {
		if slices.ContainsFunc(sel.Only, func(id string) bool { return idx[id].Always || c.Feeds(id) }) {
			kept = append(kept, c)
		}
	}
	if len(kept) == 0 {
		return nil, fmt.Errorf("no selected case feeds %s", strings.Join(sel.Only, ", "))
	}
	return kept, nil
}

// fed splits the checks (sel.Only, or the catalogue's when nil) into
// those a case feeds (every case feeds an Always check) and the others,
// in catalogue order.
func (sel *Selected) fed(cases []*Case) (fed, unfed []string) {
	for _, c := range sel.Catalogue {
		if sel.Only != nil && !slices.Contains(sel.Only, c.ID) {
			continue
		}
		if c.Always || slices.ContainsFunc(cases, func(k *Case) bool { return k.Feeds(c.ID) }) {
			fed = append(fed, c.ID)
		} else {
			unfed = append(unfed, c.ID)
		}
	}
	return fed, unfed
}

// shard keeps the cases of shard i of n (by position), and the probe in
// every shard: it tells the dialect.
func shard(cases []*Case, i, n int) []*Case {
	if n <= 1 {
		return cases
	}
	var out []*Case
	for k, c := range cases {
		if k%n == i || c.Probe {
			out = append(out, c)
		}
	}
	return out
}

// globMatch reports whether the glob pat matches id (a malformed pattern
// matches nothing).
func globMatch(pat, id string) bool {
	ok, _ := path.Match(pat, id)
	return ok
}
