package conformance

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/internal/testutil"
)

func TestConformance(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Conformance tier", Label("tier:conformance"))
}

// bins are the binaries under test, built once; validator is the ACP
// schema, compiled once for every run.
var (
	bins struct {
		todoharness, mutant string
	}
	validator *conformance.SchemaValidator
)

var _ = BeforeSuite(func() {
	var err error
	bins.todoharness, bins.mutant, err = buildBinaries()
	Expect(err).NotTo(HaveOccurred())
	validator, err = conformance.NewSchemaValidator()
	Expect(err).NotTo(HaveOccurred())
})

// buildBinaries builds the todoharness and mutant binaries into a folder
// that outlives the run: go build relinks only when a source changed (it
// checks the build ID of the file already there), which saves most of the
// set-up time on the next run.
func buildBinaries() (todoharness, mutant string, err error) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("todoharness-conformance-bin-%d", os.Getuid()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", err
	}
	// One go build for both: -o DIR/ writes each main package there.
	cmd := exec.Command("go", "build", "-o", dir+string(filepath.Separator), "./cmd/todoharness", "./suites/conformance/mutant")
	cmd.Dir = testutil.RepoRoot()
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", "", fmt.Errorf("go build: %w\n%s", err, b)
	}
	return filepath.Join(dir, "todoharness"), filepath.Join(dir, "mutant"), nil
}
