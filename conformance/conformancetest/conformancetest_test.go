package conformancetest_test

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/breakage"
	"github.com/todoharness/todoharness/conformance/conformancetest"
)

// childEnv names the breakage the child test runs the reference agent
// with; baselineEnv, when set, makes the row's checks its baseline.
const (
	childEnv    = "CONFORMANCETEST_CHILD_FAULT"
	baselineEnv = "CONFORMANCETEST_CHILD_BASELINE"
)

// TestChild is the test a child `go test` process runs: the reference
// agent with the bridge fault of $CONFORMANCETEST_CHILD_FAULT, under
// Strict (so a failed SHOULD fails its subtest too). It skips in a normal
// run.
func TestChild(t *testing.T) {
	fault := os.Getenv(childEnv)
	if fault == "" {
		t.Skip("run by TestBreakageFailsExactlyItsSubtests in a child process")
	}
	opts := []conformancetest.Option{conformancetest.Strict()}
	if ids := os.Getenv(baselineEnv); ids != "" {
		var base []conformance.ExpectedFailure
		for _, id := range strings.Split(ids, ",") {
			base = append(base, conformance.ExpectedFailure{ID: id, Reason: "known: tracked in the test"})
		}
		opts = append(opts, conformancetest.Expected(base))
	}
	conformancetest.TestAgent(t, reference("TODOHARNESS_FAULT="+fault), opts...)
}

// A breakage row makes exactly its checks' subtests fail, each with the
// check's reason and where its evidence is; the others pass or skip.
func TestBreakageFailsExactlyItsSubtests(t *testing.T) {
	var row breakage.Breakage
	for _, b := range breakage.In(breakage.Bridge) {
		if b.Name == "no-priority" {
			row = b
		}
	}
	if row.Name == "" {
		t.Fatal("conformance/breakage has no bridge no-priority row")
	}
	out, err := runChild(t, childEnv+"="+row.Name)
	if err == nil {
		t.Fatalf("the child test passed with the fault %s:\n%s", row.Name, out)
	}
	failed, passed, skipped := subtests(out)
	if !slices.Equal(failed, row.Fails) {
		t.Errorf("failed subtests %v, want the row's %v\n%s", failed, row.Fails, out)
	}
	if n := len(failed) + len(passed) + len(skipped); n != len(conformance.Catalogue()) {
		t.Errorf("%d subtests, want one per check (%d)", n, len(conformance.Catalogue()))
	}
	for _, id := range row.Fails {
		// The failure says the check, its reason and where its evidence is.
		re := regexp.MustCompile(regexp.QuoteMeta(id) + ` \((MUST|SHOULD)\) fail: .+\n\s*evidence: \S+/transcript\.txt`)
		if !re.Match(out) {
			t.Errorf("%s: no failure with its reason and evidence in the output:\n%s", id, out)
		}
	}
}

// With the row's checks as the baseline, the same run passes: those
// subtests skip, saying the failure was expected and why.
func TestBaselineSkipsItsFailures(t *testing.T) {
	fails := []string{"ACP-SCHEMA-1", "TW-PLAN-PRIORITY-1", "TW-PLAN-PRIORITY-2"}
	out, err := runChild(t, childEnv+"=no-priority", baselineEnv+"="+strings.Join(fails, ","))
	if err != nil {
		t.Fatalf("the child test failed with its failures in the baseline: %v\n%s", err, out)
	}
	failed, _, skipped := subtests(out)
	if len(failed) > 0 {
		t.Errorf("failed subtests %v, want none", failed)
	}
	for _, id := range fails {
		if !slices.Contains(skipped, id) {
			t.Errorf("%s did not skip\n%s", id, out)
		}
	}
	if !strings.Contains(string(out), "expected failure (baseline: known: tracked in the test)") {
		t.Errorf("no skip says the baseline's reason:\n%s", out)
	}
}

// runChild runs TestChild in a child process of this test binary with env.
func runChild(t *testing.T, env ...string) ([]byte, error) {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, "-test.run=^TestChild$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	return cmd.CombinedOutput()
}

// subtests reads the verdicts of TestChild's subtests from go test -v
// output, sorted.
func subtests(out []byte) (failed, passed, skipped []string) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		for prefix, list := range map[string]*[]string{"--- FAIL: TestChild/": &failed, "--- PASS: TestChild/": &passed, "--- SKIP: TestChild/": &skipped} {
			if rest, ok := strings.CutPrefix(line, prefix); ok {
				*list = append(*list, strings.Fields(rest)[0])
			}
		}
	}
	slices.Sort(failed)
	slices.Sort(passed)
	slices.Sort(skipped)
	return failed, passed, skipped
}
