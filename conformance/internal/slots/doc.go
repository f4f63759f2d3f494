// Package slots is the conformance runner's parallel slots: how many cases
// run a step at once (Config.Parallel), which case gets a freed slot (one
// under way before one not yet started), and how many cases may be under
// way while others wait out their settles.
package slots
