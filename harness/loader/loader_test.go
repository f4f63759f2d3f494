package loader_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/harness/loader"
	"github.com/todoharness/todoharness/internal/testutil"
	"github.com/todoharness/todoharness/internal/yamlx"
)

// A composition whose plugin config nests aliases is refused before the
// config is decoded, naming the file and the line.
func TestParseCompositionRefusesAliasBombs(t *testing.T) {
	doc := "plugins:\n  - name: todo\n    config:\n" + testutil.AliasBomb("      ")
	_, err := loader.ParseComposition([]byte(doc), "bomb.yaml")
	if !errors.Is(err, yamlx.ErrAliasing) || !strings.HasPrefix(err.Error(), "bomb.yaml") {
		t.Fatalf("error %v, want excessive aliasing naming bomb.yaml", err)
	}
}
