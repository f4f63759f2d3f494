package cli

import (
	"context"
	"strings"
	"testing"
)

// `mock serve --help` names the four wire APIs with their paths, and where
// the script format is documented.
func TestMockServeHelpNamesTheWires(t *testing.T) {
	var out, errw strings.Builder
	if code := Run(context.Background(), []string{"mock", "serve", "--help"}, strings.NewReader(""), &out, &errw); code != 0 {
		t.Fatalf("exit %d: %s", code, errw.String())
	}
	for _, want := range []string{"OpenAI chat completions", "/v1/chat/completions", "OpenAI Responses", "/v1/responses",
		"Anthropic Messages", "/v1/messages", "Gemini", ":generateContent", "docs/mock-scripts.md"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("mock serve --help lacks %q", want)
		}
	}
}
