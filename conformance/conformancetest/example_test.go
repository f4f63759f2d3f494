package conformancetest_test

import (
	"testing"

	"github.com/todoharness/todoharness/cmd/todoharness/cli"
	"github.com/todoharness/todoharness/conformance/conformancetest"
	"github.com/todoharness/todoharness/driver"
)

// An agent author's conformance test: here the reference agent, run in
// this process on pipes (Target.InProcess); an agent of your own is a
// command, driver.Target{Name: "my-agent", Command: []string{"./my-agent",
// "--acp"}}, with {{.BaseURL}} for the mock model it must talk to. Every
// check of the catalogue is a subtest: go test -run
// 'TestReferenceAgentConforms/TW-PLAN-1' -v runs the cases and shows one.
func TestReferenceAgentConforms(t *testing.T) {
	conformancetest.TestAgent(t, reference())
}

// reference is the reference agent, in this process.
func reference(env ...string) driver.Target {
	return driver.Target{Name: "reference", Command: cli.ReferenceAgentArgs("todoharness-not-started"), Env: env,
		InProcess: cli.InProcessAgent}
}
