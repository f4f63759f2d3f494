package explore

import (
	"testing"

	"github.com/todoharness/todoharness/conformance"
)

// A signature is the kind of call the reason names and the kind of step:
// what the reason quotes (item text, an agent's error) and what follows
// "the case stopped early" do not steer it.
func TestSignature(t *testing.T) {
	load, dup := builtinCase(t, "load-replay"), builtinCase(t, "reject-duplicate")
	cancel := builtinCase(t, "cancel-after-write")
	for _, tc := range []struct {
		c      *conformance.Case
		reason string
		want   string
	}{
		{load, `session/load replayed no plan (want ["read the parser code" in_progress])`, OpList + "/" + AtLoad},
		{load, `at session/load the client holds no plan; the last accepted list is call_1's ["a" pending]`, OpList + "/" + AtLoad},
		{load, conformance.NotJudgedPrefix + "step 6 (loadSession) was answered with JSON-RPC error -32002: Resource not found", OpRefused + "/" + AtLoad},
		{load, `no plan update shows call_1 (["session/load of call_7, prompt 3" pending]) (no plan update of its prompt shows it)`, OpList + "/" + AtPrompt},
		{load, `no plan update shows call_1 ([]); the case stopped early: step 6 (loadSession) was answered with session/load error call_9`, OpList + "/" + AtPrompt},
		{dup, `call_2 was accepted: the model saw a result without the error flag: "Updated todo list"`, RuleDuplicate + "/" + AtPrompt},
		{dup, `call_12 was accepted`, OpNoCall + "/" + AtCase},
		{dup, `prompt 1: 2 update(s) of the turn came after its session/prompt answer`, OpNoCall + "/" + AtPrompt},
		{cancel, `no plan update shows call_1 (["x" pending])`, OpList + "/" + AtCancel},
		{nil, "anything", OpNoCall + "/" + AtCase},
	} {
		if got := signature(tc.c, tc.reason); got != tc.want {
			t.Errorf("signature(%q) = %s, want %s", tc.reason, got, tc.want)
		}
	}
}

// A Reproduce line's arguments are quoted for a shell on one line: as
// they are when they need no quotes, else in single quotes, else (a
// newline, an escape, a bidi mark) as $'...'.
func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"--preset":              "--preset",
		"TODOHARNESS_FAULT=a,b": "TODOHARNESS_FAULT=a,b",
		"my-agent --acp":        "'my-agent --acp'",
		"it's":                  `'it'\''s'`,
		"":                      "''",
		"{{.BaseURL}}":          "'{{.BaseURL}}'",
		"a\nb":                  `$'a\nb'`,
		"x\x1b[31m\u202e'":      `$'x\x1B[31m\U0000202E\''`,
		"é":                     "'é'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %s, want %s", in, got, want)
		}
	}
}
