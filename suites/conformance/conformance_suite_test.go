package conformance

import (
	"fmt"
	"os"
	"sync"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/cmd/todoharness/cli"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/internal/testutil/scratch"
	"github.com/todoharness/todoharness/internal/testutil/selfexec"
	"github.com/todoharness/todoharness/internal/testutil/tier"
	mutantagent "github.com/todoharness/todoharness/suites/conformance/mutant"
)

// TestMain lets this test binary be the agents under test: the todoharness
// command line (the reference agent, todoharness conform) and the mutant.
// Some eight hundred cases each make two folders and an fsynced session
// log: in memory where the machine has room (scratch).
func TestMain(m *testing.M) {
	selfexec.Main(scratch.InMemory(m), selfexec.Programs{"todoharness": cli.Main, "mutant": mutantagent.Main})
}

func TestConformance(t *testing.T) {
	tier.Run(t, "Conformance tier", "tier:conformance")
}

// bins are the programs under test: both are this test binary, which runs
// the todoharness command line or the mutant agent when
// $TODOHARNESS_TEST_PROGRAM says so (see TestMain; targets set it with
// selfexec.Environ). validator is the ACP schema, compiled once for every run.
var (
	bins struct {
		todoharness, mutant string
	}
	validator *driver.SchemaValidator
)

var _ = BeforeSuite(func() {
	bins.todoharness, bins.mutant = selfexec.Path(), selfexec.Path()
	findPython()
	var err error
	validator, err = driver.NewSchemaValidator()
	Expect(err).NotTo(HaveOccurred())
	suiteTmp = GinkgoT().TempDir()
})

// suiteTmp holds the folders of the specs' runs (workDir), removed after
// the suite.
var suiteTmp string

// workDir makes a folder for a run's files (no Expect: once calls it).
func workDir() (string, error) {
	dir, err := os.MkdirTemp(suiteTmp, "work-")
	if err != nil {
		return "", fmt.Errorf("a run's folder: %w", err)
	}
	return dir, nil
}

// once returns the getter of fn's result: the first spec that asks makes
// it, in that spec (the suite runs one spec at a time, so a run never
// competes with another for the CPUs), and the others share it. fn must
// not use Expect (it may run for a spec that has not started yet: the
// getter fails the asking spec on fn's error instead).
func once[T any](fn func() (T, error)) func() T {
	get := sync.OnceValues(fn)
	return func() T {
		v, err := get()
		Expect(err).NotTo(HaveOccurred())
		return v
	}
}
