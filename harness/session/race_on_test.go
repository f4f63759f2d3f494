//go:build race

package session

// raceEnabled: the race detector allocates, so allocation counts are not asserted.
const raceEnabled = true
