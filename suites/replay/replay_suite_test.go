package replay

import (
	"testing"

	"github.com/onsi/gomega/gexec"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

func TestReplay(t *testing.T) {
	RegisterFailHandler(Fail)
	RunSpecs(t, "Replay tier", Label("tier:replay"))
}

// agentBin is the todoharness binary built for this run.
var agentBin string

var _ = SynchronizedBeforeSuite(func() []byte {
	bin, err := gexec.Build("github.com/todoharness/todoharness/cmd/todoharness")
	Expect(err).NotTo(HaveOccurred(), "build todoharness")
	return []byte(bin)
}, func(bin []byte) {
	agentBin = string(bin)
})

var _ = SynchronizedAfterSuite(func() {}, func() {
	gexec.CleanupBuildArtifacts()
})
