package driver

import (
	"encoding/json"
	"fmt"
)

// ACP protocol versions the runner speaks as a client.
const (
	// ACPv1 is the stable protocol (the default).
	ACPv1 = 1
	// ACPv2 is the v2 draft (agentclientprotocol/agent-client-protocol
	// schema/v2, see ACPSchemaV2Source): the prompt response only
	// acknowledges, the turn ends at an idle state_update, the plan is a
	// plan_update, session/load is session/resume from the start.
	ACPv2 = 2
)

// Offer is what the runner, as a client, offers the agent in initialize.
// The zero value is protocol version 1 with the capabilities it always
// advertises.
type Offer struct {
	// ACPVersion is the protocol version offered (0: ACPv1). An agent
	// offered ACPv2 may answer 1: the case then speaks v1.
	ACPVersion int `json:"acpVersion,omitempty"`
	// PlanOps advertises clientCapabilities.plan ({}) on protocol version
	// 1: the agent may then send plan_update and plan_removed (ACP v1
	// draft, Agent Plan, Plan Operations). v2 has no such capability:
	// plan_update is its plan.
	PlanOps bool `json:"planOps,omitempty"`
}

// Version is the protocol version offered (ACPv1 when unset).
func (o Offer) Version() int {
	if o.ACPVersion == 0 {
		return ACPv1
	}
	return o.ACPVersion
}

// Check reports an offer the runner cannot make.
func (o Offer) Check() error {
	switch o.Version() {
	case ACPv1:
	case ACPv2:
		if o.PlanOps {
			return fmt.Errorf("plan operations are a capability of protocol version 1 (clientCapabilities.plan); version 2 has plan_update always: offer one or the other")
		}
	default:
		return fmt.Errorf("protocol version %d: the runner speaks %d or %d", o.ACPVersion, ACPv1, ACPv2)
	}
	return nil
}

// String says what the offer is, as a report's header says it.
func (o Offer) String() string {
	s := fmt.Sprintf("protocol version %d", o.Version())
	if o.PlanOps && o.Version() == ACPv1 {
		s += " with clientCapabilities.plan"
	}
	return s
}

// initializeParams are the params of the runner's initialize.
func (o Offer) initializeParams() map[string]any {
	info := map[string]any{"name": "todoharness-conform", "version": "1"}
	if o.Version() == ACPv2 {
		return map[string]any{"protocolVersion": ACPv2, "info": info, "capabilities": map[string]any{}}
	}
	caps := map[string]any{
		"fs":       map[string]any{"readTextFile": true, "writeTextFile": true},
		"terminal": false,
	}
	if o.PlanOps {
		caps["plan"] = map[string]any{}
	}
	return map[string]any{"protocolVersion": ACPv1, "clientCapabilities": caps, "clientInfo": info}
}

// AnsweredVersion is the protocolVersion of an initialize answer (0 when
// it has none that is a number).
func AnsweredVersion(initResult json.RawMessage) int {
	var ir struct {
		ProtocolVersion *int `json:"protocolVersion"`
	}
	if json.Unmarshal(initResult, &ir) != nil || ir.ProtocolVersion == nil {
		return 0
	}
	return *ir.ProtocolVersion
}

// Negotiated is the protocol version a process speaks after its initialize
// answer, given what was offered: ACPv2 when v2 was offered and the agent
// answered 2, else ACPv1 (an agent that answers 1 speaks v1; one that
// answers anything else is judged by ACP-INIT-1 and driven as v1).
func (o Offer) Negotiated(initResult json.RawMessage) int {
	if o.Version() == ACPv2 && AnsweredVersion(initResult) == ACPv2 {
		return ACPv2
	}
	return ACPv1
}

// canResume reports whether a v2 initialize answer advertises the session
// capabilities, whose baseline includes session/resume (v2 has no
// loadSession: advertising capabilities.session at all requires it).
func canResume(initResult json.RawMessage) bool {
	var ir struct {
		Capabilities struct {
			Session json.RawMessage `json:"session"`
		} `json:"capabilities"`
	}
	if json.Unmarshal(initResult, &ir) != nil {
		return false
	}
	s := string(ir.Capabilities.Session)
	return s != "" && s != "null"
}

// IdleUpdate reads a v2 state_update: whether m is a session/update
// reporting the state idle, the session it names and its stopReason (""
// when it has none).
func IdleUpdate(m WireMsg) (sessionID, stopReason string, ok bool) {
	if m.Dir != Received || m.Kind != KindNotification || m.UpdateKind() != "state_update" {
		return "", "", false
	}
	var n struct {
		Params struct {
			SessionID string `json:"sessionId"`
			Update    struct {
				State      string `json:"state"`
				StopReason string `json:"stopReason"`
			} `json:"update"`
		} `json:"params"`
	}
	if json.Unmarshal([]byte(m.Line), &n) != nil || n.Params.Update.State != "idle" {
		return "", "", false
	}
	return n.Params.SessionID, n.Params.Update.StopReason, true
}
