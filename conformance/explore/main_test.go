package explore_test

import (
	"os"
	"testing"

	"github.com/todoharness/todoharness/internal/testutil/scratch"
)

// TestMain puts the explorations' case folders and session logs in memory
// where the machine has room (scratch): thousands of cases each make two.
func TestMain(m *testing.M) {
	os.Exit(scratch.InMemory(m).Run())
}
