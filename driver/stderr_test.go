package driver

import (
	"slices"
	"testing"
)

// The gist of a crashed agent's stderr is the line naming the error, not
// the frames and the version trailer a Node stack ends in.
func TestStderrGist(t *testing.T) {
	node := `node:internal/modules/cjs/loader:1228
  throw err;
  ^

Error: Cannot find module '/tmp/x.mjs'
    at Module._resolveFilename (node:internal/modules/cjs/loader:1225:15)
    at Module._load (node:internal/modules/cjs/loader:1051:27)
    at node:internal/main/run_main_module:28:49 {
  code: 'MODULE_NOT_FOUND',
  requireStack: []
}

Node.js v20.11.0
`
	python := "Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n    import nope\nModuleNotFoundError: No module named 'nope'\n"
	for _, tc := range []struct {
		name, stderr string
		n            int
		want         []string
	}{
		{"node", node, 3, []string{"Error: Cannot find module '/tmp/x.mjs'", "  code: 'MODULE_NOT_FOUND',", "  requireStack: []"}},
		{"node whole", node, 20, []string{"node:internal/modules/cjs/loader:1228", "  throw err;", "  ^", "Error: Cannot find module '/tmp/x.mjs'", "  code: 'MODULE_NOT_FOUND',", "  requireStack: []", "}"}},
		{"python", python, 2, []string{"    import nope", "ModuleNotFoundError: No module named 'nope'"}},
		{"no error word", "a\nb\nc\nd\n", 2, []string{"c", "d"}},
		{"empty", "\n\n", 3, nil},
	} {
		if got := StderrGist(tc.stderr, tc.n); !slices.Equal(got, tc.want) {
			t.Errorf("%s: StderrGist = %q, want %q", tc.name, got, tc.want)
		}
	}
}
