package conformance

import (
	"os"
	"runtime/debug"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/internal/cli"
	"github.com/todoharness/todoharness/internal/testutil/selfexec"
	mutantagent "github.com/todoharness/todoharness/suites/conformance/mutant"
)

// TestMain lets this test binary be the agents under test: the todoharness
// command line (the reference agent, todoharness conform) and the mutant.
//
// The tier runs some sixty catalogues in this process, a few hundred
// agents, their mock models and the runner at once: with the garbage
// collector at GOGC=400 (unless $GOGC says otherwise) it spends about 10%
// less CPU, for a heap about twice as large (docs/performance.md).
func TestMain(m *testing.M) {
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(400)
	}
	selfexec.Main(m, selfexec.Programs{"todoharness": cli.Main, "mutant": mutantagent.Main})
}

func TestConformance(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Conformance tier", Label("tier:conformance"))
}

// bins are the programs under test: both are this test binary, which runs
// the todoharness command line or the mutant agent when
// $TODOHARNESS_TEST_PROGRAM says so (see TestMain; targets set it with
// selfexec.Environ). validator is the ACP schema, compiled once for every run.
var (
	bins struct {
		todoharness, mutant string
	}
	validator *conformance.SchemaValidator
)

var _ = BeforeSuite(func() {
	bins.todoharness, bins.mutant = selfexec.Path(), selfexec.Path()
	findPython()
	var err error
	validator, err = conformance.NewSchemaValidator()
	Expect(err).NotTo(HaveOccurred())
	early.startAll(GinkgoT().TempDir())
})
