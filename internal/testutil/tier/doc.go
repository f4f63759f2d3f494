// Package tier runs a ginkgo test tier (suites/*) the same way in every
// suite: its label, gomega's fail handler, an Eventually that waits long
// enough for a loaded machine (a bound on a failure, never a measurement),
// and no terminal colour codes when the output is not a terminal.
package tier
