// Package fromlog rebuilds a cassette from a session log written by the
// harness or by the original TypeScript implementation: one exchange per
// model step, the request derived from the surface events before the step,
// the response an SSE body rebuilt from the step's assistant/chunk events.
// The requests are made by the llm client itself through a recording
// record.Recorder, so the cassette replays through the same matcher as a
// live recording. Steps gives the model steps of a log to tools that serve
// them another way (snapshot run).
package fromlog
