package driver

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The schemas embedded from the ACP repository are verbatim copies of
// fixtures/acp-schema's, which name their source, version and licence.
func TestEmbeddedACPRepoSchemasMatchFixtures(t *testing.T) {
	root := filepath.Join("..", "fixtures", "acp-schema")
	dir := filepath.Join(root, "v2")
	for _, f := range []struct {
		name     string
		embedded []byte
	}{{"schema.json", ACPSchemaV2()}, {"schema.unstable.json", ACPUnstableSchemaV2()}, {filepath.Join("..", "v1", "schema.unstable.json"), ACPV1DraftSchema()}} {
		want, err := os.ReadFile(filepath.Join(dir, f.name))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(f.embedded, want) {
			t.Errorf("the embedded %s differs from %s: copy it again (docs/conformance.md, \"Moving to the next ACP v2 draft\")", f.name, filepath.Join(dir, f.name))
		}
	}
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	meta, err := os.ReadFile(filepath.Join(dir, "CHANGELOG.md"))
	if err != nil {
		t.Fatal(err)
	}
	// The version ACPSchemaV2Source names is the latest the changelog has,
	// and the README names it and the commit.
	_, after, _ := strings.Cut(ACPSchemaV2Source, "(schema ")
	version, _, _ := strings.Cut(after, ",")
	if version == "" || !strings.Contains(string(meta), "## ["+version+"]") {
		t.Errorf("ACPSchemaV2Source %q names version %q, which CHANGELOG.md has no section for", ACPSchemaV2Source, version)
	}
	commit := strings.TrimPrefix(strings.Fields(ACPSchemaV2Source)[0], "agentclientprotocol/agent-client-protocol@")
	for _, want := range []string{version, commit, "Apache-2.0"} {
		if !strings.Contains(string(readme), want) {
			t.Errorf("fixtures/acp-schema/README.md does not name %q", want)
		}
	}
	if lic, err := os.ReadFile(filepath.Join(root, "LICENSE")); err != nil || !strings.Contains(string(lic), "Apache License") {
		t.Errorf("fixtures/acp-schema/LICENSE is not the Apache licence (%v)", err)
	}
}

func TestSchemaValidatorV2(t *testing.T) {
	v1, err := NewSchemaValidator()
	if err != nil {
		t.Fatal(err)
	}
	v, err := v1.ForVersion(ACPv2)
	if err != nil {
		t.Fatal(err)
	}
	if v == v1 {
		t.Fatal("ForVersion(2) returned the v1 validator")
	}
	if same, _ := v1.ForVersion(ACPv1); same != v1 {
		t.Fatal("ForVersion(1) is not the v1 validator")
	}
	const upd = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":`
	for _, tc := range []struct {
		name, line, replyTo string
		bad                 string // substring of the error; "" = valid
	}{
		{"plan_update", upd + `{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p1","entries":[{"content":"a","priority":"medium","status":"pending"}]}}}}`, "", ""},
		{"plan_update cancelled", upd + `{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p1","entries":[{"content":"a","priority":"medium","status":"cancelled"}]}}}}`, "", ""},
		{"plan_update without planId", upd + `{"sessionUpdate":"plan_update","plan":{"type":"items","entries":[]}}}}`, "", "planId"},
		{"plan_update without priority", upd + `{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p1","entries":[{"content":"a","status":"pending"}]}}}}`, "", "priority"},
		{"idle", upd + `{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}}`, "", ""},
		{"running", upd + `{"sessionUpdate":"state_update","state":"running"}}}`, "", ""},
		{"tool_call_update creates", upd + `{"sessionUpdate":"tool_call_update","toolCallId":"c1","title":"t","status":"pending"}}}`, "", ""},
		{"prompt acknowledged", `{"jsonrpc":"2.0","id":3,"result":{}}`, "session/prompt", ""},
		{"init v2", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":2,"info":{"name":"a","version":"1"},"capabilities":{"session":{}}}}`, "initialize", ""},
		{"init v1 shape", `{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":2,"agentCapabilities":{"loadSession":true}}}`, "initialize", "info"},
		{"resume answer", `{"jsonrpc":"2.0","id":4,"result":{}}`, "session/resume", ""},
		{"no session/load in v2", `{"jsonrpc":"2.0","id":4,"result":{}}`, "session/load", "not an ACP method"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := v.Validate(msg(tc.line, tc.replyTo), true)
			switch {
			case tc.bad == "" && err != nil:
				t.Fatalf("valid message rejected: %v", err)
			case tc.bad != "" && err == nil:
				t.Fatalf("invalid message accepted; want an error with %q", tc.bad)
			case tc.bad != "" && !strings.Contains(err.Error(), tc.bad):
				t.Fatalf("error %q does not contain %q", err, tc.bad)
			}
		})
	}
}

// A v1 plan_update or plan_removed (the v1 draft's plan operations, which
// the SDK's schemas predate) is valid against the unstable schemas: the
// ACP repository's unstable v1 schema takes it.
func TestSchemaValidatorV1PlanOperations(t *testing.T) {
	v, err := NewSchemaValidator()
	if err != nil {
		t.Fatal(err)
	}
	const upd = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":`
	for _, tc := range []struct{ name, line, bad string }{
		{"plan_update", upd + `{"sessionUpdate":"plan_update","plan":{"type":"items","planId":"p1","entries":[{"content":"a","priority":"medium","status":"pending"}]}}}}`, ""},
		{"plan_removed", upd + `{"sessionUpdate":"plan_removed","planId":"p1"}}}`, ""},
		{"plan_update without planId", upd + `{"sessionUpdate":"plan_update","plan":{"type":"items","entries":[]}}}}`, "SessionNotification"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := msg(tc.line, "")
			if v.Validate(m, true) == nil {
				t.Fatal("the SDK's stable schema accepts it: the draft schema is not needed")
			}
			err := v.ValidateUnstable(m, true)
			switch {
			case tc.bad == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case tc.bad != "" && (err == nil || !strings.Contains(err.Error(), tc.bad)):
				t.Fatalf("error %v, want one naming %q", err, tc.bad)
			}
		})
	}
}
