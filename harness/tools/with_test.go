package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/harness/tools"
)

func noop(context.Context, tools.Exec, json.RawMessage) (tools.Result, error) {
	return tools.TextResult("ok"), nil
}

func TestWithReplacesOneToolInOrder(t *testing.T) {
	reg := tools.NewRegistry()
	for _, n := range []string{"a", "b", "c"} {
		if _, err := reg.Register(tools.Tool{Name: n, Parameters: json.RawMessage(`{"type":"object"}`), Execute: noop}); err != nil {
			t.Fatal(err)
		}
	}
	out, err := reg.With("b", func(tl tools.Tool) (tools.Tool, error) {
		tl.Name = "b2"
		return tl, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(out.Names(), ","); got != "a,b2,c" {
		t.Errorf("names %s, want a,b2,c", got)
	}
	if got := strings.Join(reg.Names(), ","); got != "a,b,c" {
		t.Errorf("the original changed: %s", got)
	}
	if _, err := reg.With("nope", func(tl tools.Tool) (tools.Tool, error) { return tl, nil }); err == nil || !strings.Contains(err.Error(), `no tool "nope"`) {
		t.Errorf("missing tool: %v", err)
	}
	boom := errors.New("boom")
	if _, err := reg.With("a", func(tl tools.Tool) (tools.Tool, error) { return tl, boom }); !errors.Is(err, boom) {
		t.Errorf("change error: %v", err)
	}
}
