package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/internal/termtext"
)

// Bounds of the Markdown summary. MarkdownMaxBytes keeps it under what a
// GitHub pull-request comment takes (65,536 characters) and far under a
// job summary's 1 MiB; the rows of failing checks stop before it, saying
// how many were left out. Each failing check names at most
// markdownCasesShown cases, each reason cut to markdownReasonShown bytes
// (its fix hint kept, CutReason) before it is escaped.
const (
	MarkdownMaxBytes    = 60000
	markdownCasesShown  = 5
	markdownReasonShown = 300
	// markdownTail is kept free for what follows the rows: the line
	// saying what was left out, the expected failures, the footer.
	markdownTail = 4096
)

// WriteMarkdown writes r's summary as GitHub-flavoured Markdown, for a
// GitHub Actions job summary ($GITHUB_STEP_SUMMARY) or a pull-request
// comment (conform --format markdown, --summary-md): the verdict and why,
// the counts, the agent, then one table row per failing check (a failed
// or flaky check, a stale baseline entry) with its level, whether it
// fails the run, and its failing cases with their reasons; the expected
// failures by ID; the versions that judged the run. At most
// MarkdownMaxBytes bytes: rows that would not fit are counted, not shown.
//
// Every value that is not the report's own words is escaped for where it
// goes (mdText): it reads as text, on one line, its controls shown
// visibly (termtext.MarkdownCell); what the agent sent is set in <code>,
// where GitHub links no @mention.
func WriteMarkdown(w io.Writer, r *conformance.Report) error {
	var b strings.Builder
	fmt.Fprintf(&b, "### todoharness conform: %s %s\n\n", verdictMark(r.Verdict), mdText(r.Verdict))
	fmt.Fprintf(&b, "**%s**\n\n", mdText(VerdictLine(r)))
	if r.Note != "" {
		fmt.Fprintf(&b, "**Note:** %s\n\n", mdCode(CutReason(r.Note, 1000)))
	}
	counts := map[conformance.Outcome]int{}
	stale := 0
	for _, c := range r.Checks {
		counts[c.Outcome]++
		if c.Stale {
			stale++
		}
	}
	b.WriteString("| checks | pass | fail | xfail | flaky | stale | not run | n/a | cases | time |\n")
	b.WriteString("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	fmt.Fprintf(&b, "| %d | %d | %d | %d | %d | %d | %d | %d | %d | %.1f s |\n\n",
		len(r.Checks), counts[conformance.Pass], counts[conformance.Fail], counts[conformance.XFail], counts[conformance.Flaky], stale,
		counts[conformance.NotRun], counts[conformance.NA], len(r.Cases), r.Duration.Seconds())
	fmt.Fprintf(&b, "Agent: %s", mdCode(CutReason(r.Agent, 300)))
	if r.AgentInfo != nil {
		fmt.Fprintf(&b, " (its initialize answer: %s)", mdCode(CutReason(r.AgentInfo.String(), 200)))
	}
	fmt.Fprintf(&b, "; dialect %s; pool %s; ACP protocol version %s", mdText(r.Dialect), mdText(PoolLine(r)), mdText(r.Protocol.String()))
	if r.Strict {
		b.WriteString("; `--strict`: a failed SHOULD check fails the run")
	}
	b.WriteString("\n\n")

	var failing []conformance.CheckResult
	var xfail []string
	for _, c := range r.Checks {
		switch {
		case c.Stale || c.Outcome == conformance.Fail || c.Outcome == conformance.Flaky:
			failing = append(failing, c)
		case c.Outcome == conformance.XFail:
			xfail = append(xfail, mdText(c.ID))
		}
	}
	if len(failing) > 0 {
		fmt.Fprintf(&b, "#### Failing checks (%d)\n\n", len(failing))
		b.WriteString("| check | level | outcome | fails the run | cases and reasons |\n|---|---|---|---|---|\n")
		for i, c := range failing {
			row := markdownRow(r, c)
			if b.Len()+len(row) > MarkdownMaxBytes-markdownTail {
				fmt.Fprintf(&b, "\n%d more failing checks not shown here (the summary stops at %d bytes): %s\n", len(failing)-i, MarkdownMaxBytes, markdownIDs(failing[i:]))
				break
			}
			b.WriteString(row)
		}
		b.WriteString("\n")
	}
	if len(xfail) > 0 {
		fmt.Fprintf(&b, "Expected failures (in the baseline, they do not fail the run): %s\n\n", cutList(xfail, 1500))
	}
	fmt.Fprintf(&b, "<sub>todoharness %s, catalogue version %d. Every case and its whole reason: the HTML and JSON reports and the transcripts.</sub>\n",
		mdText(r.ToolVersion), r.CatalogueVersion)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("conformance: write Markdown summary: %w", err)
	}
	return nil
}

