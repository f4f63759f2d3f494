//go:build !linux

package driver

import (
	"errors"
	"time"
)

// Elsewhere than Linux the runner kills the agent's process group only:
// no subreaper, no /proc to find children that left the group.

type procEntry struct {
	pid   int
	start uint64
}

func becomeSubreaper() error { return nil }

// trackEvery: no tracking (findDescendants finds nothing).
const trackEvery = time.Duration(0)

func findDescendants(int, string, string) (live, dead []procEntry) { return nil, nil }

// procFS: no /proc to read (track finds nothing).
type procFS struct{}

func (*procFS) tracked(int) []procEntry { return nil }

func stillThere([]procEntry, []procEntry) (live, dead []procEntry) { return nil, nil }

func reapZombies([]procEntry) []procEntry { return nil }

func killDescendants([]procEntry, time.Duration) []string { return nil }

// treeCPU is not read here: no /proc.
func treeCPU(int) (time.Duration, error) {
	return 0, errors.New("no /proc to read a process's CPU time (not Linux)")
}
