// Package openaichat is a streaming llm.Model client for OpenAI-compatible
// chat-completions servers (DeepSeek, the mock model server), on net/http
// and encoding/json: it sends the request body openai-go sent (so the
// cassettes recorded through that SDK keep matching), reads the answer's
// server-sent events, and turns wire deltas into the llm chunk vocabulary.
//
// It uses no SDK: openai-go's compile alone was 2.74 GB of memory, most of
// an empty-cache `make demo` (docs/performance.md). The wire tier
// (suites/wire) still drives the mock model with the official SDK, and
// checks there that this client sends the same bytes.
//
// It lives apart from package llm so that importers of the on-disk
// vocabulary (session log, mock model, conformance runner) do not compile
// the HTTP client.
package openaichat
