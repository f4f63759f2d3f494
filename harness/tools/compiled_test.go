package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/harness/tools"
)

// A compiled schema serves only the tool it was compiled for: another name
// or other parameters are compiled as they are, so a tool changed after it
// was built (With: renamed, its schema loosened) is checked by its own.
func TestACompiledSchemaServesOnlyItsTool(t *testing.T) {
	needA := json.RawMessage(`{"type":"object","required":["a"]}`)
	needB := json.RawMessage(`{"type":"object","required":["b"]}`)
	compiled, err := tools.CompileSchema("t", needA)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		params json.RawMessage
		ok     string // the arguments the tool accepts
		bad    string
	}{
		{"t", needA, `{"a":1}`, `{"b":1}`},
		{"t", needB, `{"b":1}`, `{"a":1}`},
		{"u", needA, `{"a":1}`, `{"b":1}`},
	} {
		reg := tools.NewRegistry()
		if _, err := reg.Register(tools.Tool{Name: c.name, Parameters: c.params, Execute: noop, Compiled: compiled}); err != nil {
			t.Fatal(err)
		}
		if res := reg.Execute(context.Background(), tools.Exec{}, c.name, c.ok); res.IsError {
			t.Errorf("%s %s: %s refused: %s", c.name, c.params, c.ok, res.Text())
		}
		res := reg.Execute(context.Background(), tools.Exec{}, c.name, c.bad)
		if !res.IsError || !strings.Contains(res.Text(), "missing property") {
			t.Errorf("%s %s: %s: %s, want it refused", c.name, c.params, c.bad, res.Text())
		}
	}
	if _, err := tools.CompileSchema("t", json.RawMessage(`{"type":3}`)); err == nil || !strings.Contains(err.Error(), `register tool "t": invalid parameter schema`) {
		t.Errorf("a bad schema: %v", err)
	}
}
