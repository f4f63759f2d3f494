//go:build !race

package conformance

// gcPercent is the tier's GOGC (see TestMain).
const gcPercent = 800
