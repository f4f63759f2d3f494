package fullloop

import (
	"testing"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
	"github.com/onsi/gomega/gexec"
)

func TestFullLoop(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Full-loop tier", Label("tier:fullloop"))
}

var _ = AfterSuite(func() {
	gexec.CleanupBuildArtifacts()
})
