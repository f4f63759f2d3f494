package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/driver"
)

// The agent author's checklist (docs/validating-other-agents.md) shows
// one example line for each update an agent sends for a todo call; each
// is a session/update the ACP schema accepts from an agent, and together
// they are the four kinds.
func TestChecklistUpdatesAreValidACP(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join("..", "docs", "validating-other-agents.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(b), "<!-- checklist-updates:")
	if !ok {
		t.Fatal("docs/validating-other-agents.md: no checklist-updates block")
	}
	_, block, _ = strings.Cut(block, "```json\n")
	block, _, _ = strings.Cut(block, "```")
	v := sharedValidator(t)
	var kinds []string
	for i, line := range strings.Split(strings.TrimSpace(block), "\n") {
		_, m := driver.Classify([]byte(line))
		if err := v.Validate(m, true); err != nil {
			t.Errorf("docs/validating-other-agents.md: checklist-updates line %d: %v", i+1, err)
		}
		kinds = append(kinds, m.UpdateKind())
	}
	if got, want := strings.Join(kinds, ","), "tool_call,plan,tool_call_update,agent_message_chunk"; got != want {
		t.Errorf("updates %s, want %s", got, want)
	}
}
