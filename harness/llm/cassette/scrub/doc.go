// Package scrub keeps credentials out of cassettes and out of what is
// printed about them.
//
// Before a cassette is saved (package record), a Scrubber removes request
// and response headers that carry credentials (Authorization,
// Proxy-Authorization, Api-Key, X-Api-Key, Cookie, Set-Cookie, and any
// header whose name mentions key, token, secret, auth, cookie, password or
// signature); key-like query parameters and JSON body fields (api_key,
// apiKey, key, token, access_token, secret, password, ...) get the value
// [REDACTED]; any remaining text that looks like a credential (sk-… keys,
// Bearer … tokens, also seen only through a JSON or URL escape) and any
// known secret, in every form KeyForms lists, is replaced by [REDACTED]
// everywhere, bodies included; so is every fragment of a known secret that
// can be located (8 of its characters, case, separators, order and rot13
// ignored, in HTML entities, base64, hex, Ascii85, gzip and UTF-16: see
// fragments.go), and a header named after one is dropped. A replay (package
// replay) scrubs each live request the same way before matching it, so it
// matches its own recording and a miss's diff never shows a secret.
//
// ScanCredentials and ScanSecrets (fragments included) find what
// scrubbing should have removed, for the tests and the `cassette scan`
// command that police committed files; RedactText and RedactJSONLines scrub diffs and transcripts;
// CredentialsOf lists the credentials a live request carries.
package scrub
