package e2e

import (
	"fmt"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"

	"github.com/todoharness/todoharness/internal/testutil/tier"
)

func TestE2E(t *testing.T) {
	tier.Run(t, "E2E tier", "tier:e2e")
}

// Skipped specs say why at the end of the run (ginkgo itself only shows
// skip reasons in verbose mode).
var _ = ReportAfterSuite("skip reasons", func(r Report) {
	first := true
	for _, s := range r.SpecReports {
		if s.State == types.SpecStateSkipped && s.Failure.Message != "" {
			if first {
				fmt.Println()
				first = false
			}
			fmt.Printf("SKIPPED %s: %s\n", s.FullText(), s.Failure.Message)
		}
	}
})
