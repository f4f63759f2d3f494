package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestDescribe(t *testing.T) {
	vcs := func(rev, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: modified}}
	}
	for _, tc := range []struct {
		name     string
		version  string
		settings []debug.BuildSetting
		want     string
	}{
		{"a release from go install", "v1.2.0", nil, "v1.2.0"},
		{"a checkout, clean", "(devel)", vcs("0123456789abcdef0123", "false"), "(devel) rev 0123456789ab"},
		{"a checkout with local changes", "(devel)", vcs("0123456789abcdef0123", "true"), "(devel) rev 0123456789ab (modified)"},
		{"no module version, no VCS (go run, tests)", "", nil, "(devel)"},
		{"a pseudo-version names the revision once", "v0.0.0-20261201120000-0123456789ab", vcs("0123456789abcdef0123", "false"), "v0.0.0-20261201120000-0123456789ab"},
		{"a dirty pseudo-version says so once", "v0.0.0-20261201120000-0123456789ab+dirty", vcs("0123456789abcdef0123", "true"), "v0.0.0-20261201120000-0123456789ab+dirty"},
		{"a release tag built from a checkout", "v1.2.0", vcs("0123456789abcdef0123", "false"), "v1.2.0 rev 0123456789ab"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bi := &debug.BuildInfo{Main: debug.Module{Path: "github.com/todoharness/todoharness", Version: tc.version}, Settings: tc.settings}
			if got := Describe(bi); got != tc.want {
				t.Errorf("Describe = %q, want %q", got, tc.want)
			}
		})
	}
}

// A test binary has build information: Version never says unknown here.
func TestVersionOfThisBinary(t *testing.T) {
	if got := Version(); got == "" || got == "(unknown)" {
		t.Errorf("Version() = %q, want the build's version", got)
	}
}
