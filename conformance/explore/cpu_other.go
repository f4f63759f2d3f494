//go:build !unix

package explore

import "time"

// processCPU is not read here: the report leaves the CPU time out.
func processCPU() (time.Duration, bool) { return 0, false }
