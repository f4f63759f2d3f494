package conformance

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/internal/testutil"
)

func TestConformance(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Conformance tier", Label("tier:conformance"))
}

// bins are the binaries under test, built once.
var bins struct {
	todoharness, mutant string
}

var _ = BeforeSuite(func() {
	dir, err := os.MkdirTemp("", "conformance-suite-")
	Expect(err).NotTo(HaveOccurred())
	DeferCleanup(os.RemoveAll, dir)
	bins.todoharness = filepath.Join(dir, "todoharness")
	bins.mutant = filepath.Join(dir, "mutant")
	// One go build for both: -o DIR/ writes each main package there.
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/todoharness", "./suites/conformance/mutant")
	cmd.Dir = testutil.RepoRoot()
	b, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "go build:\n%s", b)
})
