package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/internal/termtext"
)

// Report formats for the command line (--format): FormatText is the summary
// alone, FormatGitHub the summary and GitHub Actions annotations,
// FormatMarkdown the summary as Markdown (WriteMarkdown).
const (
	FormatText     = "text"
	FormatGitHub   = "github"
	FormatMarkdown = "markdown"
)

// Formats lists the report formats, the default first.
func Formats() []string { return []string{FormatText, FormatGitHub, FormatMarkdown} }

// ParseFormat checks a --format value ("" is FormatText); an unknown one
// is an error listing them, with the nearest suggested.
func ParseFormat(s string) (string, error) {
	if s == "" {
		return FormatText, nil
	}
	for _, f := range Formats() {
		if s == f {
			return s, nil
		}
	}
	return "", fmt.Errorf("conformance: unknown format %q%s", s, conformance.Suggest(s, Formats(), "formats"))
}

// githubCasesShown bounds the cases an annotation names, one line each.
const githubCasesShown = 5

// WriteGitHub writes the report as GitHub Actions workflow commands, one
// annotation per check worth one: ::error for a check that fails the run
// (a failed MUST, a failed SHOULD under Strict, a stale baseline entry),
// ::warning for a failed SHOULD that does not, ::notice for a failed INFO;
// and one ::error for a run that is INCOMPLETE or INTERRUPTED. The title
// is the check ID; the message says the level and what the check
// observes, then the failing cases with what was seen, then the quoted
// spec sentence. Values are escaped as GitHub's runner unescapes them
// (EscapeGitHubData, EscapeGitHubProperty).
func WriteGitHub(w io.Writer, r *conformance.Report) error {
	var cmds []string
	for _, c := range r.Checks {
		var kind string
		switch {
		case r.FailsRun(c):
			kind = "error"
		case c.Outcome == conformance.Flaky:
			kind = "warning"
		case c.Outcome != conformance.Fail:
			continue
		case c.Level == conformance.SHOULD:
			kind = "warning"
		default:
			kind = "notice"
		}
		var msg strings.Builder
		switch {
		case c.Stale:
			fmt.Fprintf(&msg, "%s %s: a baseline entry (%s) matches no failure: remove it from the baseline", c.Level, c.ID, c.Expected)
		case c.Outcome == conformance.Flaky:
			fmt.Fprintf(&msg, "%s %s is flaky (%s): %s\n%s", c.Level, c.ID, flakyWhy(c), c.Title, driver.OneLine(c.Reason, 600))
		default:
			fmt.Fprintf(&msg, "%s %s fails: %s", c.Level, c.ID, c.Title)
			if c.Level == conformance.SHOULD && !r.Required(c.Check) {
				msg.WriteString(" (a SHOULD check: it does not fail the run without --strict)")
			}
			n := 0
			for _, cv := range c.Cases {
				if cv.Outcome != conformance.Fail {
					continue
				}
				if n++; n <= githubCasesShown {
					fmt.Fprintf(&msg, "\ncase %s: %s%s", cv.Case, CutReason(cv.Reason, 300), cv.NotRunAgain())
				}
			}
			if n > githubCasesShown {
				fmt.Fprintf(&msg, "\n(and %d more cases)", n-githubCasesShown)
			}
			fmt.Fprintf(&msg, "\nspec: %q (%s)", c.Spec, c.Source)
		}
		cmds = append(cmds, fmt.Sprintf("::%s title=%s::%s\n", kind, EscapeGitHubProperty(c.ID), EscapeGitHubData(msg.String())))
	}
	for _, c := range r.Cases {
		if c.NotReached != "" {
			cmds = append(cmds, fmt.Sprintf("::warning title=%s::%s\n", EscapeGitHubProperty("case "+runLabel(c)+": step never reached"), EscapeGitHubData(CutReason(c.NotReached, 600))))
		}
	}
	switch r.Verdict {
	case conformance.VerdictIncomplete, conformance.VerdictInterrupted:
		cmds = append(cmds, fmt.Sprintf("::error title=%s::%s\n", EscapeGitHubProperty("conform "+r.Verdict), EscapeGitHubData(VerdictLine(r))))
	}
	if err := WriteGitHubCommands(w, cmds); err != nil {
		return fmt.Errorf("conformance: write GitHub annotations: %w", err)
	}
	return nil
}

// WriteGitHubCommands writes workflow command lines (each escaped with
// EscapeGitHubData and EscapeGitHubProperty, ending in a newline) to w:
// through w's WriteCommand when w is the command line's escaping writer
// (which defuses any other line that reads as a command), else as they
// are.
func WriteGitHubCommands(w io.Writer, cmds []string) error {
	cw, ok := w.(interface{ WriteCommand(string) error })
	if !ok {
		_, err := io.WriteString(w, strings.Join(cmds, ""))
		return err
	}
	for _, c := range cmds {
		if err := cw.WriteCommand(c); err != nil {
			return err
		}
	}
	return nil
}

// EscapeGitHubData escapes the message of a workflow command: % as %25,
// CR as %0D, LF as %0A, and what a terminal would act on (an escape
// sequence, a bidirectional override) shown visibly
// (termtext.GitHubData).
func EscapeGitHubData(s string) string {
	return termtext.GitHubData(s)
}

// EscapeGitHubProperty escapes a property value of a workflow command
// (title=...): as the message, and : as %3A and , as %2C.
func EscapeGitHubProperty(s string) string {
	return termtext.GitHubProperty(s)
}
