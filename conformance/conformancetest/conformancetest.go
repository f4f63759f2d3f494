// Package conformancetest runs the todo_write conformance catalogue against
// an agent from a Go test, in the manner of testing/fstest.TestFS: one call
// from the agent author's own `go test`, one subtest per check.
//
//	func TestConformance(t *testing.T) {
//		conformancetest.TestAgent(t, driver.Target{Name: "my-agent", Command: []string{"./my-agent", "--acp"}})
//	}
//
// The agent is a driver.Target: a command the runner starts for each case
// (its templates, env and files as for `todoharness conform --agent`), or a
// function it calls in process on pipes (Target.InProcess). Each check is
// a subtest named by its ID (TestConformance/TW-PLAN-1): a failure fails
// it with the check's reason and where its evidence is (the case folders
// written under t.ArtifactDir(), as `conform --out` writes them:
// transcript.txt, wire.jsonl, evidence.json); a failure the baseline
// expects (Expected), a check the agent's dialect does not have, and a
// SHOULD or INFO check that did not hold (unless Strict) skip with their
// reason; a MUST check that could not be judged fails, saying why (a
// verdict means what it says: nothing passes that was not judged).
package conformancetest

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/report"
	"github.com/todoharness/todoharness/driver"
	conformancefixtures "github.com/todoharness/todoharness/fixtures/conformance"
	"github.com/todoharness/todoharness/internal/termtext"
)

// Option adjusts the run.
type Option func(*conformance.Config)

// Cases runs only the built-in cases matching these IDs (globs, as
// `conform --case`).
func Cases(ids ...string) Option {
	return func(c *conformance.Config) { c.Only = append(c.Only, ids...) }
}

// Dialect forces the dialect (todo_write, opencode, codex, gemini, claude,
// ...) instead of detecting it from the tools the agent offers.
func Dialect(name string) Option { return func(c *conformance.Config) { c.Dialect = name } }

// Expected is the baseline: failures that skip their subtest, with the
// entry's reason (read one with conformance.ReadExpectedFailures).
func Expected(fs []conformance.ExpectedFailure) Option {
	return func(c *conformance.Config) { c.Expected = append(c.Expected, fs...) }
}

// Strict makes a failed SHOULD check fail its subtest, as a MUST does
// (`conform --strict`).
func Strict() Option { return func(c *conformance.Config) { c.Strict = true } }

// Timeout bounds each case (default driver.DefaultTimeout).
func Timeout(d time.Duration) Option { return func(c *conformance.Config) { c.Timeout = d } }

// Policy is the in_progress policy: single (the default), parallel or auto
// (`conform --policy`).
func Policy(p string) Option { return func(c *conformance.Config) { c.Policy = p } }

// Config edits the runner's configuration directly, for what the other
// options do not cover.
func Config(f func(*conformance.Config)) Option { return Option(f) }

// TestAgent runs the built-in cases against target and judges the
// catalogue, one subtest of t per check. It fails t (Fatal) when the run
// cannot start (no agent command, a bad option); the evidence of every
// case is written under t.ArtifactDir().
func TestAgent(t *testing.T, target driver.Target, opts ...Option) {
	t.Helper()
	cases, err := conformance.LoadCases(conformancefixtures.FS, ".")
	if err != nil {
		t.Fatalf("conformancetest: the built-in cases: %v", err)
	}
	cfg := conformance.Config{Agent: target, Cases: cases}
	for _, o := range opts {
		o(&cfg)
	}
	rep, err := conformance.Run(t.Context(), cfg)
	if err != nil {
		t.Fatalf("conformancetest: %v", err)
	}
	dir := t.ArtifactDir()
	if err := report.WriteTranscripts(dir, rep); err != nil {
		t.Errorf("conformancetest: writing the evidence: %v", err)
	}
	folders := map[string]string{}
	for i, name := range report.FolderNames(rep) {
		if _, ok := folders[rep.Cases[i].ID]; !ok {
			folders[rep.Cases[i].ID] = filepath.Join(dir, name)
		}
	}
	for _, c := range rep.Checks {
		t.Run(c.ID, func(t *testing.T) { judge(t, c, cfg.Strict, folders) })
	}
}

// judge ends one check's subtest as its outcome says. What the agent
// sent (in the reasons) is made visible: no control character of it
// reaches the terminal.
func judge(t *testing.T, c conformance.CheckResult, strict bool, folders map[string]string) {
	t.Helper()
	binding := c.Level == conformance.MUST || (strict && c.Level == conformance.SHOULD)
	reason := termtext.Visible(c.Reason)
	switch {
	case c.Stale:
		t.Fatalf("%s (%s): a baseline entry matches no failure (stale): %s", c.ID, c.Level, termtext.Visible(c.Expected))
	case c.Outcome == conformance.Pass:
		return
	case c.Outcome == conformance.NA:
		t.Skipf("n/a: %s", reason)
	case c.Outcome == conformance.XFail:
		t.Skipf("expected failure (baseline: %s): %s", termtext.Visible(c.Expected), reason)
	case c.Outcome == conformance.NotRun && binding:
		t.Fatalf("%s (%s) not judged: %s", c.ID, c.Level, reason)
	case c.Outcome == conformance.NotRun:
		t.Skipf("not judged: %s", reason)
	}
	msg := fmt.Sprintf("%s (%s) %s: %s%s", c.ID, c.Level, c.Outcome, reason, evidence(c, folders))
	if !binding {
		t.Skipf("%s\n(a %s check: it fails the test only under Strict)", msg, c.Level)
	}
	t.Fatal(msg)
}

// evidence says where the transcripts of c's failing cases are.
func evidence(c conformance.CheckResult, folders map[string]string) string {
	var where []string
	for _, cv := range c.Cases {
		if cv.Outcome != conformance.Fail && cv.Outcome != conformance.Flaky {
			continue
		}
		if d, ok := folders[cv.Case]; ok && !slices.Contains(where, d) {
			where = append(where, d)
		}
	}
	if len(where) == 0 {
		return ""
	}
	return "\nevidence: " + strings.Join(where, "/transcript.txt, ") + "/transcript.txt"
}
