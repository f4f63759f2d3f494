package cli

import (
	"strings"
	"testing"

	"github.com/todoharness/todoharness/harness/acp"
)

// todoharness agent --help names each fault once (acp.KnownFaults holds the
// surface faults too).
func TestAgentHelpNamesEachFaultOnce(t *testing.T) {
	seen := map[string]int{}
	for _, name := range strings.Split(faultNames(), ", ") {
		seen[name]++
	}
	for _, f := range acp.KnownFaults() {
		if seen[string(f)] != 1 {
			t.Errorf("fault %s named %d times in %q", f, seen[string(f)], faultNames())
		}
	}
}
