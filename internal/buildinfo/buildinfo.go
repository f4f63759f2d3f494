package buildinfo

import (
	"runtime/debug"
	"strings"
)

// revLen is how many hex digits of the VCS revision are shown.
const revLen = 12

// Version is this binary's version: Describe of its build information,
// or "(unknown)" when the binary carries none.
func Version() string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown)"
	}
	return Describe(bi)
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
