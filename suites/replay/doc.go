// Package replay is the session/load replay tier (ginkgo label tier:replay):
// a session whose model wrote a todo list is reopened by a fresh ACP bridge
// (in process over io.Pipe pairs, and across processes with the
// `todoharness agent` binary over stdio) and session/load must restore the
// plan — the last write — before it answers. It also loads the interop log
// recorded by the original TypeScript harness and checks that the replay
// shows the same plan (indeed the same updates) the original streamed live,
// keeps an ACP transcript golden per scenario in golden/replay/, and checks
// that malformed JSON-RPC input is answered and the agent keeps serving.
package replay
