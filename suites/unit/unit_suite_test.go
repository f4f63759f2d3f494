package unit

import (
	"testing"

	"github.com/todoharness/todoharness/internal/testutil/tier"
)

func TestUnit(t *testing.T) {
	tier.Run(t, "Unit tier", "tier:unit")
}
