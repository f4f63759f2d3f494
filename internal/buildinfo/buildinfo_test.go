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

// A release build says which release it is: version, commit and date, as
// .goreleaser.yaml stamps them (make release-check runs the snapshot
// binary's --version and checks the same against the commit built).
func TestRelease(t *testing.T) {
	for _, tc := range []struct{ version, commit, date, want string }{
		{"1.2.0", "0123456789abcdef0123456789abcdef01234567", "2026-12-07T04:15:00Z", "v1.2.0 (commit 0123456789ab, 2026-12-07T04:15:00Z)"},
		{"v1.2.0", "0123456789abcdef0123456789abcdef01234567", "2026-12-07T04:15:00Z", "v1.2.0 (commit 0123456789ab, 2026-12-07T04:15:00Z)"},
		{"1.2.1-SNAPSHOT-0123456", "0123456", "", "v1.2.1-SNAPSHOT-0123456 (commit 0123456)"},
		{"1.2.0", "", "", "v1.2.0"},
	} {
		if got := Release(tc.version, tc.commit, tc.date); got != tc.want {
			t.Errorf("Release(%q, %q, %q) = %q, want %q", tc.version, tc.commit, tc.date, got, tc.want)
		}
	}
}

// A build nothing stamped (go install, go build, go test) says what its
// build information says, never an empty release.
func TestVersionUnstamped(t *testing.T) {
	if version != "" {
		t.Skipf("this test binary was stamped as release %q", version)
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		t.Fatal("no build information")
	}
	if got, want := Version(), Describe(bi); got != want {
		t.Errorf("Version() = %q, want Describe's %q", got, want)
	}
}
