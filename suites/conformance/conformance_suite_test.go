package conformance

import (
	"os"
	"runtime/debug"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/internal/cli"
	"github.com/todoharness/todoharness/internal/testutil/scratch"
	"github.com/todoharness/todoharness/internal/testutil/selfexec"
	mutantagent "github.com/todoharness/todoharness/suites/conformance/mutant"
)

// TestMain lets this test binary be the agents under test: the todoharness
// command line (the reference agent, todoharness conform) and the mutant.
//
// The tier runs some eighty catalogues in this process, a few hundred
// agents, their mock models and the runner, most of them at once: with the
// garbage collector at GOGC=800 (gcPercent; unless $GOGC says otherwise)
// it takes about a fifth less CPU than at the default 100, for a peak of
// about 450 MB instead of 160 MB (docs/performance.md). Under the race
// detector, whose shadow memory multiplies the heap, the default stays.
func TestMain(m *testing.M) {
	if _, set := os.LookupEnv("GOGC"); !set && gcPercent != 100 {
		debug.SetGCPercent(gcPercent)
	}
	// Some eight hundred cases each make two folders and an fsynced
	// session log: in memory where the machine has room (scratch).
	selfexec.Main(scratch.InMemory(m), selfexec.Programs{"todoharness": cli.Main, "mutant": mutantagent.Main})
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
