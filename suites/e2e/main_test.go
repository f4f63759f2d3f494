package e2e

import (
	"testing"

	"github.com/todoharness/todoharness/cmd/todoharness/cli"
	"github.com/todoharness/todoharness/internal/testutil/selfexec"
	mutantagent "github.com/todoharness/todoharness/suites/conformance/mutant"
)

// TestMain lets the test binary double as the todoharness command line (the
// reference agent) and the mutant agent, the third-party-style agents the
// recording specs record and replay (see internal/testutil/selfexec).
func TestMain(m *testing.M) {
	selfexec.Main(m, selfexec.Programs{"todoharness": cli.Main, "mutant": mutantagent.Main})
}
