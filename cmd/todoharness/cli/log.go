package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/stdio"
	"github.com/todoharness/todoharness/harness/todolist"
)

func newLogCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "log", Short: "Inspect and validate session logs (JSONL)"}
	var policy string
	var list, strict bool
	check := &cobra.Command{
		Use:   "check FILE|DIR...",
		Short: "Validate session logs against the invariants and every todo_write against the contract (exit 1 on a violation)",
		Long: `Validate session logs: every line, the event invariants, and every todo/write
payload against the todo_write contract under --policy. A DIR is a scenario
folder of the original (session.jsonl and its subagents' session.1.jsonl,
session.2.jsonl, ...): each log is checked and named. Both the runtime format
and the original's committed-fixture format (no seq/time, packed chunk rows)
are read. --list prints every invariant with its ID. Reading never modifies a
log; the check streams (memory bounded by the longest line) and stops on
SIGINT/SIGTERM. Warnings go to stderr and do not fail a log unless --strict.

Exit status: 0 when every log passes, 1 when one fails (a broken line or
invariant, a todo_write contract finding, a log that cannot be read; with
--strict also a warning), 2 when the command line is wrong (no FILE, an unknown
--policy).`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if list {
				for _, inv := range session.Invariants() {
					fmt.Fprintf(cmd.OutOrStdout(), "%-12s %s\n", inv.ID, inv.Text)
				}
				return nil
			}
			if len(args) == 0 {
				return errors.New("log check: give a FILE or DIR (or --list)")
			}
			if err := checkLogPolicy(policy); err != nil {
				return err
			}
			return runLogCheck(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args, policy, strict)
		},
	}
	check.Flags().BoolVar(&strict, "strict", false, "a warning (an unknown event type, a log that ends inside a turn, a line read leniently) fails the log too")
	check.Flags().StringVar(&policy, "policy", string(todolist.Single), "todo_write policy: single (at most one in_progress), parallel (any number), or auto (read from the todo_write description the log's request headers recorded; single when there is none)")
	check.Flags().BoolVar(&list, "list", false, "print every invariant log check judges, with its ID, and exit")
	cmd.AddCommand(check)

	var showPolicy string
	show := &cobra.Command{
		Use:   "show FILE|DIR...",
		Short: "Print the current plan as the stdio checklist and a count per event type",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkLogPolicy(showPolicy); err != nil {
				return err
			}
			return runLogShow(cmd.Context(), cmd.OutOrStdout(), cmd.ErrOrStderr(), args, showPolicy)
		},
	}
	show.Flags().StringVar(&showPolicy, "policy", string(todolist.Single), "todo_write policy the plan is judged under: single, parallel or auto (as for log check)")
	cmd.AddCommand(show)
	return cmd
}

// logFile is one log to read, with what to call it.
type logFile struct {
	path  string
	label string // "" for a lone file; "main" or "child N" in a folder
}

var childLog = regexp.MustCompile(`^session\.([0-9]+)\.jsonl$`)

// logFiles expands the arguments: a file stands for itself, a folder for
// its session.jsonl and the children session.N.jsonl (in N order).
func logFiles(args []string) ([]logFile, error) {
	var out []logFile
	for _, a := range args {
		fi, err := os.Stat(a)
		if err != nil || !fi.IsDir() {
			out = append(out, logFile{path: a})
			continue
		}
		main := filepath.Join(a, "session.jsonl")
		if _, err := os.Stat(main); err != nil {
			return nil, fmt.Errorf("%s: a scenario folder holds session.jsonl: %w", a, err)
		}
		out = append(out, logFile{path: main, label: "main"})
		entries, err := os.ReadDir(a)
		if err != nil {
			return nil, err
		}
		type child struct {
			n    string // the number as written, of any length
			name string
		}
		var kids []child
		for _, e := range entries {
			if m := childLog.FindStringSubmatch(e.Name()); m != nil {
				kids = append(kids, child{m[1], e.Name()})
			}
		}
		// In number order, without converting: a number of any length
		// keeps its name ("child 99999999999999999999999").
		sort.Slice(kids, func(i, j int) bool {
			a, b := strings.TrimLeft(kids[i].n, "0"), strings.TrimLeft(kids[j].n, "0")
			if len(a) != len(b) {
				return len(a) < len(b)
			}
			if a != b {
				return a < b
			}
			return kids[i].n < kids[j].n
		})
		for _, k := range kids {
			out = append(out, logFile{path: filepath.Join(a, k.name), label: "child " + k.n})
		}
	}
	return out, nil
}

func (f logFile) describe(h session.Header) string {
	if f.label == "" {
		return ""
	}
	s := " [" + f.label
	if h.ParentSession != "" {
		s += " of session " + h.ParentSession
	}
	return s + "]"
}

// runLogCheck checks every log named by args; exit 1 when any fails
// (under strict, also when one gave a warning).
func runLogCheck(ctx context.Context, out, errw io.Writer, args []string, policy string, strict bool) error {
	files, err := logFiles(args)
	if err != nil {
		fmt.Fprintln(errw, "FAIL", err)
		return exitCode(1)
	}
	failed := false
	for _, f := range files {
		warns := &warningCounter{w: errw}
		p, err := logPolicy(ctx, warns, f.path, policy)
		if err != nil {
			fmt.Fprintln(errw, "FAIL", err)
			failed = true
			continue
		}
		var strictOn *warningCounter
		if strict {
			strictOn = warns
		}
		if !checkLog(ctx, out, warns, f, p, strictOn) {
			failed = true
		}
		if ctx.Err() != nil {
			break
		}
	}
	if failed {
		return exitCode(1)
	}
	return nil
}

