// Package wire is the wire tier (ginkgo label tier:wire): the mock model
// driven by each provider's official Go SDK, one wire format at a time —
// OpenAI chat completions and Responses (github.com/openai/openai-go/v3),
// Anthropic Messages (github.com/anthropics/anthropic-sdk-go/v2) and Gemini
// (google.golang.org/genai) — streaming and not, on 127.0.0.1 with fake keys.
//
// One script (testdata/todo.yaml) is played over every wire: scripted
// reasoning and text, a todo_write call whose arguments arrive intact
// (split over many stream events where the API streams arguments), the
// usage figures in each API's own fields, a tool-result round trip whose
// canonical journal entry carries the error flag, and a request the script
// does not expect, refused in the API's own error shape with a message the
// SDK surfaces.
//
// The reference agent's own chat-completions client (harness/llm/openaichat)
// is held here to the request bytes openai-go sends for the same
// conversation, so that cassettes recorded through the SDK keep matching.
//
// BenchmarkWireSDK measures requests per second per wire through the SDKs;
// mockmodel's BenchmarkWire measures the server alone.
package wire
