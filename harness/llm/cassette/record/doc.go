// Package record records the HTTP exchanges between a client (the llm
// client, or any agent through package proxy) and a model server into a
// cassette (package cassette), on top of gopkg.in/dnaeon/go-vcr.v3.
//
// A Recorder is an http.RoundTripper: every request goes to the real
// transport; on Stop the exchanges are normalised (bodies stored decoded,
// volatile headers, durations and loopback ports dropped, so recording an
// unchanged exchange twice writes the same bytes), scrubbed of credentials
// (package scrub) and saved with a provenance block, which Start completes
// (a recording against a loopback server is never labelled real-model
// output). Normalising and scrubbing happen on copies, in go-vcr
// BeforeSaveHooks, after the live request was sent: what reaches the server
// is never changed. The saved file is scanned for anything that still looks
// like a credential before it replaces the old one.
package record
