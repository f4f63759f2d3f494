package explore_test

import (
	"testing"

	"github.com/todoharness/todoharness/cmd/todoharness/cli"
	"github.com/todoharness/todoharness/internal/testutil/scratch"
	"github.com/todoharness/todoharness/internal/testutil/selfexec"
)

// TestMain puts the explorations' case folders and session logs in memory
// where the machine has room (scratch): thousands of cases each make two.
// With $TODOHARNESS_TEST_PROGRAM=todoharness the test binary is the
// reference agent as a process (the protocol breakages wrap it).
func TestMain(m *testing.M) {
	selfexec.Main(scratch.InMemory(m), selfexec.Programs{"todoharness": cli.Main})
}
