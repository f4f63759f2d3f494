// Package proxy serves a cassette transport (a recording record.Recorder or
// a replaying replay.Player) over HTTP on 127.0.0.1, so that any agent, in
// any language, can be recorded and replayed: pointed at the proxy's URL as
// it would be pointed at its provider, the agent reaches the upstream
// through the recorder (record mode), or is answered from the cassette with
// nothing leaving the machine (replay mode). The request path goes to the
// upstream as it came; only the scheme and host change.
//
// While recording, the proxy learns the credentials the agent sends
// (Authorization bearer and basic values, x-api-key, x-goog-api-key,
// api-key and any other credential header, cookies, key-like query
// parameters: scrub.CredentialsOf) and the user:password of the upstream
// URL, and hands them to the recorder as known secrets: they are scrubbed
// in every form wherever they appear in the cassette. A user:password in
// the upstream URL is sent as basic authorization when the agent sends
// none.
package proxy
