// Package acp is the reference harness's ACP bridge: the agent side of the
// Agent Client Protocol (version 1, JSON-RPC lines over stdio, on
// github.com/coder/acp-go-sdk), so that an editor such as Zed can drive the
// harness and render the model's todo list as an ACP plan.
//
// # Methods
//
//   - initialize: protocolVersion 1, agentCapabilities.loadSession true,
//     agentInfo {name "todoharness", version}.
//   - session/new: creates a persisted session (<id>.jsonl in the sessions
//     directory; the header records the cwd). A cwd that is not an absolute
//     path answers -32602 naming the field (so does session/load's), and so
//     does one that exists here but is not a directory (a missing path is
//     accepted: the client may see another file system). A request whose
//     id is null is answered -32600 Invalid Request (id null): JSON-RPC 2.0
//     would otherwise leave it unanswered as a notification.
//   - session/prompt: runs one turn of the agent loop and streams a
//     session/update for every event the turn appends (the bridge subscribes
//     to the session log), then answers the stop reason: end_turn,
//     cancelled (after session/cancel), max_turn_requests (the agent's step
//     limit). A model error answers a JSON-RPC error -32603 "model error:
//     <reason>" (ACP has no stop reason for it; the turn/end event in the log
//     keeps the reason).
//   - session/cancel: cancels the running prompt's context.
//   - session/load: opens the stored log and replays every event through the
//     same Mapper as a live prompt (plus user_message_chunk for the user's
//     messages), and answers only after the replay was written; the session
//     becomes live (prompts reach it) only after its replay succeeded, so a
//     failed load leaves nothing behind. An unknown id, or one that cannot
//     name a file (longer than MaxSessionIDLen, or with other characters
//     than letters, digits, '.', '_', '-'), answers -32002 "session not
//     found: <id>"; an unreadable log, one that breaks an invariant or one
//     whose replay fails answers -32603 with the reason, which names the
//     file line; a session whose log another process holds (the log's
//     flock) answers -32603 "session <id> is in use by another process: pid
//     N (command) holds its log", with the holder in data. Every event a
//     client is shown was persisted first: the session log writes (and, for
//     tool calls, results and todo/write, fsyncs) an event before it tells
//     the bridge's subscription, so a killed agent's session reloads with
//     everything the client saw, its open turn closed as interrupted.
//
// # Mapping (see Mapper.Map)
//
// reasoning-delta -> agent_thought_chunk; text-delta -> agent_message_chunk;
// tool/call -> tool_call (status in_progress, title/kind/rawInput from the
// tool's presentCall); todo/write -> plan (entries in order, priority
// "medium" synthesised here, `[]` for an empty list, never null);
// tool/result -> tool_call_update (completed, or failed with the error text).
// The todo tool appends todo/write between tool/call and tool/result, so a
// todo_write call shows tool_call -> plan -> tool_call_update, and a
// rejected call, which appends nothing, shows no plan.
//
// # Version 2 (Draft) and v1's plan operations
//
// The version is negotiated per connection, by the first initialize (see
// Bridge.route): a client that offers protocolVersion 2 or more gets
// version 2, served by the bridge itself (v2.go; the SDK speaks v1 only),
// over the same sessions and the same Mapper; a client that offers 1 gets
// version 1 exactly as described above. On v2:
//
//   - initialize answers protocolVersion 2, info and capabilities.session
//     (the baseline: session/new, list, resume, close, prompt, cancel);
//   - session/prompt answers {} once the turn holds the session; the turn
//     sends user_message, state_update running, its updates, and ends with
//     state_update idle carrying the stop reason (end_turn, cancelled after
//     session/cancel, max_turn_requests; a model error is the extension
//     reason _model_error, its text in _meta.todoharness.error);
//   - text chunks carry a messageId derived from the log (the same on
//     replay); the first tool_call_update of a call creates it (no
//     tool_call); a todo/write is plan_update {type "items", planId PlanID,
//     entries}: one planId for the session's list, across writes and
//     resumes; no entry is ever "cancelled" (see PlanID);
//   - session/resume with replayFrom {type "start"} is session/load (the
//     history replayed, the plan included, before the answer); without
//     replayFrom it reattaches without replay; there is no session/load;
//   - session/list lists the sessions open on the connection; session/close
//     cancels and waits for the session's turn and closes its log.
//
// On v1 a client whose initialize advertises clientCapabilities.plan (an
// object; v1's unstable plan operations) gets plan_update in place of plan;
// every other v1 client gets plan, as the draft requires.
//
// # Wire
//
// The SDK drops malformed input lines silently and stops reading for good at
// a line longer than its 10 MiB buffer; the bridge filters its input (see
// input.go) and answers a line that is not JSON with -32700 Parse error,
// JSON that is not a JSON-RPC message with -32600 Invalid request, a line
// longer than MaxLine (10 MiB, newline included) with -32600 naming the
// limit and carrying the request's id when it can be recovered (the line is
// read to its end without being kept), and any request before initialize
// with -32600 "… before initialize"; a notification before initialize is
// dropped. It keeps serving after each.
// Diagnostics go to Config.Logger, never to the protocol stream.
//
// # Faults (tests only)
//
// Config.Faults breaks one behaviour per fault so the conformance suite can
// prove it notices; `todoharness agent` reads them from $TODOHARNESS_FAULT
// (comma-separated; KnownFaults, one per bridge row of conformance/breakage).
// An unknown name is an error (ParseFaults). The empty set is the correct
// agent. The faults are a layer around the bridge, not branches inside it:
// the request layer (faultyAgent serves the connection in the bridge's
// place), the presentation layer (faultyPresenter wraps the mapping of
// events and the sending of a turn's updates) and the tool layer
// (faultyTools, with the rule relaxations of harness/breakage).
package acp
