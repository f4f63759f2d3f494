package driver

import (
	"encoding/json"
	"testing"
)

// The initialize the runner sends for each offer, and the version a
// process then speaks.
func TestOffer(t *testing.T) {
	const v1Params = `{"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"terminal":false},"clientInfo":{"name":"todoharness-conform","version":"1"},"protocolVersion":1}`
	const v2Params = `{"capabilities":{},"info":{"name":"todoharness-conform","version":"1"},"protocolVersion":2}`
	for _, tc := range []struct {
		offer      Offer
		params     string
		answer     string
		negotiated int
	}{
		{Offer{}, v1Params, `{"protocolVersion":1}`, ACPv1},
		{Offer{PlanOps: true}, `{"clientCapabilities":{"fs":{"readTextFile":true,"writeTextFile":true},"plan":{},"terminal":false},"clientInfo":{"name":"todoharness-conform","version":"1"},"protocolVersion":1}`,
			`{"protocolVersion":1}`, ACPv1},
		{Offer{ACPVersion: ACPv2}, v2Params, `{"protocolVersion":2,"info":{"name":"a","version":"1"},"capabilities":{}}`, ACPv2},
		// A v1 agent answers 1: the process speaks v1.
		{Offer{ACPVersion: ACPv2}, v2Params, `{"protocolVersion":1,"agentCapabilities":{}}`, ACPv1},
		// Offered 1, an answer of 2 is driven as v1 (ACP-INIT-1 judges it).
		{Offer{}, v1Params, `{"protocolVersion":2}`, ACPv1},
	} {
		method, params := stepRequest(Step{Op: OpInitialize}, "", "", tc.offer, ACPv1)
		b, _ := json.Marshal(params)
		if method != "initialize" || string(b) != tc.params {
			t.Errorf("%+v: %s %s, want initialize %s", tc.offer, method, b, tc.params)
		}
		if got := tc.offer.Negotiated(json.RawMessage(tc.answer)); got != tc.negotiated {
			t.Errorf("%+v answered %s: negotiated %d, want %d", tc.offer, tc.answer, got, tc.negotiated)
		}
	}
	// A load is session/resume from the start on v2.
	if m, p := stepRequest(Step{Op: OpLoadSession}, "s", "/w", Offer{ACPVersion: ACPv2}, ACPv2); m != "session/resume" {
		t.Errorf("v2 load: %s %v", m, p)
	} else if b, _ := json.Marshal(p); string(b) != `{"cwd":"/w","mcpServers":[],"replayFrom":{"type":"start"},"sessionId":"s"}` {
		t.Errorf("v2 resume params %s", b)
	}
	if m, _ := stepRequest(Step{Op: OpLoadSession}, "s", "/w", Offer{ACPVersion: ACPv2}, ACPv1); m != "session/load" {
		t.Errorf("a v1 process offered 2 loads with %s", m)
	}
	for _, o := range []Offer{{ACPVersion: 3}, {ACPVersion: ACPv2, PlanOps: true}} {
		if o.Check() == nil {
			t.Errorf("%+v: no error", o)
		}
	}
}

// The idle that ends a v2 turn: state idle, its session and stopReason.
func TestIdleUpdate(t *testing.T) {
	const upd = `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":`
	for _, tc := range []struct {
		line, sid, reason string
		ok                bool
	}{
		{upd + `{"sessionUpdate":"state_update","state":"idle","stopReason":"end_turn"}}}`, "s", "end_turn", true},
		{upd + `{"sessionUpdate":"state_update","state":"idle"}}}`, "s", "", true},
		{upd + `{"sessionUpdate":"state_update","state":"running"}}}`, "", "", false},
		{upd + `{"sessionUpdate":"plan","entries":[]}}}`, "", "", false},
	} {
		m := msg(tc.line, "")
		m.Dir = Received
		sid, reason, ok := IdleUpdate(m)
		if sid != tc.sid || reason != tc.reason || ok != tc.ok {
			t.Errorf("%s: %q %q %v, want %q %q %v", tc.line, sid, reason, ok, tc.sid, tc.reason, tc.ok)
		}
	}
}
