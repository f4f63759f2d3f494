package fullloop

import (
	"testing"

	"github.com/todoharness/todoharness/cmd/todoharness/cli"
	"github.com/todoharness/todoharness/internal/testutil/scratch"
	"github.com/todoharness/todoharness/internal/testutil/selfexec"
	"github.com/todoharness/todoharness/internal/testutil/tier"
)

// TestMain lets this test binary run the todoharness command line for the
// specs that need it as a process (Ctrl-C, piped stdin, exit status).
func TestMain(m *testing.M) {
	selfexec.Main(scratch.InMemory(m), selfexec.Programs{"todoharness": cli.Main})
}

func TestFullLoop(t *testing.T) {
	tier.Run(t, "Full-loop tier", "tier:fullloop")
}
