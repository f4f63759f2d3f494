// Command todoharness is the test and conformance harness for the todo_write
// contract: a reference ACP agent, a scripted mock model, a conformance
// runner for any ACP agent, record/replay tooling and session-log tools.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	root := newRootCmd()
	if err := root.ExecuteContext(ctx); err != nil {
		var ec exitCode
		if asExit(err, &ec) {
			os.Exit(int(ec))
		}
		fmt.Fprintln(os.Stderr, "todoharness:", err)
		os.Exit(2)
	}
}

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:           "todoharness",
		Short:         "Test and conformance harness for the todo_write tool contract",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	for _, c := range subcommands() {
		root.AddCommand(c)
	}
	return root
}

// exitCode is an error that only carries a process exit status: the command
// already printed what went wrong.
type exitCode int

func (e exitCode) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func asExit(err error, target *exitCode) bool {
	ec, ok := err.(exitCode)
	if ok {
		*target = ec
	}
	return ok
}
