// Package cli is the todoharness command line: the cobra command tree of
// every subcommand (agent, chat, conform, peers, mock serve, log, record,
// cassette). cmd/todoharness is a thin shell over Main; tests run the same
// commands in process with Run, or as a subprocess of their own test binary
// (internal/testutil/selfexec), so no test builds the binary.
package cli
