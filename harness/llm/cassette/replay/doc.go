// Package replay answers a client's model requests from a cassette
// (package cassette); nothing leaves the process.
//
// A Player is an http.RoundTripper (serve it with package proxy for an
// agent in any language). Requests are matched against the recorded ones on
// method + URL path + canonical JSON body; recorded latency is skipped. The
// canonical form of a JSON body is the body scrubbed as a saved cassette is
// (package scrub: a live request matches its own recording), calendar dates
// read as {{date}}, the volatile fields removed, and object keys sorted.
// Volatile fields are the top-level keys that identify the caller or frame
// the transport rather than say what the model is asked: user, metadata
// and stream_options. Nothing inside messages or tools is volatile: the
// model name, the messages (tool call ids included, which come from the
// cassette itself), the tools and stream all take part in matching.
//
// Identical requests are answered in recorded order (each recorded exchange
// is replayed at most once), so a conversation that asks the same thing
// twice replays both answers in turn: go-vcr's cassette keeps which
// exchanges were replayed. A request with no match is answered with an HTTP
// error that says so (and is kept in Misses), carrying a diff between the
// request made and the nearest recorded request.
package replay
