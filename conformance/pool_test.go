package conformance

import (
	"slices"
	"strings"
	"testing"
)

// A case that failed as a session of a pooled process runs again alone
// when a MUST or SHOULD check failed on it, never for an INFO check alone
// (codex-acp fails ACP-SCHEMA-2 on every case: each would run twice), nor
// when it ran in a process of its own; the failure names the session and
// the checks with their reasons.
func TestPooledFailureIsAMustOrShouldFailure(t *testing.T) {
	t.Parallel()
	v, cat := sharedValidator(t), capturedChecks(t)
	level := map[string]Level{}
	for _, c := range cat {
		level[c.ID] = c.Level
	}
	var sawInfoOnly, sawMust bool
	// The saved runs have no case failing only INFO checks: one failing
	// one check is judged too with that check made INFO.
	infoOf := func(id string) []Check {
		out := slices.Clone(cat)
		for i := range out {
			if out[i].ID == id {
				out[i].Level = INFO
			}
		}
		return out
	}
	for _, name := range savedRunNames(t) {
		for _, saved := range savedRun(t, name) {
			if saved.NotRun != "" || saved.Interrupted != "" {
				continue
			}
			if pooledFailure(saved, cat, v) != nil {
				t.Fatalf("%s: case %s ran in a process of its own, yet is to run again alone", name, saved.Case.ID)
			}
			ev := *saved
			ev.Procs = slices.Clone(ev.Procs)
			if len(ev.Procs) == 0 {
				continue
			}
			ev.Procs[0].Pooled = "a session of pooled agent process 1 (pid 7)"
			failed := caseFailures(&ev, cat, v)
			var mustOrShould []string
			for _, id := range failed {
				if level[id] != INFO {
					mustOrShould = append(mustOrShould, id)
				}
			}
			pf := pooledFailure(&ev, cat, v)
			if len(failed) == 1 && ev.Aborted == "" {
				sawInfoOnly = true
				if got := pooledFailure(&ev, infoOf(failed[0]), v); got != nil {
					t.Errorf("%s: case %s failed only %s, made INFO, yet is to run again alone", name, ev.Case.ID, failed[0])
				}
			}
			switch {
			case len(mustOrShould) == 0 && ev.Aborted == "":
				if pf != nil {
					t.Errorf("%s: case %s failed only %v (INFO), yet is to run again alone", name, ev.Case.ID, failed)
				}
			case pf == nil:
				t.Errorf("%s: case %s failed %v pooled, and is not to run again alone", name, ev.Case.ID, mustOrShould)
			default:
				sawMust = true
				if !slices.Equal(pf.Failed, mustOrShould) || pf.Session != ev.Procs[0].Pooled || len(pf.Failures) != len(pf.Failed) {
					t.Errorf("%s: case %s: %+v, want failed %v", name, ev.Case.ID, pf, mustOrShould)
				}
				for i, f := range pf.Failures {
					if !strings.HasPrefix(f, pf.Failed[i]+": ") {
						t.Errorf("%s: case %s: failure %q does not name %s", name, ev.Case.ID, f, pf.Failed[i])
					}
				}
			}
		}
	}
	if !sawInfoOnly || !sawMust {
		t.Errorf("the saved evidence has a case failing only INFO checks: %v, one failing a MUST or SHOULD check: %v; want both", sawInfoOnly, sawMust)
	}
}
