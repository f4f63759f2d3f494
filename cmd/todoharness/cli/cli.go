package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/todoharness/todoharness/internal/buildinfo"
)

// Main runs the command line args (without the program name) on the
// process's stdio, with SIGINT and SIGTERM cancelling its context, and
// returns the exit status.
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, args, os.Stdin, os.Stdout, os.Stderr)
}

// Run runs the command line args (without the program name) in process on
// the given stdio and returns the exit status: 0, the status a command chose
// (log check: 1 on a broken log; conform: 1 on a failed MUST check), or 2
// with the error printed to stderr.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runRoot(ctx, rootFor(args), args, stdin, stdout, stderr)
}

// runRoot is Run with the command tree root.
func runRoot(ctx context.Context, root *cobra.Command, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if args == nil {
		args = []string{} // cobra reads os.Args for a nil slice
	}
	root.SetArgs(args)
	root.SetIn(stdin)
	root.SetOut(stdout)
	root.SetErr(stderr)
	cmd, err := root.ExecuteContextC(ctx)
	flushStreams(cmd)
	if err != nil {
		var ec exitCode
		if asExit(err, &ec) {
			return int(ec)
		}
		ew := errorOut(ctx, cmd, stderr)
		fmt.Fprintln(ew, "todoharness:", err)
		_ = ew.Flush()
		return 2
	}
	return 0
}

// NewRootCmd returns the todoharness command with every subcommand.
func NewRootCmd() *cobra.Command { return newRoot(subcommands()) }

// newRoot returns the todoharness command with the subcommands cmds.
func newRoot(cmds []*cobra.Command) *cobra.Command {
	root := &cobra.Command{
		Use:           "todoharness",
		Short:         "Test and conformance harness for the todo_write tool contract",
		SilenceUsage:  true,
		SilenceErrors: true,
		// --version: the module version and the VCS revision.
		Version: buildinfo.Version(),
	}
	root.SetVersionTemplate("todoharness {{.Version}}\n")
	root.SetFlagErrorFunc(flagError)
	for _, c := range cmds {
		root.AddCommand(c)
	}
	registerCompletions(root)
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
