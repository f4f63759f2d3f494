package cli

import (
	"slices"
	"strings"
	"testing"
)

func TestRecordEnvPassesABareNameThrough(t *testing.T) {
	t.Setenv("TODOHARNESS_TEST_PASS_KEY", "sk-ant-pass-through-0001")
	f := recordFlags{target: targetFlags{agent: "my-agent", preset: "claude", env: []string{"TODOHARNESS_TEST_PASS_KEY", "A=b"}}}
	target, _, err := f.agentTarget()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"TODOHARNESS_TEST_PASS_KEY=sk-ant-pass-through-0001", "A=b"}
	if got := target.Env[len(target.Env)-2:]; !slices.Equal(got, want) {
		t.Errorf("env ends with %q, want %q (after the preset's)", got, want)
	}
	if !slices.Contains(target.Env, "ANTHROPIC_API_KEY=mock") {
		t.Errorf("the claude preset's env is not kept: %q", target.Env)
	}
	if f.target.env[0] != "TODOHARNESS_TEST_PASS_KEY" {
		t.Errorf("the flag values were changed: %q", f.target.env)
	}

	f.target.env = []string{"TODOHARNESS_TEST_UNSET_KEY"}
	if _, _, err := f.agentTarget(); err == nil || !strings.Contains(err.Error(), "--env TODOHARNESS_TEST_UNSET_KEY: pass TODOHARNESS_TEST_UNSET_KEY through to the agent: it is not set") {
		t.Errorf("an unset name: %v", err)
	}
}
