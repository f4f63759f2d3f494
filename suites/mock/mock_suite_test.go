package mock

import (
	"testing"

	"github.com/todoharness/todoharness/internal/testutil/tier"
)

func TestMock(t *testing.T) {
	tier.Run(t, "Mock tier", "tier:mock")
}
