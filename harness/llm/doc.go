// Package llm defines the harness's view of a language model: the messages it
// is sent, the tools it is offered, and the stream of chunks it answers with.
//
// The chunk vocabulary (block-start, reasoning-delta, text-delta,
// tool-call-delta, block-end, usage, finish) is the one the original
// TypeScript harness writes into assistant/chunk session events, so logs from
// either implementation are interchangeable. The streaming client for
// OpenAI-compatible servers is in the subpackage openaichat. This package
// imports no SDK; it never imports the session log, the mock model or the
// conformance runner.
package llm
