// Package transcript reads and normalises raw ACP transcripts (one JSON-RPC
// message per line) into the golden format of DESIGN.md "Goldens": session
// ids, cwds, JSON-RPC ids and times made stable so that two runs compare
// equal. The e2e scenarios (shipped in the record command) and the replay
// tests use it.
package transcript
