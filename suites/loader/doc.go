// Package loader is the real-loader tier (ginkgo label tier:loader): the
// shipped composition file through the real plugin loader, the same code path
// `todoharness agent` uses, and the ways a composition must fail at load
// (missing or lost injections, undeclared services, unknown plugins, bad
// config), never silently at first use.
package loader
