package conformance

import (
	"fmt"
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
	// A folder that outlives the run: go build relinks only when a source
	// changed (it checks the build ID of the file already there), which
	// saves most of the suite's set-up time on the next run.
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("todoharness-conformance-bin-%d", os.Getuid()))
	Expect(os.MkdirAll(dir, 0o755)).To(Succeed())
	bins.todoharness = filepath.Join(dir, "todoharness")
	bins.mutant = filepath.Join(dir, "mutant")
	// One go build for both: -o DIR/ writes each main package there.
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/todoharness", "./suites/conformance/mutant")
	cmd.Dir = testutil.RepoRoot()
	b, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "go build:\n%s", b)
})
