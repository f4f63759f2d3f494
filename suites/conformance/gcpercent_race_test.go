//go:build race

package conformance

// gcPercent is the tier's GOGC under the race detector: the default (see
// TestMain).
const gcPercent = 100
