package e2e

import (
	"fmt"
	"testing"

	. "github.com/onsi/ginkgo/v2"
	"github.com/onsi/ginkgo/v2/types"
	. "github.com/onsi/gomega"
)

func TestE2E(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "E2E tier", Label("tier:e2e"))
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
