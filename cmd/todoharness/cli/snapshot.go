package cli

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/todoharness/todoharness/snapshot"
)

// newSnapshotCmd is `todoharness snapshot`: the original implementation's
// ACP snapshot scenarios, run against any agent.
func newSnapshotCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "snapshot", Short: "Run the original implementation's ACP snapshot scenarios against an agent"}
	o := &snapshotOptions{}
	var (
		update bool
		junit  string
	)
	run := &cobra.Command{
		Use:   "run DIR... [--preset NAME] [--agent 'CMD ARGS'] [flags]",
		Short: "Replay snapshot scenarios (input.json, session.jsonl, stdout.expected.jsonl) against an agent and diff its stdout",
		Long: `Run scenario folders in the original implementation's snapshot layout against
an ACP agent (a DIR that is not a scenario but holds scenario folders stands
for each of them). For each folder: rebuild the model's answers from session.jsonl
(and the subagents' session.N.jsonl beside it), serve them from the mock
model, start the agent in a fresh working directory, drive input.json's
steps, normalise the agent's stdout as the original's snapshot kit does
(JSON-RPC ids renumbered in first-seen order, session ids and UUIDs to
{{sessionId}}, the cwd and its aliases to {{cwd}}) and compare it with
stdout.expected.jsonl (or stdout.golden.jsonl), key order aside.

The agent is given as in conform: without --agent the built-in reference
agent; --preset, --env, --file and their templates ({{.BaseURL}}, {{.Cwd}},
...) work the same way.

Each scenario passes, fails (with a unified diff of the normalised lines,
keys sorted) or could not run (with why). --update writes the agent's
normalised stdout as the expected file instead. docs/snapshots.md lists the
differences to expect between the original's stdout and the reference
agent's.

Exit status: 0 when every scenario passes (or was updated), 1 otherwise.`,
		Example: `  todoharness snapshot run fixtures/interop/deepseek-harness/todo-plan
  todoharness snapshot run snapshots/* --agent 'my-agent acp' --env OPENAI_BASE_URL={{.BaseURL}} --junit snap.xml
  todoharness snapshot run snapshots/new-case --update`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runSnapshot(cmd, o, update, junit, args)
		},
	}
	f := run.Flags()
	o.target.register(f, targetHelp{fileWhere: "the working directory, or the throw-away home", presetNote: " (as in conform)", name: true})
	f.StringVar(&o.modelName, "model", "mock", "model name offered to templates as {{.Model}}")
	o.run.registerTimeouts(f, "scenario")
	f.BoolVar(&o.keep, "keep", false, "keep the scenarios' working directories")
	f.BoolVar(&update, "update", false, "write the agent's normalised stdout as the expected file instead of comparing")
	f.StringVar(&junit, "junit", "", "write the verdicts as JUnit XML to FILE")
	cmd.AddCommand(run)
	return cmd
}

// snapshotOptions are the flags of `todoharness snapshot run` but
// --update and --junit.
type snapshotOptions struct {
	target    targetFlags
	modelName string
	run       runFlags
	keep      bool
}

func runSnapshot(cmd *cobra.Command, o *snapshotOptions, update bool, junit string, dirs []string) error {
	preset, err := o.target.presetOf()
	if err != nil {
		return err
	}
	target, err := buildTarget(o.target, preset)
	if err != nil {
		return err
	}
	rep := &snapshot.Report{Agent: target.String()}
	dirs = snapshot.Folders(dirs)
	for i, dir := range dirs {
		if err := cmd.Context().Err(); err != nil {
			for _, d := range dirs[i:] {
				rep.Results = append(rep.Results, &snapshot.Result{Name: filepath.Base(filepath.Clean(d)), Dir: d,
					Status: snapshot.Error, Reason: "not run: the run was interrupted (" + err.Error() + ")"})
			}
			break
		}
		res := snapshot.Run(cmd.Context(), dir, snapshot.Options{
			Agent: target, Timeout: o.run.caseTimeout(preset), Grace: o.run.grace, Model: o.modelName,
			Update: update, KeepDirs: o.keep,
		})
		rep.Results = append(rep.Results, res)
		fmt.Fprintf(cmd.ErrOrStderr(), "%-7s %s (%.2fs)\n", res.Status, res.Name, res.Duration.Round(time.Millisecond).Seconds())
	}
	if err := writeReportFile(cmd.Context(), junit, rep.WriteJUnit); err != nil {
		return err
	}
	if err := rep.WriteText(cmd.OutOrStdout()); err != nil {
		return err
	}
	if !rep.OK() {
		return exitCode(1)
	}
	return nil
}
