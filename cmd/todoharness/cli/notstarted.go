package cli

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/report"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/internal/termtext"
)

// stderrShown bounds the lines of a failed agent's stderr printed when it
// did not start; the whole of it is saved to a file.
const stderrShown = 20

// notStarted reports a run whose agent never got going (it could not be
// started, or exited before answering initialize) as the error it is:
// one line saying so, what its stderr says went wrong (without the stack
// frames; all of it saved to a file, named), and exit status 2, the run
// could not start. No table of checks: none of them was judged on the
// agent. The report files are written already, saying FAIL (RUN-1).
func notStarted(out io.Writer, o *conformOptions, rep *conformance.Report, cr *conformance.CaseResult) error {
	ev := cr.Evidence()
	head := fmt.Sprintf("conform: the agent did not start: %s (agent: %s)", termtext.Visible(ev.NotStarted), termtext.Visible(rep.Agent))
	var b strings.Builder
	b.WriteString(head)
	stderr := ""
	if len(ev.Procs) > 0 {
		stderr = ev.Procs[0].Stderr
	}
	if gist := driver.StderrGist(stderr, stderrShown); len(gist) > 0 {
		total := len(strings.Split(strings.TrimRight(stderr, "\n"), "\n"))
		where, err := saveStderr(cr, stderr)
		if err != nil {
			where = fmt.Sprintf("not saved: %v", err)
		}
		what := "its stderr"
		if len(gist) < total {
			what = fmt.Sprintf("its stderr, the lines that say what went wrong (%d of %d)", len(gist), total)
		}
		fmt.Fprintf(&b, "\n  %s; all of it: %s", what, where)
		for _, l := range gist {
			fmt.Fprintf(&b, "\n    %s", termtext.Visible(l))
		}
	} else if len(ev.Procs) > 0 {
		b.WriteString("\n  its stderr was empty")
	}
	if o.format == report.FormatGitHub {
		cmd := "::error title=" + report.EscapeGitHubProperty("conform did not start") + "::" + report.EscapeGitHubData(head) + "\n"
		if err := report.WriteGitHubCommands(out, []string{cmd}); err != nil {
			return fmt.Errorf("conform: %w", err)
		}
	}
	return errors.New(b.String())
}

// saveStderr returns where the agent's whole stderr is: the case's
// transcript folder under --out holds it (stderr-1.txt), else it is
// written to a new file in the temporary folder.
func saveStderr(cr *conformance.CaseResult, stderr string) (string, error) {
	if cr.Transcript != "" {
		p := filepath.Join(cr.Transcript, "stderr-1.txt")
		if _, err := os.Stat(p); err == nil {
			return p, nil
		}
	}
	f, err := os.CreateTemp("", "todoharness-agent-stderr-*.txt")
	if err != nil {
		return "", err
	}
	if _, err := io.WriteString(f, stderr); err != nil {
		_ = f.Close()
		return "", err
	}
	return f.Name(), f.Close()
}
