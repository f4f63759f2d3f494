package cli

import (
	"context"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/mockmodel"
)

// `mock serve --help` names every wire API with its paths (the four of
// today by name), and where the script format is documented.
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
	for _, w := range mockmodel.Wires() {
		if !strings.Contains(out.String(), "  "+w.API+" ") || !strings.Contains(out.String(), " "+w.Serves+"\n") {
			t.Errorf("mock serve --help has no line for %s: %s", w.API, w.Serves)
		}
	}
	if !strings.Contains(out.String(), "HTTP on four model APIs at once") || !strings.Contains(out.String(), "Anthropic and Gemini clients take it without /v1") {
		t.Errorf("mock serve --help counts the APIs or names the clients without /v1 otherwise:\n%s", out.String())
	}
}
