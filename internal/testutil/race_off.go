//go:build !race

package testutil

// RaceEnabled says the test binary was built with the race detector.
const RaceEnabled = false
