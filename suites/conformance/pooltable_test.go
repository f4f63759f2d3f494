package conformance

import (
	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/breakage"
)

// poolRow is breakage b's row of breakage.PoolTable from its run with a
// process per case (off) and pooled (on); nil runs were skipped.
func poolRow(b breakage.Breakage, off, on *conformance.Report) breakage.PoolRow {
	if off == nil || on == nil {
		return breakage.PoolRow{Breakage: b, Skipped: "no python3"}
	}
	r := breakage.PoolRow{Breakage: b, Off: off.FailedIDs(), On: on.FailedIDs(), Cases: len(on.Cases)}
	for _, c := range on.Cases {
		if ev := c.Evidence(); ev != nil && ev.PooledFailure != nil {
			r.Alone++
		}
	}
	return r
}
