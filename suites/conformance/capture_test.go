package conformance

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/breakage"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/internal/testutil"
	"github.com/todoharness/todoharness/internal/testutil/selfexec"
)

// updateEvidence reruns the reference agent, its faults and the mutants
// and rewrites their evidence in conformance/testdata/evidence (the fake
// agent's is captured by the conformance package's own TestCaptureEvidence):
//
//	go test ./conformance ./suites/conformance -run TestCaptureEvidence -args -update-evidence
var updateEvidence = flag.Bool("update-evidence", false, "rerun the reference agent, its faults and the mutants and rewrite conformance/testdata/evidence")

func TestCaptureEvidence(t *testing.T) {
	if !*updateEvidence {
		t.Skip("run with -args -update-evidence to rerun the reference agent, its faults and the mutants and rewrite conformance/testdata/evidence")
	}
	RegisterTestingT(t)
	bins.todoharness, bins.mutant = selfexec.Path(), selfexec.Path()
	var err error
	validator, err = driver.NewSchemaValidator()
	Expect(err).NotTo(HaveOccurred())
	runs := map[string]driver.Target{"reference": reference()}
	timeouts := map[string]time.Duration{}
	versions := map[string]int{} // the protocol version a run offers (0: 1)
	for _, d := range []string{driver.DialectOpencode, driver.DialectCodex, driver.DialectGemini, driver.DialectClaude} {
		runs["mutant-as-"+d] = mutant("as-" + d)
	}
	for _, b := range breakage.All() {
		if b.Layer == breakage.Bridge || b.Layer == breakage.Tool || b.Layer == breakage.Composition {
			name := string(b.Layer) + "-" + b.Name
			runs[name], timeouts[name], versions[name] = breakageTarget(b), timeoutFor(b), b.ACPVersion
		}
	}
	dir := filepath.Join(testutil.RepoRoot(), "conformance", "testdata", "evidence")
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	for name, target := range runs {
		timeout := caseTimeout
		if t, ok := timeouts[name]; ok {
			timeout = t
		}
		cfg := conformance.Config{Agent: target, Cases: cases(), Timeout: timeout, Grace: 1e9, Validator: conformance.Compiled(validator),
			Offer: driver.Offer{ACPVersion: versions[name]}}
		cfg.Parallel = len(cfg.Cases)
		rep, err := conformance.Run(context.Background(), cfg)
		Expect(err).NotTo(HaveOccurred())
		var evs []*conformance.Evidence
		for _, c := range rep.Cases {
			evs = append(evs, c.Evidence())
		}
		Expect(conformance.WriteEvidenceArchive(filepath.Join(dir, name+".jsonl.gz"), evs)).To(Succeed())
		t.Logf("%s: failed %v", name, rep.FailedIDs())
	}
}
