package loader

import (
	"testing"

	"github.com/todoharness/todoharness/internal/testutil/tier"
)

func TestLoader(t *testing.T) {
	tier.Run(t, "Real-loader tier", "tier:loader")
}
