package cli

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/todoharness/todoharness/conformance/report"
	"github.com/todoharness/todoharness/internal/termtext"
)

// escapeStreams makes cmd's stdout and stderr termtext.Writers: what the
// agent under test said (its agentInfo, its error messages, its tool
// names, its stderr) reaches the terminal or the CI log as text, never as
// an escape sequence or a forged GitHub workflow command, whichever
// writer prints it. On a terminal the summary's colours and explore's
// progress line redrawn in place pass; in a GitHub Actions log (--format github, or
// GITHUB_ACTIONS=true) a line that would read as a workflow command is
// defused unless the command wrote it as one (report.WriteGitHub).
// Data written to stdout (--json -) goes to the writer underneath
// (termtext.Unwrap).
func escapeStreams(cmd *cobra.Command) {
	out, errw := cmd.OutOrStdout(), cmd.ErrOrStderr()
	if _, ok := out.(*termtext.Writer); ok {
		return
	}
	github := githubLog(cmd.Context())
	if f := cmd.Flags().Lookup("format"); f != nil && f.Value.String() == report.FormatGitHub {
		github = true
	}
	// On a terminal the program's own colours (only with NO_COLOR unset
	// does it paint) and a progress line redrawn in place pass.
	ow, ew := termtext.NewWriter(out, onTerminal(out)), termtext.NewWriter(errw, onTerminal(errw))
	ow.GitHub, ew.GitHub = github, github
	cmd.SetOut(ow)
	cmd.SetErr(ew)
}

// githubLog reports whether the output is a GitHub Actions log, whose
// runner reads workflow commands from every line of stdout and stderr.
func githubLog(ctx context.Context) bool {
	return environOf(ctx).getenv("GITHUB_ACTIONS") == "true"
}

// errorOut is where Run prints a command's error: stderr, escaped as
// escapeStreams escapes it (an error can quote the agent): the command's
// own stderr writer when it made one (cmd may be nil).
func errorOut(ctx context.Context, cmd *cobra.Command, stderr io.Writer) *termtext.Writer {
	if cmd != nil {
		if w, ok := cmd.ErrOrStderr().(*termtext.Writer); ok {
			return w
		}
	}
	w := termtext.NewWriter(stderr, false)
	w.GitHub = githubLog(ctx)
	return w
}

// flushStreams writes out what cmd's escaping writers hold (a character a
// last Write left incomplete); cmd may be nil.
func flushStreams(cmd *cobra.Command) {
	if cmd == nil {
		return
	}
	for _, w := range []io.Writer{cmd.OutOrStdout(), cmd.ErrOrStderr()} {
		if tw, ok := w.(*termtext.Writer); ok {
			_ = tw.Flush()
		}
	}
}

// onTerminal reports whether w writes to a terminal (through an escaping
// writer too).
func onTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && isTerminal(f.Fd())
}
