package explore_test

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/todoharness/todoharness/cmd/todoharness/cli"
	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/breakage"
	"github.com/todoharness/todoharness/conformance/explore"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/internal/testutil"
	"github.com/todoharness/todoharness/internal/testutil/selfexec"
	mutantagent "github.com/todoharness/todoharness/suites/conformance/mutant"
)

// breakageTarget is the agent that carries b: in process, or for the
// protocol rows the reference agent as a process behind a shell (ok false
// for the fake and example agents, other programs whose rows repeat the
// bridge's and the tool's).
func breakageTarget(b breakage.Breakage) (driver.Target, bool) {
	switch b.Layer {
	case breakage.Protocol:
		if b.Name != "banner-on-stdout" {
			// silent-on-initialize answers nothing: no scenario runs past
			// the probe, so there is no case to generate or shrink (the
			// catalogue's probe reports it: suites/conformance).
			return driver.Target{}, false
		}
		return driver.Target{Name: "protocol " + b.Name,
			Command: append([]string{"/bin/sh", "-c", `echo "agent starting..."; exec "$0" "$@"`, selfexec.Path()}, cli.ReferenceAgentArgs("todoharness")[1:]...),
			Env:     selfexec.Environ("todoharness")}, true
	case breakage.Bridge:
		return reference(b.Name), true
	case breakage.Tool:
		return driver.Target{Name: "mutant " + b.Name, Command: []string{"mutant", "--model-url", "{{.BaseURL}}", "--sessions", "{{.Cwd}}/.sessions"},
			Env: []string{"TODOHARNESS_MUTANT=" + b.Name}, InProcess: mutantagent.InProcess}, true
	case breakage.Composition:
		if b.Name != "allow-parallel-in-progress" {
			return driver.Target{}, false
		}
		t := reference("")
		t.Name, t.Command = "composition "+b.Name, append(cli.ReferenceAgentArgs("todoharness"), "--composition", "{{.Cwd}}/composition.yaml")
		t.Files = []driver.File{{Dest: "composition.yaml", Src: "inline", Content: "plugins:\n  - name: todo\n    config:\n      allowParallelInProgress: true\n"}}
		return t, true
	}
	return driver.Target{}, false
}

// Every breakage of an in-process agent is found from a fixed seed in the
// first batch of scenarios (far inside the thousand the issue allows), and
// the first failure of a check the breakage must fail shrinks to a case of
// at most three ACP requests past the handshake (newSession, prompt,
// loadSession) and two model turns. Exploration may find more than the
// built-in catalogue does (a loosened schema lets a blank status reach the
// plan: ACP-SCHEMA-1): those are logged.
func TestExplorationFindsEveryBreakage(t *testing.T) {
	if testutil.RaceEnabled {
		t.Skip("under -race this exploration takes ten minutes and more; make test runs it again without -race (the Makefile's test target)")
	}
	if testing.Short() {
		t.Skip("-short: explores against every in-process breakage (a minute or two)")
	}
	v := validator(t)
	for _, b := range breakage.All() {
		target, ok := breakageTarget(b)
		if !ok {
			continue
		}
		t.Run(b.Label(), func(t *testing.T) {
			cfg := runConfig(t, target, v)
			cfg.Offer.ACPVersion = b.ACPVersion // a fault of the v2 surface shows on v2
			if target.InProcess == nil {
				cfg.Parallel = runtime.NumCPU() // never more processes than the CPUs serve
			}
			if b.FailsCheck("RUN-1") {
				cfg.Timeout = 3 * time.Second // it hangs: each case waits this out
			}
			// What the row fails in either mode: exploration's scenarios
			// may open a second session on a process (the crossings of
			// ACP-ISOLATION-1 that the catalogue shows only pooled).
			want := slices.Concat(b.Fails, b.FailsPooled)
			fails := func(id string) bool { return slices.Contains(want, id) }
			// The smallest case: newSession, prompt, loadSession and two
			// model turns; two sessions of one process take
			// newSession, prompt (a write, then its end), newSession,
			// prompt.
			maxRequests, maxTurns := 3, 2
			if fails(conformance.ACPIsolation1) {
				maxRequests, maxTurns = 4, 3
			}
			if len(want) == 0 {
				// A row that must fail nothing (an agent that sends what the
				// contract allows in another order): exploration must not
				// find a failure either.
				res, err := explore.Explore(context.Background(), explore.Config{Run: cfg, Seed: 1, N: 100, Batch: 16})
				if err != nil {
					t.Fatal(err)
				}
				for _, f := range res.Failures {
					t.Errorf("%s failed (%d scenarios, first index %d): the row fails nothing (%s)", f.Check, res.Scenarios, f.Index, b.Why)
				}
				return
			}
			// Every check of the row found is shrunk; at least one must end
			// as a case of at most three requests and two model turns.
			res, err := explore.Explore(context.Background(), explore.Config{Run: cfg, Seed: 1, N: 1000, Batch: 16, StopAtFailure: true, ShrinkRuns: 40,
				ShrinkIf: fails})
			if err != nil {
				t.Fatal(err)
			}
			var beyond, shrunk []string
			small := false
			for _, f := range res.Failures {
				if !fails(f.Check) {
					beyond = append(beyond, f.Check)
					continue
				}
				shrunk = append(shrunk, f.Check)
				if f.Requests <= maxRequests && f.Turns <= maxTurns && f.ShrinkError == "" {
					small = true
				}
				t.Logf("%s found in %d scenarios (first: index %d), shrunk in %d runs to %d requests, %d turns %s", f.Check, res.Scenarios, f.Index, f.ShrinkRuns, f.Requests, f.Turns, f.ShrinkError)
			}
			if len(shrunk) == 0 {
				t.Fatalf("%d scenarios found none of %v (found %+v)", res.Scenarios, want, res.Failures)
			}
			if !small {
				t.Errorf("none of %v shrank to at most %d requests and %d turns", shrunk, maxRequests, maxTurns)
			}
			if len(beyond) > 0 {
				t.Logf("beyond the registry's %v: %v", want, beyond)
			}
		})
	}
}
