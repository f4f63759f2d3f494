package breakage

import "encoding/json"

// Layer says which broken agent carries a breakage.
type Layer string

// The layers.
const (
	// Bridge: the reference agent with $TODOHARNESS_FAULT=Name (an
	// acp.Fault).
	Bridge Layer = "bridge"
	// Tool: the mutant test agent with $TODOHARNESS_MUTANT=Name (its todo
	// tool broken; todo.Rules relaxations and schema edits).
	Tool Layer = "tool"
	// Composition: the reference agent under a composition file
	// (Name is the policy it sets).
	Composition Layer = "composition"
	// Protocol: a shell command standing in for an agent that breaks ACP
	// itself.
	Protocol Layer = "protocol"
	// Fake: the conformance runner tests' fake agent with
	// CONFORMANCE_FAKE_MODE=Name. It fails fewer checks than the bridge for
	// some breakages (it keeps its list beside the session, so it still
	// replays on load), hence its own rows.
	Fake Layer = "fake"
	// Example: the example agent for agent authors,
	// docs/examples/minimal_agent.py (Python 3, standard library only),
	// with $FLAW=Name. The tier:conformance suite runs it when python3 is
	// on the PATH (and skips, saying so, when it is not).
	Example Layer = "example"
)

// Breakage is one way to break an agent and the checks it must fail:
// exactly these (sorted), no more and no fewer. A row that fails nothing
// proves a behaviour the contract allows (Why says which) is not failed.
type Breakage struct {
	Name  string
	Layer Layer
	Fails []string
	// FailsPooled is what it must fail, exactly (sorted), when the cases
	// that need no fresh process run as sessions of pooled agent
	// processes (conformance.Config.Pool), if that differs from Fails
	// (nil: the same).
	FailsPooled []string
	// Why explains a Fails list that is not obvious from the name.
	Why string
	// Mutation is the fault itself, for a Fake row: the runner tests'
	// fake agent applies it at its seams (nil: a mode of the fake's own
	// carries the row, conformance/fakeagent_test.go).
	Mutation *Mutation
	// ACPVersion is the protocol version the row's run offers (0: 1): a
	// row of 2 breaks the v2 surface and is judged on a run that offers
	// 2 (conform --acp-version 2), which the agent must negotiate.
	ACPVersion int
}

// Mutation is how a test agent breaks its todo tool or its plans, carried
// by the breakage row itself: a new Fake row that breaks one of these
// seams needs no code in the agent. Each field is optional; the values are
// the agent's JSON, decoded (an object is a map[string]any).
type Mutation struct {
	// Schema edits the parameters schema of the todo tool the agent
	// offers the model.
	Schema func(schema map[string]any)
	// Entry edits each entry of the plan updates the agent sends (a
	// write's and a load's replay).
	Entry func(entry map[string]any)
	// Result is the result text of an accepted todo call, from the text
	// the agent would send and the list the call wrote.
	Result func(text string, list []map[string]any) string
}

// requireOnItems is a Schema mutation: every item of the list requires
// field too.
func requireOnItems(list, field string) func(map[string]any) {
	return func(schema map[string]any) {
		props, _ := schema["properties"].(map[string]any)
		arr, _ := props[list].(map[string]any)
		items, _ := arr["items"].(map[string]any)
		if items == nil {
			return
		}
		req, _ := items["required"].([]any)
		items["required"] = append(req, field)
	}
}

