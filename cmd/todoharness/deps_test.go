package main

import (
	"errors"
	"os/exec"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/internal/testutil"
)

// modelSDKs are the model providers' Go SDKs. Only the wire tier's tests
// (suites/wire) use them: openai-go's compile alone took 2.74 GB of memory
// and 31 s, most of an empty-cache `make demo` (docs/performance.md), so
// no binary compiles one.
var modelSDKs = []string{
	"github.com/openai/openai-go",
	"github.com/anthropics/anthropic-sdk-go",
	"google.golang.org/genai",
}

// The binaries (cmd/...) are built without any model SDK: the reference
// agent talks to its model through harness/llm/openaichat, on net/http.
func TestTheBinariesCompileNoModelSDK(t *testing.T) {
	deps := strings.Fields(string(goList(t, "-deps", "./cmd/...")))
	if !contains(deps, testutil.ModulePath+"/harness/llm/openaichat") {
		t.Fatalf("go list -deps ./cmd/... does not list harness/llm/openaichat (%d packages): is it reading the module?", len(deps))
	}
	for _, d := range deps {
		for _, sdk := range modelSDKs {
			if d == sdk || strings.HasPrefix(d, sdk+"/") {
				t.Errorf("a binary compiles %s (of %s); see `go mod why -m %s`", d, sdk, sdk)
			}
		}
	}
}

// goList runs go list with args in the repository and returns its output.
func goList(t *testing.T, args ...string) []byte {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = testutil.RepoRoot()
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, ee.Stderr)
		}
		t.Fatalf("go list %s: %v", strings.Join(args, " "), err)
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
