package wire

import (
	"testing"

	"github.com/todoharness/todoharness/internal/testutil/tier"
)

func TestWire(t *testing.T) {
	tier.Run(t, "Wire tier", "tier:wire")
}
