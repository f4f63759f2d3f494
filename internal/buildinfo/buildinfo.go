package buildinfo

import (
	"runtime/debug"
	"strings"
)

// revLen is how many hex digits of the VCS revision are shown.
const revLen = 12

// What a release build stamps at link time (.goreleaser.yaml: -ldflags
// "-X github.com/todoharness/todoharness/internal/buildinfo.version=..."):
// the release's version, the full commit it was built from, and that
// commit's date (RFC 3339). Empty in any other build (go install, go
// build, go test). Set by the linker only, never assigned at run time: -X
// can set nothing but a package-level string variable.
var (
	version string
	commit  string
	date    string
)

// Version is this binary's version: for a release build the release it
// is (Release of what the linker stamped), else Describe of its build
// information, or "(unknown)" when the binary carries none.
func Version() string {
	if version != "" {
		return Release(version, commit, date)
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	return Describe(bi)
}

// Release is the version of a release build: its version (a leading v
// added to a bare number: GoReleaser stamps 1.2.0 for the tag v1.2.0),
// then the commit (its first revLen hex digits) and its date, each when
// stamped:
//
//	v1.2.0 (commit 0123456789ab, 2026-12-07T04:15:00Z)
func Release(version, commit, date string) string {
	v := version
	if v != "" && v[0] >= '0' && v[0] <= '9' {
		v = "v" + v
	}
	var about []string
	if commit != "" {
		about = append(about, "commit "+commit[:min(len(commit), revLen)])
	}
	if date != "" {
		about = append(about, date)
	}
	if len(about) > 0 {
		v += " (" + strings.Join(about, ", ") + ")"
	}
	return v
}

// Describe is the version of a build: the main module's version ("v1.2.0",
// or "(devel)" for a build from a checkout), then, when the build recorded
// it, the VCS revision and whether the tree had local changes:
//
//	v1.2.0
//	(devel) rev 0123456789ab
//	(devel) rev 0123456789ab (modified)
//
// A module version that already names the revision (a pseudo-version,
// v0.0.0-20261201-0123456789ab) is not followed by it again.
func Describe(bi *debug.BuildInfo) string {
	v := bi.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev string
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if len(rev) > revLen {
		rev = rev[:revLen]
	}
	if rev != "" && !strings.HasSuffix(strings.TrimSuffix(v, "+dirty"), rev) {
		v += " rev " + rev
	}
	if modified && !strings.HasSuffix(v, "+dirty") {
		v += " (modified)"
	}
	return v
}
