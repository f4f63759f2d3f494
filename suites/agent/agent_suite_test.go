package agent

import (
	"testing"

	"github.com/todoharness/todoharness/internal/testutil/tier"
)

func TestAgent(t *testing.T) {
	tier.Run(t, "Agent tier", "tier:agent")
}
