// Package cassettetest holds what the tests of the cassette packages share:
// a local OpenAI-compatible event-stream server, its answers, and a
// two-exchange recording made against it.
package cassettetest
