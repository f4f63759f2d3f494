package breakage

import (
	"fmt"
	"strings"
)

// PoolRow is what one breakage's catalogue run failed with a process per
// case (Off) and with pooled agent processes (On), and how many of the
// pooled run's Cases failed pooled and ran again alone (Alone). A row
// whose runs were skipped has Skipped set (why).
type PoolRow struct {
	Breakage Breakage
	Off, On  []string
	Alone    int
	Cases    int
	Skipped  string
}

// PoolTable is the Markdown rows (row, unpooled fails, pooled fails,
// same?, cases run again alone; no header: scripts/pool-table.sh joins the
// suites' rows under one) of the table docs/performance.md shows: the
// suites that run every row in both modes write them when
// $TODOHARNESS_POOL_TABLE names a folder.
func PoolTable(rows []PoolRow) string {
	var b strings.Builder
	ids := func(s []string) string {
		if len(s) == 0 {
			return "none"
		}
		return strings.Join(s, ", ")
	}
	for _, r := range rows {
		if r.Skipped != "" {
			fmt.Fprintf(&b, "| %s | not run: %s | | | |\n", r.Breakage.Label(), r.Skipped)
			continue
		}
		same := "yes"
		if ids(r.Off) != ids(r.On) {
			same = "**no**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d of %d |\n", r.Breakage.Label(), ids(r.Off), ids(r.On), same, r.Alone, r.Cases)
	}
	return b.String()
}
