//go:build !unix

package explore_test

import (
	"testing"
	"time"
)

// processCPU is not read here: BenchmarkScenarios reports 0 CPU.
func processCPU(*testing.B) time.Duration { return 0 }