// markdownRow is the table row of a failing check c.
func markdownRow(r *conformance.Report, c conformance.CheckResult) string {
	outcome := strings.ToUpper(string(c.Outcome))
	if c.Stale {
		outcome = "STALE"
	}
	runs := "no"
	if r.FailsRun(c) {
		runs = "**yes**"
	}
	var why []string
	switch {
	case c.Stale:
		why = append(why, "a baseline entry ("+mdCode(CutReason(c.Expected, markdownReasonShown))+") matches no failure: remove it from the baseline")
	case c.Outcome == conformance.Flaky:
		for _, f := range flakyLines(c) {
			why = append(why, mdText(f.where)+": "+mdCode(CutReason(f.reason, markdownReasonShown)))
		}
	default:
		n := 0
		for _, cv := range c.Cases {
			if cv.Outcome != conformance.Fail {
				continue
			}
			if n++; n <= markdownCasesShown {
				why = append(why, "case "+mdText(cv.Case)+": "+mdCode(CutReason(cv.Reason, markdownReasonShown))+mdText(cv.NotRunAgain()))
			}
		}
		if n > markdownCasesShown {
			why = append(why, fmt.Sprintf("… and %d more cases", n-markdownCasesShown))
		}
		if n == 0 && c.Reason != "" {
			why = append(why, mdCode(CutReason(c.Reason, markdownReasonShown)))
		}
	}
	why = append(why, mdText(c.Title))
	return fmt.Sprintf("| %s | %s | %s | %s | %s |\n", mdText(c.ID), mdText(string(c.Level)), outcome, runs, strings.Join(why, "<br>"))
}

// markdownIDs lists the IDs of checks, escaped, in at most about 2,000
// bytes.
func markdownIDs(cs []conformance.CheckResult) string {
	ids := make([]string, len(cs))
	for i, c := range cs {
		ids[i] = mdText(c.ID)
	}
	return cutList(ids, 2000)
}

// cutList joins items with ", " in at most about n bytes, saying how many
// it left out.
func cutList(items []string, n int) string {
	var b strings.Builder
	for i, it := range items {
		if i > 0 && b.Len()+len(it) > n {
			fmt.Fprintf(&b, " and %d more", len(items)-i)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(it)
	}
	return b.String()
}

// mdText is s as Markdown text inside a line or a table cell: one line,
// shown as it is (termtext.MarkdownCell).
func mdText(s string) string {
	return termtext.MarkdownCell(s)
}

// mdCode is text the agent sent (or that quotes it): escaped as mdText,
// inside <code>, which sets it apart as quoted and where GitHub turns no
// @name into a mention that notifies someone. "" is shown as "(none)".
func mdCode(s string) string {
	if s == "" {
		return "(none)"
	}
	return "<code>" + mdText(s) + "</code>"
}

// verdictMark is the sign before the verdict in the heading.
func verdictMark(v string) string {
	switch v {
	case conformance.VerdictPass:
		return "✅"
	case conformance.VerdictFail:
		return "❌"
	}
	return "⚠️"
}
