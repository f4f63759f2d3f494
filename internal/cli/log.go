package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"

	"github.com/spf13/cobra"

	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/stdio"
)

func newLogCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "log", Short: "Inspect and validate session logs (JSONL)"}
	cmd.AddCommand(&cobra.Command{
		Use:   "check FILE",
		Short: "Validate a session log against the invariants (exit 1 on violation)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLogCheck(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0])
		},
	})
	cmd.AddCommand(&cobra.Command{
		Use:   "show FILE",
		Short: "Print the current plan as the stdio checklist and a count per event type",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLogShow(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args[0])
		},
	})
	return cmd
}

// runLogCheck streams a log and checks every event as it is read (memory
// bounded by the longest line). Unknown event types are warnings, never
// failures. It stops with the command's context (SIGINT/SIGTERM) and never
// modifies the file.
func runLogCheck(ctx context.Context, out, errw io.Writer, path string) error {
	f, err := session.OpenForRead(ctx, path)
	if err != nil {
		fmt.Fprintln(errw, "FAIL", err)
		return exitCode(1)
	}
	defer f.Close()
	rd := f.Reader(session.ReadOptions{})
	h, err := rd.Header(ctx)
	if err != nil {
		fmt.Fprintln(errw, "FAIL", err)
		return exitCode(1)
	}
	var c session.Checker
	unknown := map[string]bool{}
	n := 0
	warned := 0
	flushWarnings := func() {
		for _, w := range rd.Warnings()[warned:] {
			fmt.Fprintln(errw, "warning:", w)
		}
		warned = len(rd.Warnings())
	}
	for {
		e, err := rd.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			flushWarnings()
			fmt.Fprintln(errw, "FAIL", err)
			return exitCode(1)
		}
		n++
		if !session.IsKnownType(e.Type) && !unknown[e.Type] {
			unknown[e.Type] = true
			fmt.Fprintf(errw, "warning: %s:%d: unknown event type %q (kept, not checked; reported once per type)\n", path, rd.Line(), e.Type)
		}
		if err := c.Check(e); err != nil {
			var ie *session.InvariantError
			if errors.As(err, &ie) {
				ie.Line = rd.Line()
			}
			flushWarnings()
			fmt.Fprintf(errw, "FAIL %s: %v\n", path, err)
			return exitCode(1)
		}
	}
	flushWarnings()
	if t, s := c.State(); t != 0 {
		fmt.Fprintf(errw, "warning: %s: log ends inside turn %d (step %d): the turn never ended\n", path, t, s)
	}
	fmt.Fprintf(out, "ok %s: session %s, %d events\n", path, h.ID, n)
	return nil
}

func runLogShow(ctx context.Context, out, errw io.Writer, path string) error {
	ld, err := session.LoadFileContext(ctx, path)
	if err != nil {
		return err
	}
	for _, w := range ld.Warnings {
		fmt.Fprintln(errw, "warning:", w)
	}
	fmt.Fprintf(out, "session %s (%d events)\n", ld.Header.ID, len(ld.Events))
	todos, ok := session.CurrentTodos(ld.Events)
	if !ok {
		fmt.Fprintln(out, "\n  [todos]\n    (no todo_write in this session)")
	} else {
		fmt.Fprint(out, stdio.RenderTodos(todos))
	}
	counts := map[string]int{}
	for _, e := range ld.Events {
		counts[e.Type]++
	}
	types := make([]string, 0, len(counts))
	for t := range counts {
		types = append(types, t)
	}
	sort.Strings(types)
	fmt.Fprintln(out)
	for _, t := range types {
		fmt.Fprintf(out, "%-18s %d\n", t, counts[t])
	}
	return nil
}
