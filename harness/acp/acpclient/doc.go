// Package acpclient drives an ACP agent as an editor would: a recording ACP
// client on any pair of streams (io.Pipe pairs for an in-process bridge, a
// subprocess's stdio for a binary) with a tee of the raw agent-to-client
// wire. It offers no file system, terminal or permission capability.
//
// The record command uses it to run e2e scenarios against the reference
// bridge; tests reach it through harness/acp/acptest.
package acpclient
