package replay

import (
	"testing"

	"github.com/todoharness/todoharness/cmd/todoharness/cli"
	"github.com/todoharness/todoharness/internal/testutil/scratch"
	"github.com/todoharness/todoharness/internal/testutil/selfexec"
	"github.com/todoharness/todoharness/internal/testutil/tier"
)

// TestMain lets this test binary run the todoharness command line: the
// across-process specs start `todoharness agent` as this binary.
func TestMain(m *testing.M) {
	selfexec.Main(scratch.InMemory(m), selfexec.Programs{"todoharness": cli.Main})
}

func TestReplay(t *testing.T) {
	tier.Run(t, "Replay tier", "tier:replay")
}
