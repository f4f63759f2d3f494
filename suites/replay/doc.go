// Package replay is the session/load replay tier (ginkgo label tier:replay):
// a session whose model wrote a todo list is reopened by a fresh ACP bridge
// (in process over io.Pipe pairs, and across processes with the
// `todoharness agent` binary over stdio) and session/load must restore the
// plan — the last write — before it answers. It also loads the interop log
// recorded by the original TypeScript harness and checks that the replay
// shows the same plan (indeed the same updates) the original streamed live,
// keeps an ACP transcript golden per scenario in golden/replay/, and checks
// that malformed JSON-RPC input is answered and the agent keeps serving.
// On ACP version 2 (a raw client offering protocolVersion 2, every line
// checked against the v2 schema) the same restore is session/resume with
// replayFrom {type: "start"}: the plan comes back as plan_update under the
// session's one planId, before the answer, and a session moves between v1
// and v2 connections with its plan.
package replay
