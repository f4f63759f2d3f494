// Package buildinfo says which todoharness this is: for a release build
// (GoReleaser, .goreleaser.yaml) the version, commit and date stamped at
// link time; for any other build the module version and the VCS revision
// the binary was built from, read from runtime/debug.ReadBuildInfo. `todoharness --version` prints it, and the
// conformance report carries it (toolVersion), so a CI run's verdict names
// the tool that judged it.
package buildinfo
