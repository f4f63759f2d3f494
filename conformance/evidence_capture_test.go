package conformance

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/todoharness/todoharness/conformance/breakage"
	"github.com/todoharness/todoharness/driver"
)

// updateEvidence reruns the agents whose evidence is kept in
// testdata/evidence and rewrites it (see testdata/evidence/README.md):
//
//	go test ./conformance ./suites/conformance -run TestCaptureEvidence -args -update-evidence
var updateEvidence = flag.Bool("update-evidence", false, "rerun the agents of testdata/evidence and rewrite their evidence")

// evidenceDir is where the captured runs are kept: <agent>.jsonl.gz each.
const evidenceDir = "testdata/evidence"

// fakeCapture is one captured run of the fake agent: its mode, the dialect
// it is forced into ("" detects), and whether it hangs or crashes (a short
// case timeout then).
type fakeCapture struct {
	mode, dialect string
	broken        bool
}

// name is the archive's base name.
func (c fakeCapture) name() string {
	if c.dialect != "" {
		return "fake-" + c.mode + "-as-" + c.dialect
	}
	return "fake-" + c.mode
}

// fakeCaptures are the fake agent's runs kept as evidence: the clean run,
// every breakage of the registry, and the behaviours the runner tests
// exercise besides (other dialects on a wire without an error flag, a
// banner on stdout, a slow exit).
func fakeCaptures() []fakeCapture {
	out := []fakeCapture{{mode: "ok"}, {mode: "garbage"}, {mode: "slow-exit"}, {mode: "accept-dup-raw"},
		{mode: "no-error-prefix"}, {mode: "no-error-prefix", dialect: driver.DialectOpencode},
		{mode: "accept-empty", dialect: driver.DialectOpencode}, {mode: "plan-on-reject", dialect: driver.DialectOpencode},
		{mode: "ok", dialect: driver.DialectCodex}}
	for _, b := range breakage.In(breakage.Fake) {
		out = append(out, fakeCapture{mode: b.Name, broken: b.FailsCheck("RUN-1")})
	}
	return out
}

func TestCaptureEvidence(t *testing.T) {
	if !*updateEvidence {
		t.Skip("run with -args -update-evidence to rerun the fake agent and rewrite testdata/evidence/fake-*.jsonl.gz")
	}
	for _, c := range fakeCaptures() {
		t.Run(c.name(), func(t *testing.T) {
			t.Parallel()
			cfg := Config{Agent: fakeTarget(t, c.mode), Cases: builtinCases(t), Dialect: c.dialect,
				Timeout: time.Minute, Grace: 2 * time.Second, Parallel: runtime.NumCPU(), Validator: Compiled(sharedValidator(t))}
			if c.broken {
				cfg.Timeout, cfg.Grace, cfg.Parallel = 2*time.Second, 200*time.Millisecond, len(cfg.Cases)
			}
			rep, err := Run(context.Background(), cfg)
			if err != nil {
				t.Fatal(err)
			}
			var evs []*Evidence
			for _, cr := range rep.Cases {
				evs = append(evs, cr.Evidence())
			}
			if err := os.MkdirAll(evidenceDir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := WriteEvidenceArchive(filepath.Join(evidenceDir, c.name()+".jsonl.gz"), evs); err != nil {
				t.Fatal(err)
			}
			t.Logf("%s: failed %v", c.name(), rep.FailedIDs())
		})
	}
}
