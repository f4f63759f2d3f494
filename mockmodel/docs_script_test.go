package mockmodel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The example script of docs/mock-scripts.md parses, with the turns and
// the call it shows.
func TestMockScriptsDocExampleParses(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "mock-scripts.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(b), "<!-- mock-script-example:")
	if !ok {
		t.Fatal("docs/mock-scripts.md: no mock-script-example block")
	}
	_, block, _ = strings.Cut(block, "```yaml\n")
	block, _, _ = strings.Cut(block, "```")
	s, err := ParseScript([]byte(block), "docs/mock-scripts.md")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Turns) != 2 || len(s.Turns[0].ToolCalls) != 1 || s.Turns[0].ToolCalls[0].Name != "todo_write" || s.Turns[1].Expect == nil {
		t.Errorf("the example reads as %+v", s.Turns)
	}
}
