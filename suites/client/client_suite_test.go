package client

import (
	"testing"

	"github.com/todoharness/todoharness/internal/testutil/tier"
)

func TestClient(t *testing.T) {
	tier.Run(t, "Client tier", "tier:client")
}