// All returns every breakage, by layer, in a fixed order.
func All() []Breakage {
	planOnReject := []string{"ACP-SCHEMA-1", "TW-FINAL-1", "TW-LOAD-1", "TW-LOAD-2", "TW-PLAN-1", "TW-REJECT-KEEP-1",
		"TW-VALID-BADSTATUS", "TW-VALID-DUP", "TW-VALID-EMPTY", "TW-VALID-MISSING", "TW-VALID-TWOACTIVE", "TW-VALID-WS"}
	return []Breakage{
		{Name: "no-plan", Layer: Bridge, Fails: []string{"TW-EMPTY-1", "TW-FINAL-1", "TW-LOAD-1", "TW-LOAD-2", "TW-PLAN-1", "TW-REPLACE-1"}},
		{Name: "null-entries", Layer: Bridge, Fails: []string{"ACP-SCHEMA-1", "TW-FINAL-1", "TW-LOAD-1", "TW-LOAD-2", "TW-PLAN-1", "TW-PLAN-NONNULL-1", "TW-REPLACE-1"}},
		{Name: "no-priority", Layer: Bridge, Fails: []string{"ACP-SCHEMA-1", "TW-PLAN-PRIORITY-1", "TW-PLAN-PRIORITY-2"}},
		{Name: "plan-on-reject", Layer: Bridge, Fails: planOnReject},
		{Name: "accept-duplicates", Layer: Bridge, Fails: []string{"TW-VALID-DUP"}},
		{Name: "no-load-replay", Layer: Bridge, Fails: []string{"TW-FINAL-1", "TW-LOAD-1", "TW-LOAD-2"}},
		{Name: "replay-after-response", Layer: Bridge, Fails: []string{"TW-LOAD-1"}},
		{Name: "wrong-counts", Layer: Bridge, Fails: []string{"TW-COUNTS-1", "TW-COUNTS-2"}},
		{Name: "echo-list", Layer: Bridge, Fails: []string{"TW-COUNTS-2", "TW-HISTORY-1"}},
		{Name: "hang-on-prompt", Layer: Bridge, Fails: []string{"RUN-1"}},
		{Name: "crash-on-prompt", Layer: Bridge, Fails: []string{"RUN-1"}},
		{Name: "updates-after-response", Layer: Bridge, Fails: []string{"ACP-TURN-1"},
			Why: "answers the prompt when the model calls todo_write and runs the rest of the turn after: the runner waits for it, so only the prompt-turn rule fails"},
		{Name: "plans-reversed", Layer: Bridge, Fails: []string{"TW-FINAL-1", "TW-PLAN-1", "TW-REPLACE-1"},
			Why: "the plans of one model turn's writes in reverse order (codex-acp 0.16.0): the client ends the turn on the first list"},
		{Name: "coalesce-plans", Layer: Bridge, Fails: []string{"TW-PLAN-1", "TW-REPLACE-1"},
			Why: "one plan, the last list, for the several writes of one model turn: not one plan per write, but the client ends on the last list (TW-FINAL-1 passes)"},
		{Name: "interleaved-plans", Layer: Bridge,
			Why: "each plan held until the next tool call is announced (opencode 1.15.4's order): the plans stay in the order of the writes, so nothing fails"},
		{Name: "replay-other-session", Layer: Bridge, Fails: []string{"ACP-SESSION-1", "TW-FINAL-1", "TW-LOAD-1", "TW-LOAD-2"},
			Why: "session/load replays under another sessionId: an editor drops the replay, so no plan is restored"},
		{Name: "plan-update-unadvertised", Layer: Bridge, Fails: []string{"ACP-PLAN-FALLBACK-1", "ACP-SCHEMA-2", "TW-EMPTY-1", "TW-FINAL-1", "TW-LOAD-1", "TW-LOAD-2", "TW-PLAN-1", "TW-REPLACE-1"},
			Why: "protocol version 1: plan_update in place of plan to a client that did not advertise clientCapabilities.plan, which shows no list from it (plan_update is v1's draft: ACP-SCHEMA-2, INFO, lists it)"},
		{Name: "no-idle", Layer: Bridge, ACPVersion: 2, Fails: []string{"ACP-TURN-1"},
			Why: "protocol version 2: no idle state_update ends a turn (the prompt is still acknowledged); the in-process agent's idle report ends each wait for it"},
		{Name: "idle-without-stopreason", Layer: Bridge, ACPVersion: 2, Fails: []string{"ACP-TURN-1"},
			Why: "protocol version 2: the idle state_update that ends each turn carries no stopReason (the schema allows that; the prompt lifecycle's MUST does not)"},
		{Name: "new-planid-each-write", Layer: Bridge, ACPVersion: 2, Fails: []string{"TW-PLAN-1"},
			Why: "protocol version 2: each write a plan_update under a planId of its own: a client keeps every write as another plan (the last one received is still the last list)"},
		{Name: "plan-on-v2", Layer: Bridge, ACPVersion: 2, Fails: []string{"TW-EMPTY-1", "TW-FINAL-1", "TW-LOAD-1", "TW-LOAD-2", "TW-PLAN-1", "TW-REPLACE-1"},
			Why: "protocol version 2: the v1 plan update, which v2's open union of updates takes as an unknown kind (ACP-SCHEMA-1 passes) and a v2 client shows no list from"},
		{Name: "refuse-live-load", Layer: Bridge,
			Why: "session/load of the session open on the process answered -32602 \"already loaded\" (the original at the RFC's commit): nothing requires accepting it; the load is judged after a restart, so nothing fails"},
		{Name: "shared-todo-list", Layer: Bridge, FailsPooled: []string{"ACP-ISOLATION-1"},
			Why: "one todo list for the process, shown to each new session as its first prompt starts: with a process per case every built-in case opens one session, which finds no list, so nothing fails (exploration's scenarios that open a second session on a process find ACP-ISOLATION-1 there, and TW-PLAN-1); pooled, a session after another is shown that session's list, which it is not alone in a fresh process"},

		{Name: "rename-tool", Layer: Tool, Fails: []string{"TW-TOOL-1"},
			Why: "offered as todo_list: the todo_write calls reach no todo tool of the agent, so no check of a call is judged"},
		{Name: "loose-schema", Layer: Tool, Fails: []string{"ACP-SCHEMA-1", "TW-FINAL-1", "TW-PLAN-1", "TW-SCHEMA-1", "TW-VALID-MISSING"},
			Why: "the schema requires no field of an item: one without its status is accepted, and shown in a plan entry without one (invalid ACP)"},
		{Name: "extra-status", Layer: Tool, Fails: []string{"TW-SCHEMA-2"}},
		{Name: "accept-empty", Layer: Tool, Fails: []string{"TW-VALID-EMPTY", "TW-VALID-WS"}},
		{Name: "accept-blank", Layer: Tool, Fails: []string{"TW-VALID-WS"}},
		{Name: "any-status", Layer: Tool, Fails: []string{"ACP-SCHEMA-1", "TW-SCHEMA-2", "TW-VALID-BADSTATUS"},
			Why: "the accepted status also reaches the plan: invalid ACP"},
		{Name: "string-list", Layer: Tool, Fails: []string{"TW-FINAL-1", "TW-PLAN-1", "TW-SCHEMA-1", "TW-VALID-NOTARRAY"},
			Why: "a string todos is accepted although it is no list of {content, status}"},

		{Name: "allow-parallel-in-progress", Layer: Composition, Fails: []string{"TW-VALID-TWOACTIVE"},
			Why: "the todo plugin configured with allowParallelInProgress: true"},

		{Name: "silent-on-initialize", Layer: Protocol, Fails: []string{"ACP-INIT-1", "RUN-1"},
			Why: "reads its input and never answers"},
		{Name: "banner-on-stdout", Layer: Protocol, Fails: []string{"ACP-JSONRPC-1"},
			Why: "prints a line that is not JSON-RPC before serving"},

		{Name: "no-plan", Layer: Fake, Fails: []string{"TW-EMPTY-1", "TW-FINAL-1", "TW-PLAN-1", "TW-REPLACE-1"},
			Why: "the fake still replays on load"},
		{Name: "null-entries", Layer: Fake, Fails: []string{"ACP-SCHEMA-1", "TW-PLAN-NONNULL-1"}},
		{Name: "no-priority", Layer: Fake, Fails: []string{"ACP-SCHEMA-1", "TW-PLAN-PRIORITY-1", "TW-PLAN-PRIORITY-2"},
			Mutation: &Mutation{Entry: func(e map[string]any) { delete(e, "priority") }}},
		{Name: "plan-on-reject", Layer: Fake, Fails: []string{"ACP-SCHEMA-1", "TW-FINAL-1", "TW-PLAN-1", "TW-REJECT-KEEP-1", "TW-VALID-BADSTATUS", "TW-VALID-DUP", "TW-VALID-EMPTY", "TW-VALID-MISSING", "TW-VALID-TWOACTIVE", "TW-VALID-WS"},
			Why: "the plan for the bad-status call carries status \"done\": invalid ACP"},
		{Name: "accept-empty", Layer: Fake, Fails: []string{"TW-VALID-EMPTY", "TW-VALID-WS"}},
		{Name: "no-load-replay", Layer: Fake, Fails: []string{"TW-FINAL-1", "TW-LOAD-1", "TW-LOAD-2"}},
		{Name: "replay-after-response", Layer: Fake, Fails: []string{"TW-LOAD-1"}},
		{Name: "wrong-counts", Layer: Fake, Fails: []string{"TW-COUNTS-1", "TW-COUNTS-2"}},
		{Name: "echo-list", Layer: Fake, Fails: []string{"TW-COUNTS-2", "TW-HISTORY-1"},
			Mutation: &Mutation{Result: func(text string, list []map[string]any) string {
				b, _ := json.Marshal(list)
				return text + "\n" + string(b)
			}}},
		{Name: "rename-tool", Layer: Fake, Fails: []string{"TW-TOOL-1"}},
		{Name: "no-load", Layer: Fake, Fails: []string{"TW-LOAD-1", "TW-LOAD-2", "TW-LOAD-CAP-1"},
			Why: "no loadSession capability: load is part of the contract, the load checks fail"},
		{Name: "hang-on-prompt", Layer: Fake, Fails: []string{"RUN-1"}},
		{Name: "crash-on-prompt", Layer: Fake, Fails: []string{"RUN-1"}},
		{Name: "any-case-status", Layer: Fake, Fails: []string{"ACP-SCHEMA-1", "TW-VALID-BADSTATUS"},
			Why: "statuses in any casing (In_Progress, COMPLETED) accepted and shown raw in the plan: invalid ACP"},
		{Name: "updates-after-response", Layer: Fake, Fails: []string{"ACP-TURN-1"},
			Why: "answers the prompt when the model calls a tool and runs the rest of the turn after"},
		{Name: "require-active-form", Layer: Fake, Fails: []string{"TW-SCHEMA-3"},
			Why:      "the schema requires an activeForm on every item (claude's field, on the todo_write tool), which the contract's calls do not send, and the agent accepts them without it: only the schema is wrong",
			Mutation: &Mutation{Schema: requireOnItems("todos", "activeForm")}},
		{Name: "plan-ops-always", Layer: Fake, Fails: []string{"ACP-PLAN-FALLBACK-1", "ACP-SCHEMA-2", "TW-EMPTY-1", "TW-FINAL-1", "TW-LOAD-1", "TW-LOAD-2", "TW-PLAN-1", "TW-REPLACE-1"},
			Why: "protocol version 1: plan_update in place of plan to a client that did not advertise clientCapabilities.plan, which shows no list from it (plan_update is v1's draft: ACP-SCHEMA-2, INFO, lists it)"},
		{Name: "v2-idle-no-reason", Layer: Fake, ACPVersion: 2, Fails: []string{"ACP-TURN-1"},
			Why: "protocol version 2: the idle state_update that ends each turn carries no stopReason (the schema allows that; the prompt lifecycle's MUST does not)"},
		{Name: "v2-no-cancel", Layer: Fake, ACPVersion: 2, Fails: []string{"ACP-TURN-1"},
			Why: "protocol version 2: a turn the client cancelled ends idle with stopReason end_turn, not cancelled"},
		{Name: "v2-new-planid", Layer: Fake, ACPVersion: 2, Fails: []string{"TW-PLAN-1"},
			Why: "protocol version 2: each plan_update under a new planId: a client shows a plan more for each write (the last one received is still the last list)"},
		{Name: "v2-plan-removed", Layer: Fake, ACPVersion: 2, Fails: []string{"TW-EMPTY-1", "TW-FINAL-1", "TW-PLAN-1"},
			Why: "protocol version 2: an empty list sent as plan_removed, not as a plan_update with no entries"},
		{Name: "v2-plan-v1", Layer: Fake, ACPVersion: 2, Fails: []string{"TW-EMPTY-1", "TW-FINAL-1", "TW-LOAD-1", "TW-LOAD-2", "TW-PLAN-1", "TW-REPLACE-1"},
			Why: "protocol version 2: the v1 plan update, which v2's open union of updates takes as an unknown kind (ACP-SCHEMA-1 passes) and a v2 client shows no list from"},
		{Name: "go-trim", Layer: Fake, Fails: []string{"TW-PLAN-TRIM-1"},
			Why: "trims content with Go's strings.TrimSpace, not the contract's JavaScript trim(): U+FEFF kept, U+0085 cut; its author did trim, so only the SHOULD check fails"},

		{Name: "no-priority", Layer: Example, Fails: []string{"ACP-SCHEMA-1", "TW-PLAN-PRIORITY-1", "TW-PLAN-PRIORITY-2"},
			Why: "plan entries without priority: invalid ACP"},
		{Name: "no-validation", Layer: Example, Fails: []string{"TW-VALID-DUP", "TW-VALID-EMPTY", "TW-VALID-TWOACTIVE", "TW-VALID-WS"},
			Why: "only the schema's rules: blank, duplicate and two in_progress lists are accepted (and shown, and replayed, as accepted)"},
		{Name: "echo-list", Layer: Example, Fails: []string{"TW-COUNTS-2", "TW-HISTORY-1"},
			Why: "the result carries the list after the counts"},
		{Name: "no-load", Layer: Example, Fails: []string{"TW-LOAD-1", "TW-LOAD-2", "TW-LOAD-CAP-1"},
			Why: "no loadSession capability, session/load not served: load is part of the contract"},
	}
}

// In returns the breakages of one layer, in order.
func In(l Layer) []Breakage {
	var out []Breakage
	for _, b := range All() {
		if b.Layer == l {
			out = append(out, b)
		}
	}
	return out
}

// Names returns the names of the breakages of one layer, in order.
func Names(l Layer) []string {
	var out []string
	for _, b := range In(l) {
		out = append(out, b.Name)
	}
	return out
}

// Label names a breakage in test output: "bridge no-plan".
func (b Breakage) Label() string { return string(b.Layer) + " " + b.Name }

// FailsCheck reports whether b must fail the check id.
func (b Breakage) FailsCheck(id string) bool {
	for _, x := range b.Fails {
		if x == id {
			return true
		}
	}
	return false
}

// Pooled is what b must fail when the poolable cases run as sessions of
// pooled processes: FailsPooled, or Fails when that is nil.
func (b Breakage) Pooled() []string {
	if b.FailsPooled != nil {
		return b.FailsPooled
	}
	return b.Fails
}
