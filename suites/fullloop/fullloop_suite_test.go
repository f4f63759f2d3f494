package fullloop

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/internal/cli"
	"github.com/todoharness/todoharness/internal/testutil/scratch"
	"github.com/todoharness/todoharness/internal/testutil/selfexec"
)

// TestMain lets this test binary run the todoharness command line for the
// specs that need it as a process (Ctrl-C, piped stdin, exit status).
func TestMain(m *testing.M) {
	selfexec.Main(scratch.InMemory(m), selfexec.Programs{"todoharness": cli.Main})
}

func TestFullLoop(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Full-loop tier", Label("tier:fullloop"))
}
