// Command todoharness is the test and conformance harness for the todo_write
// contract: a reference ACP agent, a scripted mock model, a conformance
// runner for any ACP agent, record/replay tooling and session-log tools.
// The command tree is package cmd/todoharness/cli; this is a thin shell over it.
package main

import (
	"os"

	"github.com/todoharness/todoharness/cmd/todoharness/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:]))
}