// checkLog streams one log and checks every event as it is read (memory
// bounded by the longest line), and every todo/write against the contract.
// Unknown event types are warnings (once per type), never failures unless
// strict is set: then the warnings it counted fail the log.
func checkLog(ctx context.Context, out, errw io.Writer, lf logFile, p todolist.Policy, strict *warningCounter) bool {
	path := lf.path
	f, err := session.OpenForRead(ctx, path)
	if err != nil {
		fmt.Fprintln(errw, "FAIL", err)
		return false
	}
	defer f.Close()
	rd := f.Reader(session.ReadOptions{})
	warned := 0
	flushWarnings := func() {
		for _, w := range rd.Warnings()[warned:] {
			fmt.Fprintln(errw, "warning:", w)
		}
		warned = len(rd.Warnings())
	}
	fail := func(err error) bool {
		flushWarnings()
		var le *session.LineError
		if errors.As(err, &le) && le.ID != "" {
			fmt.Fprintf(errw, "FAIL %v [%s]\n", err, le.ID)
		} else {
			fmt.Fprintln(errw, "FAIL", err)
		}
		return false
	}
	sum, err := session.Check(ctx, rd, p, session.CheckHooks{
		Unknown: func(typ string, line int) {
			fmt.Fprintf(errw, "warning: %s:%d: unknown event type %q (kept, not checked; reported once per type)\n", path, line, typ)
		},
		Finding: func(e session.Event, line int, fd todolist.Finding) {
			fmt.Fprintf(errw, "FAIL %s:%d: todo/write seq %d: %s\n", path, line, e.Seq, fd)
		},
	})
	if err != nil {
		var ie *session.InvariantError
		if errors.As(err, &ie) {
			flushWarnings()
			fmt.Fprintf(errw, "FAIL %s: %v [%s]\n", path, err, ie.ID)
			return false
		}
		return fail(err)
	}
	flushWarnings()
	if sum.OpenTurn != 0 {
		fmt.Fprintf(errw, "warning: %s: log ends inside turn %d (step %d): the turn never ended\n", path, sum.OpenTurn, sum.OpenStep)
	}
	if sum.Findings > 0 {
		fmt.Fprintf(errw, "FAIL %s: %d todo_write contract finding(s) under the %s policy\n", path, sum.Findings, p)
		return false
	}
	if strict != nil && strict.n > 0 {
		fmt.Fprintf(errw, "FAIL %s: %d warning(s) (--strict)\n", path, strict.n)
		return false
	}
	h, n := sum.Header, sum.Events
	extra := ""
	if rd.Format() == session.FormatFixture {
		extra = " (" + session.FormatFixture + " format)"
	}
	fmt.Fprintf(out, "ok %s%s: session %s, %d events%s\n", path, lf.describe(h), h.ID, n, extra)
	return true
}

func runLogShow(ctx context.Context, out, errw io.Writer, args []string, policy string) error {
	files, err := logFiles(args)
	if err != nil {
		return err
	}
	for i, f := range files {
		if i > 0 {
			fmt.Fprintln(out)
		}
		p, err := logPolicy(ctx, errw, f.path, policy)
		if err != nil {
			return err
		}
		if err := showLog(ctx, out, errw, f, p); err != nil {
			return err
		}
	}
	return nil
}

// showLog streams one log: the last todo/write is the plan; each event type
// is counted (unknown ones too, marked as such).
func showLog(ctx context.Context, out, errw io.Writer, lf logFile, p todolist.Policy) error {
	f, err := session.OpenForRead(ctx, lf.path)
	if err != nil {
		return err
	}
	defer f.Close()
	rd := f.Reader(session.ReadOptions{})
	h, err := rd.Header(ctx)
	if err != nil {
		return err
	}
	counts := map[string]int{}
	n := 0
	var last json.RawMessage
	lastLine := 0
	for {
		e, err := rd.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		n++
		counts[e.Type]++
		if e.Type == session.TypeTodoWrite {
			last, lastLine = e.Data, rd.Line()
		}
	}
	for _, w := range rd.Warnings() {
		fmt.Fprintln(errw, "warning:", w)
	}
	fmt.Fprintf(out, "session %s%s (%d events)\n", h.ID, lf.describe(h), n)
	switch {
	case last == nil:
		fmt.Fprintln(out, "\n  [todos]\n    (no todo_write in this session)")
	default:
		var d session.TodoWrite
		findings := todolist.CheckWrite(last, p)
		if json.Unmarshal(last, &d) == nil && d.Todos != nil {
			fmt.Fprint(out, stdio.RenderTodos(d.Todos))
		} else {
			fmt.Fprintln(out, "\n  [todos]")
		}
		for _, fd := range findings {
			fmt.Fprintf(out, "    INVALID (%s policy) %s:%d: %s\n", p, lf.path, lastLine, fd)
		}
	}
	types := make([]string, 0, len(counts))
	for t := range counts {
		types = append(types, t)
	}
	sort.Strings(types)
	fmt.Fprintln(out)
	unknown := 0
	for _, t := range types {
		mark := ""
		if !session.IsKnownType(t) {
			mark = "  (not modelled, kept)"
			unknown += counts[t]
		}
		fmt.Fprintf(out, "%-18s %d%s\n", t, counts[t], mark)
	}
	if unknown > 0 {
		fmt.Fprintf(out, "%d events of types this tool does not model\n", unknown)
	}
	return nil
}

// warningCounter passes what is written to w through, counting the lines
// that start with "warning:" (log check --strict fails on them).
type warningCounter struct {
	w io.Writer
	n int
}

func (c *warningCounter) Write(b []byte) (int, error) {
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "warning:") {
			c.n++
		}
	}
	return c.w.Write(b)
}
