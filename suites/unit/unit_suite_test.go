package unit

import (
	"os"
	"testing"

	"github.com/todoharness/todoharness/internal/testutil/scratch"
	"github.com/todoharness/todoharness/internal/testutil/tier"
)

// TestMain puts the tier's temporary files in memory where the machine
// has room (scratch): its session-store specs fsync 75 times, 32 ms of
// waiting on this machine's disk, 1.4 ms on tmpfs (docs/performance.md).
func TestMain(m *testing.M) {
	os.Exit(scratch.InMemory(m).Run())
}

func TestUnit(t *testing.T) {
	tier.Run(t, "Unit tier", "tier:unit")
}
