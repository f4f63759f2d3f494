package conformance

import (
	"encoding/json"
	"fmt"
	"strings"
)

// The fake agent's protocol surfaces: ACP v1 (the default), v2 when it
// is offered protocol version 2 and its mode has "v2" or a v2 fault, and
// v1's plan operations. Its faults (the breakage rows of the fake layer
// but v2-no-idle, which TestRunV2FakeAgentFaults runs on one case):
//
//   - v2-no-idle: no idle state_update ends a turn;
//   - v2-idle-no-reason: the idle carries no stopReason;
//   - v2-new-planid: each plan_update under a new planId;
//   - v2-plan-v1: the v1 plan update on v2;
//   - v2-plan-removed: an empty list sent as plan_removed;
//   - v2-no-cancel: a cancelled turn ends idle with end_turn;
//   - plan-ops: on v1, plan_update (planId "todo") to a client that
//     advertised clientCapabilities.plan, else plan;
//   - plan-ops-always: on v1, plan_update whatever the client advertised.
type fakeProto struct {
	has func(string) bool
	// fault: the mode has a v2 fault (v2-...), which speaks v2 too.
	fault bool
	// v2: the client offered protocol version 2 and the fake speaks it;
	// planCap: the client advertised clientCapabilities.plan (v1).
	v2, planCap bool
	plans       int  // plan_updates sent (v2-new-planid)
	messages    int  // prompts taken: the agent's messageIds
	cancelled   bool // the turn being run was cancelled
}

// initialize answers initialize as a v2 agent when the mode has v2 and
// the client offered 2 (it reports whether it did), and takes note of
// the client's capabilities.
func (p *fakeProto) initialize(f *fakeState, params json.RawMessage, reply func(any)) bool {
	var ip struct {
		ProtocolVersion    int `json:"protocolVersion"`
		ClientCapabilities struct {
			Plan json.RawMessage `json:"plan"`
		} `json:"clientCapabilities"`
	}
	_ = json.Unmarshal(params, &ip)
	p.planCap = len(ip.ClientCapabilities.Plan) > 0 && string(ip.ClientCapabilities.Plan) != "null"
	p.v2 = (p.has("v2") || p.fault) && ip.ProtocolVersion >= 2
	if !p.v2 {
		return false
	}
	caps := map[string]any{}
	if !p.has("no-load") {
		caps["session"] = map[string]any{}
	}
	reply(map[string]any{"protocolVersion": 2, "info": map[string]any{"name": "fake", "version": "0"}, "capabilities": caps, "authMethods": []any{}})
	return true
}

// promptV2 runs a v2 prompt: the answer acknowledges it at once, the turn
// runs, and an idle state_update ends it with its stopReason (cancelled
// when the client's session/cancel came during the turn).
func (f *fakeState) promptV2(reply func(any)) {
	reply(map[string]any{})
	f.proto.messages++
	f.notify(map[string]any{"sessionUpdate": "user_message", "messageId": fmt.Sprintf("user-%d", f.proto.messages),
		"content": []any{map[string]any{"type": "text", "text": f.msgs[len(f.msgs)-1]["content"]}}})
	f.notify(map[string]any{"sessionUpdate": "state_update", "state": "running"})
	f.proto.cancelled = false
	err := f.turn()
	// A session/cancel the runner sent during the turn is on stdin now:
	// the runner holds the model's last answer until it has written it.
	if stdinReady() && f.in.Scan() {
		var env fakeMethod
		if json.Unmarshal(f.in.Bytes(), &env) == nil && env.Method == "session/cancel" {
			f.proto.cancelled = true
		}
	}
	reason := "end_turn"
	switch {
	case f.proto.cancelled && !f.has("v2-no-cancel"):
		reason = "cancelled"
	case err != nil:
		reason = "refusal"
	}
	idle := map[string]any{"sessionUpdate": "state_update", "state": "idle", "stopReason": reason}
	if f.has("v2-idle-no-reason") {
		delete(idle, "stopReason")
	}
	if !f.has("v2-no-idle") {
		f.notify(idle)
	}
}

// fakeMethod is the part of a message promptV2 reads.
type fakeMethod struct {
	Method string `json:"method"`
}

// surface turns a v1 update the fake sends into what its surface sends.
func (p *fakeProto) surface(u map[string]any) []map[string]any {
	kind, _ := u["sessionUpdate"].(string)
	planOps := !p.v2 && (p.has("plan-ops-always") || (p.has("plan-ops") && p.planCap))
	switch {
	case strings.HasSuffix(kind, "_chunk") && p.v2:
		c := copyUpdate(u)
		c["messageId"] = fmt.Sprintf("msg-%d", p.messages) // v2: required on chunks
		return []map[string]any{c}
	case kind == "tool_call" && p.v2:
		c := copyUpdate(u)
		c["sessionUpdate"] = "tool_call_update" // v2: the first update creates the call
		return []map[string]any{c}
	case kind == "plan" && p.v2 && p.has("v2-plan-v1"):
		return []map[string]any{u}
	case kind == "plan" && (p.v2 || planOps):
		entries, _ := u["entries"].([]any)
		id := "todo"
		if p.has("v2-new-planid") {
			id = fmt.Sprintf("todo-%d", p.plans+1)
		}
		p.plans++
		if p.has("v2-plan-removed") && len(entries) == 0 {
			return []map[string]any{{"sessionUpdate": "plan_removed", "planId": id}}
		}
		return []map[string]any{{"sessionUpdate": "plan_update", "plan": map[string]any{"type": "items", "planId": id, "entries": u["entries"]}}}
	}
	return []map[string]any{u}
}

func copyUpdate(u map[string]any) map[string]any {
	c := make(map[string]any, len(u))
	for k, v := range u {
		c[k] = v
	}
	return c
}
