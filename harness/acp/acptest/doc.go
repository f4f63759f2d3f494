// Package acptest drives ACP agents in tests, the way net/http/httptest
// drives handlers. The recording client it hands out (Serve for an
// in-process bridge on pipes, Connect for any pair of streams such as a
// subprocess's stdio) is package acpclient's, re-exported here so tests name
// one helper package; the transcript normalisation the goldens use is
// package transcript. Shipped code (the record command) imports those two
// directly and never this package.
package acptest
