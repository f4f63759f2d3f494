package conformance

import (
	"strings"
	"testing"

	"github.com/todoharness/todoharness/driver"
)

// A message from the unstable draft (codex-acp sends usage_update) fails
// only the INFO check ACP-SCHEMA-2; a malformed plan fails ACP-SCHEMA-1 and
// not ACP-SCHEMA-2.
func TestSchemaChecksTellDraftFromMalformed(t *testing.T) {
	v, err := driver.NewSchemaValidator()
	if err != nil {
		t.Fatal(err)
	}
	received := func(seq int, line string) driver.WireMsg {
		m := msg(line, "")
		m.Dir, m.Seq = driver.Received, seq
		return m
	}
	usage := received(1, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"usage_update","used":10,"size":100}}}`)
	badPlan := received(2, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":null}}}`)
	goodPlan := received(3, `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}}`)

	if err := v.Validate(usage, true); err == nil {
		t.Fatal("usage_update passed the stable schema: the test premise is gone")
	}
	if err := v.ValidateUnstable(usage, true); err != nil {
		t.Fatalf("usage_update fails the unstable schema: %v", err)
	}
	for _, tc := range []struct {
		name       string
		wire       []driver.WireMsg
		s1, s2     Outcome
		s2Contains string
	}{
		{"draft only", []driver.WireMsg{usage, goodPlan}, Pass, Fail, "usage_update"},
		// ACP-SCHEMA-2 lists only what the draft accepts: a message both
		// reject leaves it not run, never passed.
		{"malformed", []driver.WireMsg{badPlan, goodPlan}, Fail, NotRun, "invalid against the stable and the unstable schema alike"},
		{"both", []driver.WireMsg{usage, badPlan}, Fail, Fail, "(and 1 invalid against both: see ACP-SCHEMA-1)"},
		{"clean", []driver.WireMsg{goodPlan}, Pass, Pass, ""},
	} {
		ev := &Evidence{CaseRecord: driver.CaseRecord{Wire: tc.wire}, validator: v}
		if got := evalSchema(ev); got.Outcome != tc.s1 {
			t.Errorf("%s: ACP-SCHEMA-1 = %v (%s), want %v", tc.name, got.Outcome, got.Reason, tc.s1)
		}
		got := evalStableSchema(ev)
		if got.Outcome != tc.s2 || !strings.Contains(got.Reason, tc.s2Contains) {
			t.Errorf("%s: ACP-SCHEMA-2 = %v (%s), want %v mentioning %q", tc.name, got.Outcome, got.Reason, tc.s2, tc.s2Contains)
		}
	}
}

func msg(line, replyTo string) driver.WireMsg {
	_, m := driver.Classify([]byte(line))
	m.ReplyTo = replyTo
	return m
}
