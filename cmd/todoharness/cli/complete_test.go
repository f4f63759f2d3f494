package cli

import (
	"context"
	"strings"
	"testing"
)

// A shell completes the values of --preset, --format, --policy,
// --dialect, --case and --check (cobra's __complete is what the
// completion scripts call).
func TestFlagValuesComplete(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"conform", "--preset", ""}, []string{"reference", "opencode", "codex", "gemini", "claude", "claude-agent", "qwen"}},
		{[]string{"conform", "--format", ""}, []string{"text", "github"}},
		{[]string{"conform", "--policy", "p"}, []string{"parallel"}},
		{[]string{"conform", "--dialect", ""}, []string{"todo_write", "opencode", "codex", "gemini", "claude", "qwen"}},
		{[]string{"conform", "--case", "reject-e"}, []string{"reject-empty"}},
		{[]string{"conform", "--check", "TW-LOAD-"}, []string{"TW-LOAD-1", "TW-LOAD-2"}},
		{[]string{"log", "check", "--policy", ""}, []string{"single", "parallel", "auto"}},
		{[]string{"record", "--preset", "co"}, []string{"codex"}},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out, errw strings.Builder
			if code := Run(context.Background(), append([]string{"__complete"}, tc.args...), strings.NewReader(""), &out, &errw); code != 0 {
				t.Fatalf("exit %d: %s", code, errw.String())
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(out.String()), "\n") {
				if !strings.HasPrefix(l, ":") {
					got = append(got, l)
				}
			}
			for _, w := range tc.want {
				found := false
				for _, g := range got {
					found = found || g == w
				}
				if !found {
					t.Errorf("%q not offered: %q", w, got)
				}
			}
			if len(got) > 0 && len(tc.want) == 1 && len(got) != 1 {
				t.Errorf("offered %q, want only %q", got, tc.want)
			}
		})
	}
}
