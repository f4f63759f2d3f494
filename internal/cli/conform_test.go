package cli

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// An agent command naming a file relative to the runner's directory is
// flagged: the agent runs in the case's directory, where it names nothing.
func TestRelativeFileArgs(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"agent.py", "bin/agent"} {
		if err := os.WriteFile(filepath.Join(dir, f), []byte("x"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		argv []string
		want []string
	}{
		{[]string{"python3", "agent.py"}, []string{"agent.py"}},
		{[]string{"./bin/agent", "--acp"}, []string{"./bin/agent"}},
		{[]string{"bin/agent", "--config", "agent.py"}, []string{"bin/agent", "agent.py"}},
		{[]string{"python3", filepath.Join(dir, "agent.py")}, nil},      // absolute
		{[]string{"python3", "missing.py"}, nil},                        // names nothing here either
		{[]string{"agent.py"}, nil},                                     // a command without a slash is looked up in PATH
		{[]string{"python3", "bin"}, nil},                               // a folder
		{[]string{"my-agent", "--base-url", "{{.BaseURL}}", "-v"}, nil}, // flags and templates
	} {
		if got := relativeFileArgs(tc.argv); !slices.Equal(got, tc.want) {
			t.Errorf("relativeFileArgs(%q) = %q, want %q", tc.argv, got, tc.want)
		}
	}
}
