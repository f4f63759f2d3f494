// Package cassette records and replays the HTTP exchanges between the llm
// client and an OpenAI-compatible model server (DeepSeek, or the local mock
// model server), on top of gopkg.in/dnaeon/go-vcr.v3.
//
// A Recorder is an http.RoundTripper that goes under the llm client
// (openaichat.ClientConfig.HTTPClient). It runs in one of two modes:
//
//   - Record: every request goes to the real transport; on Stop the
//     exchanges are scrubbed of credentials and saved, with a provenance
//     block. Scrubbing happens on copies, in a go-vcr BeforeSaveHook, after
//     the live request was sent: what reaches the server is never changed.
//   - Replay: nothing leaves the process. Requests are matched against the
//     recorded ones on method + URL path + canonical JSON body; recorded
//     latency is skipped. A request with no match is answered with an HTTP
//     error that says so (and is kept in Misses), carrying a diff between the
//     request made and the nearest recorded request.
//
// In both modes, server-sent-event bodies are handed to the client one event
// per Read, so the client's streaming parser works exactly as it does on a
// live connection (go-vcr itself buffers whole bodies).
//
// # File format
//
// A cassette is a go-vcr version 2 YAML file with one extra top-level key,
// provenance, written first in the file. go-vcr's loader ignores keys it does
// not know, so the file loads with stock go-vcr; this package reads the
// provenance back with LoadProvenance and refuses to replay a cassette that
// has none:
//
//	---
//	provenance:
//	  source: real-model        # real-model | mock-server | session-log
//	  realModelOutput: true     # false for anything produced by a script
//	  description: recorded against https://api.deepseek.com
//	  apiHost: api.deepseek.com
//	  baseURL: https://api.deepseek.com
//	  model: deepseek-chat
//	  recordedAt: "2026-06-29T02:53:19Z"
//	  toolVersion: todoharness (devel)
//	  scenario: todo-plan
//	version: 2
//	interactions: [...]
//
// Only this package writes cassettes, and it always writes the block (go-vcr's
// own Save would drop it; the Recorder re-adds it after go-vcr has saved).
//
// # Scrubbing
//
// Before a cassette is saved: request and response headers that carry
// credentials are removed (Authorization, Proxy-Authorization, Api-Key,
// X-Api-Key, Cookie, Set-Cookie, and any header whose name mentions key,
// token, secret, auth, cookie, password or signature); key-like query
// parameters and JSON body fields (api_key, apiKey, key, token, access_token,
// secret, password, ...) get the value [REDACTED]; any remaining text that
// looks like a credential (sk-… keys, Bearer … tokens) and any literal
// secret passed in Options.Secrets is replaced by [REDACTED] everywhere,
// bodies included. ScanCredentials finds what scrubbing should have removed,
// for tests that police committed cassettes.
//
// # Matching
//
// The canonical form of a JSON body is the body with credentials scrubbed as
// above, the volatile fields removed, and object keys sorted. Volatile fields
// are the top-level keys that identify the caller or frame the transport
// rather than say what the model is asked: user, metadata and stream_options.
// Nothing inside messages or tools is volatile: the model name, the messages
// (tool call ids included, which come from the cassette itself), the tools and
// stream all take part in matching. Identical requests are answered in
// recorded order (each recorded exchange is replayed at most once), so a
// conversation that asks the same thing twice replays both answers in turn.
//
// # Rebuilding from a session log
//
// FromLog rebuilds a cassette from a session log written by the harness or
// by the original TypeScript implementation: one exchange per model step,
// the request derived from the surface events before the step, the response
// an SSE body rebuilt from the step's assistant/chunk events.
package cassette
