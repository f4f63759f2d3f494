package mockmodel

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// readMockScriptsDoc reads docs/mock-scripts.md.
func readMockScriptsDoc(t *testing.T) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "docs", "mock-scripts.md"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The example script of docs/mock-scripts.md parses, with the turns and
// the call it shows.
func TestMockScriptsDocExampleParses(t *testing.T) {
	b := readMockScriptsDoc(t)
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

// The wire table of docs/mock-scripts.md has a row for each wire the
// server speaks, in its order, and no other.
func TestMockScriptsDocListsEveryWire(t *testing.T) {
	b := readMockScriptsDoc(t)
	_, table, ok := strings.Cut(string(b), "\n| API | path |\n|---|---|\n")
	if !ok {
		t.Fatal("docs/mock-scripts.md: no | API | path | table")
	}
	table, _, _ = strings.Cut(table, "\n\n")
	var rows, want []string
	for _, line := range strings.Split(table, "\n") {
		api, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " | ")
		rows = append(rows, api)
	}
	for _, w := range Wires() {
		want = append(want, w.API)
	}
	if strings.Join(rows, "; ") != strings.Join(want, "; ") {
		t.Errorf("docs/mock-scripts.md lists the APIs %q, the server speaks %q", rows, want)
	}
}
