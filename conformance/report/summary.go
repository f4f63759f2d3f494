package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/internal/termtext"
)

// WriteSummary writes r's summary table and its verdict. The checks no
// selected case feeds share one line after the table. With color set, the
// outcomes and the verdict are in colour (the command line sets it on a
// terminal, unless NO_COLOR is set).
func WriteSummary(w io.Writer, r *conformance.Report, color bool) error {
	paint := painter(color)
	if r.Note != "" {
		fmt.Fprintf(w, "NOTE: %s\n\n", termtext.Visible(r.Note))
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// The header is painted too (in the terminal's own colour): every
	// cell of the column then carries the same bytes of codes.
	fmt.Fprintf(tw, "ID\tLEVEL\t%s\tREASON\n", paint("", "OUTCOME"))
	var unfed []string
	for _, c := range r.Checks {
		if c.Outcome == conformance.NotRun && c.Reason == conformance.NoCaseFeeds && !c.Stale {
			unfed = append(unfed, c.ID)
			continue
		}
		outcome := strings.ToUpper(string(c.Outcome))
		if c.Stale {
			outcome = "STALE"
		}
		reason := c.Reason
		switch {
		case c.Stale:
			reason = "a baseline entry (" + c.Expected + ") matches no failure: remove it from the baseline"
		case c.Outcome == conformance.XFail:
			reason = "expected: " + c.Expected + " — " + reason
		case c.Outcome == conformance.Pass:
			reason = r.PassSeen(c)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.ID, c.Level, paint(OutcomeClass(c), outcome), termtext.Visible(CutReason(reason, 140)))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("conformance: write summary: %w", err)
	}
	if len(unfed) > 0 {
		fmt.Fprintf(w, "NOT RUN (no selected case feeds them): %s\n", strings.Join(unfed, ", "))
	}
	writeFailures(w, r)
	writeNotReached(w, r)
	counts := map[conformance.Outcome]int{}
	for _, c := range r.Checks {
		counts[c.Outcome]++
	}
	// What the agent says it is, like every reason quoting it, is shown,
	// never acted on (termtext.Visible): an escape sequence, a line break
	// that would start a forged workflow command.
	fmt.Fprintf(w, "\nagent: %s\n", termtext.Visible(r.Agent))
	if r.AgentInfo != nil {
		fmt.Fprintf(w, "agent info: %s (its initialize answer)\n", termtext.Visible(r.AgentInfo.String()))
	}
	fmt.Fprintf(w, "dialect: %s (%s)\n", r.Dialect, r.DialectSource)
	fmt.Fprintf(w, "ACP protocol version: %s\n", r.Protocol)
	if r.Policy != "" {
		fmt.Fprintf(w, "policy: %s (%s)\n", r.Policy, r.PolicySource)
	}
	if len(r.Wires) > 0 {
		fmt.Fprintf(w, "model API: %s\n", strings.Join(r.Wires, ", "))
	}
	fmt.Fprintf(w, "pool: %s\n", PoolLine(r))
	if r.CPUMs > 0 || r.Pool == conformance.PoolOn {
		fmt.Fprintf(w, "cpu: %s\n", CPULine(r))
	}
	if r.Repeat > 1 {
		fmt.Fprintf(w, "runs: every case %d times; %d check(s) flaky (the outcome differed between runs)\n", r.Repeat, counts[conformance.Flaky])
	}
	fmt.Fprintf(w, "%d checks: %d pass, %d fail, %d xfail, %d not run, %d n/a; %s in %.2fs\n",
		len(r.Checks), counts[conformance.Pass], counts[conformance.Fail], counts[conformance.XFail], counts[conformance.NotRun], counts[conformance.NA], caseCount(r), r.Duration.Seconds())
	if r.Strict {
		fmt.Fprintln(w, "strict: a failed SHOULD check fails the run")
	}
	_, err := fmt.Fprintln(w, paint(strings.ToLower(r.Verdict), termtext.Visible(VerdictLine(r))))
	return err
}

// VerdictLine is the last line of r's summary: the verdict and why.
func VerdictLine(r *conformance.Report) string {
	switch r.Verdict {
	case conformance.VerdictPass:
		if r.Strict {
			return "PASS: every MUST and SHOULD check passes"
		}
		return "PASS: every MUST check passes"
	case conformance.VerdictInterrupted:
		return "INTERRUPTED: " + r.Interrupted + "; the run stopped before it finished, nothing is blamed on the agent"
	case conformance.VerdictIncomplete:
		what := "MUST"
		if r.Strict {
			what = "MUST and SHOULD"
		}
		return "INCOMPLETE: " + what + " checks not judged: " + notJudgedWhy(r)
	}
	var why, must, should []string
	for _, id := range r.Failing {
		if c, _ := r.Check(id); c.Level == conformance.SHOULD {
			should = append(should, id)
		} else {
			must = append(must, id)
		}
	}
	if len(must) > 0 {
		why = append(why, "MUST failed: "+strings.Join(must, ", "))
	}
	if len(should) > 0 {
		why = append(why, "SHOULD failed (--strict): "+strings.Join(should, ", "))
	}
	var between, pooled []string
	for _, id := range r.Flaky {
		if c, _ := r.Check(id); len(c.Runs) > 0 {
			between = append(between, id)
		} else {
			pooled = append(pooled, id)
		}
	}
	if len(between) > 0 {
		why = append(why, "flaky (the outcome differed between runs): "+strings.Join(between, ", "))
	}
	if len(pooled) > 0 {
		why = append(why, "flaky (failed as a session of a pooled process, passed alone in a fresh one): "+strings.Join(pooled, ", "))
	}
	if len(r.Stale) > 0 {
		why = append(why, "stale expected failures: "+strings.Join(r.Stale, ", "))
	}
	return "FAIL: " + strings.Join(why, "; ")
}

// notJudgedWhy lists the MUST checks not judged, grouped by why.
func notJudgedWhy(r *conformance.Report) string {
	var order []string
	byWhy := map[string][]string{}
	for _, id := range r.NotJudged {
		c, _ := r.Check(id)
		why := c.Reason
		if why == conformance.NoCaseFeeds {
			why = "no selected case feeds them"
		}
		if _, ok := byWhy[why]; !ok {
			order = append(order, why)
		}
		byWhy[why] = append(byWhy[why], id)
	}
	var parts []string
	for _, why := range order {
		parts = append(parts, strings.Join(byWhy[why], ", ")+" ("+driver.OneLine(why, 120)+")")
	}
	return strings.Join(parts, "; ")
}

// flakyWhy says why check c is flaky: its outcome differed between the
// runs of --repeat (c.Runs), or, in one pooled run, a case failed it as a
// session of a pooled process and passed it alone in a fresh one.
func flakyWhy(c conformance.CheckResult) string {
	if len(c.Runs) > 0 {
		return "its outcome differed between runs"
	}
	return "it failed as a session of a pooled process and passed alone in a fresh one"
}

// flakyLine is one line of why a check is flaky: a run of --repeat
// ("run 2", "PASS" or the outcome and reason), or a case of a pooled run.
type flakyLine struct{ where, reason string }

// flakyLines are the lines of why flaky check c is flaky (flakyWhy): each
// run's outcome, or each case that failed it pooled and passed alone,
// with its reason (the pooled failure's).
func flakyLines(c conformance.CheckResult) []flakyLine {
	var out []flakyLine
	for _, ro := range c.Runs {
		out = append(out, flakyLine{fmt.Sprintf("run %d", ro.Run), strings.TrimSpace(string(ro.Outcome) + " " + ro.Reason)})
	}
	if len(out) > 0 {
		return out
	}
	for _, cv := range c.Cases {
		if cv.Outcome == conformance.Flaky {
			out = append(out, flakyLine{"case " + cv.Case, cv.Reason})
		}
	}
	return out
}

// writeFailures writes the failures that share a root cause, then each
// failure with the clause it tests, so the table reads as a verdict clause
// by clause without opening the JSON report.
func writeFailures(w io.Writer, r *conformance.Report) {
	if rcs := RootCauses(r); len(rcs) > 0 {
		fmt.Fprintln(w, "\nFailures that share a root cause (the same wire line, see the transcript's FAILED marks; or the same scripted call):")
		for _, rc := range rcs {
			where := make([]string, len(rc.Where))
			for i, a := range rc.Where {
				where[i] = a.String()
			}
			if len(where) > 4 {
				where = append(where[:4], fmt.Sprintf("… %d more", len(where)-4))
			}
			fmt.Fprintf(w, "  %s: %s at %s\n", strings.Join(rc.Checks, ", "), termtext.Visible(rc.What), termtext.Visible(strings.Join(where, ", ")))
		}
	}
	first := true
	for _, c := range r.Checks {
		if c.Outcome != conformance.Fail && c.Outcome != conformance.XFail && c.Outcome != conformance.Flaky && !c.Stale {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nWhat the failing checks test:")
			first = false
		}
		fmt.Fprintf(w, "  %s (%s): %q\n      %s\n", c.ID, c.Level, driver.OneLine(c.Spec, 300), c.Source)
		if c.Outcome == conformance.Flaky {
			for _, f := range flakyLines(c) {
				fmt.Fprintf(w, "      %s: %s\n", f.where, termtext.Visible(CutReason(f.reason, failureReasonShown)))
			}
			continue
		}
		n := 0
		for _, cv := range c.Cases {
			if cv.Outcome != conformance.Fail && cv.Outcome != conformance.XFail {
				continue
			}
			if n++; n > failureCasesShown {
				continue
			}
			switch cv.Outcome {
			case conformance.Fail:
				fmt.Fprintf(w, "      case %s: %s%s%s\n", cv.Case, termtext.Visible(CutReason(cv.Reason, failureReasonShown)), cv.More(), cv.NotRunAgain())
			case conformance.XFail:
				fmt.Fprintf(w, "      case %s (expected): %s\n", cv.Case, termtext.Visible(CutReason(cv.Reason, failureReasonShown)))
			}
		}
		if n > failureCasesShown {
			fmt.Fprintf(w, "      … %d more cases (every case and its whole reason: the JSON report, --json; the transcripts, --out)\n", n-failureCasesShown)
		}
	}
}

// Bounds of a failing check's lines in the summary: the cases shown, and
// the bytes of each reason (its fix hint kept, CutReason). The whole
// reason of every case is in the JSON report and the case's transcript.
const (
	failureCasesShown  = 10
	failureReasonShown = 500
)

// maxHint bounds the tail of a reason kept whole as its fix hint;
// minSeen is the least of the observation before it that is kept.
const (
	maxHint = 240
	minSeen = 100
)

// writeNotReached lists the cases whose run never reached the step they
// exist for (CaseResult.NotReached).
func writeNotReached(w io.Writer, r *conformance.Report) {
	first := true
	for _, c := range r.Cases {
		if c.NotReached == "" {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nCases whose run never reached the step they exist for:")
			first = false
		}
		fmt.Fprintf(w, "  case %s: %s\n", runLabel(c), driver.OneLine(c.NotReached, 300))
	}
}

// runLabel names a case run: "plan-basic", "plan-basic (run 2)".
func runLabel(c *conformance.CaseResult) string {
	if c.Run > 0 {
		return fmt.Sprintf("%s (run %d)", c.ID, c.Run)
	}
	return c.ID
}

// CutReason is reason on one line in about n bytes, its fix hint never cut:
// a reason is what was seen, then after "; " what to do or the rule that
// decided. The part from the first "; " outside a quoted string is kept
// whole (up to maxHint bytes), and the observation before it is shortened
// instead. A reason with no such tail is cut at n.
func CutReason(reason string, n int) string {
	s := strings.Join(strings.Fields(reason), " ")
	if len(s) <= n {
		return s
	}
	head, hint, ok := splitHint(s)
	if !ok || len(hint) > maxHint {
		return driver.Truncate(s, n)
	}
	// The observation keeps at least minSeen bytes: what was seen is the
	// row's first news, the hint its second.
	room := max(n-len(hint), minSeen)
	return driver.Truncate(head, room) + hint
}

// splitHint splits s at its first "; " outside a double-quoted string (Go
// %q quoting: \" inside does not end it); hint starts with the "; ".
func splitHint(s string) (head, hint string, ok bool) {
	in, esc, at := false, false, -1
	for i := 0; i < len(s) && at < 0; i++ {
		c := s[i]
		switch {
		case esc:
			esc = false
		case in && c == '\\':
			esc = true
		case c == '"':
			in = !in
		case !in && c == ';' && i+1 < len(s) && s[i+1] == ' ':
			at = i
		}
	}
	if at < 0 {
		return s, "", false
	}
	return s[:at], s[at:], true
}

// OutcomeClass is the class of c's outcome: its outcome, or "stale",
// "notrun", "na" (the summary's colour, the HTML report's style).
func OutcomeClass(c conformance.CheckResult) string {
	switch {
	case c.Stale:
		return "stale"
	case c.Outcome == conformance.NotRun:
		return "notrun"
	case c.Outcome == conformance.NA:
		return "na"
	}
	return string(c.Outcome)
}

// ANSI colours of the summary, by outcome class (OutcomeClass) or verdict.
// Every code is 5 bytes, so a column of painted cells stays aligned in a
// tabwriter.
func colourOf(class string) string {
	switch class {
	case "pass":
		return "\x1b[32m" // green
	case "fail", "stale", "interrupted":
		return "\x1b[31m" // red
	case "xfail", "flaky", "incomplete":
		return "\x1b[33m" // yellow
	case "notrun", "na":
		return "\x1b[90m" // grey
	}
	return "\x1b[39m" // the terminal's own
}

// painter returns a function that wraps text in the colour of its class,
// or leaves it as it is when color is off.
func painter(color bool) func(class, text string) string {
	if !color {
		return func(_, text string) string { return text }
	}
	return func(class, text string) string { return colourOf(class) + text + "\x1b[0m" }
}

// caseCount says how many cases the report judged: under Repeat the
// report holds one entry per run of a case, so it says "4 case runs", as
// the run's header does, not "4 cases" (the "runs:" line above it says
// how many times each case ran).
// PoolLine says which mode ran (Report.Pool): with pooled processes, how
// many served how many cases and how many cases ran again alone; without,
// a process per case. The text, Markdown and HTML reports all say it.
func PoolLine(r *conformance.Report) string {
	if r.Pool == conformance.PoolOn {
		return "on: the cases that need no fresh process ran as sessions of " + pooledProcs(r)
	}
	if r.Repeat > 1 {
		return "off: a process per run of a case (every run of --repeat has a process of its own)"
	}
	return "off: a process per case"
}

// CPULine says what the run cost in CPU a case, where it was read, and the
// floor next to it: what one session cost a warm pooled process.
func CPULine(r *conformance.Report) string {
	s := ""
	if r.CPUMs > 0 {
		s = fmt.Sprintf("%s a case (the run's %s: this process and every agent process it started); ",
			conformance.RoundCPU(time.Duration(r.CPUPerCaseMs*float64(time.Millisecond))), conformance.RoundCPU(time.Duration(r.CPUMs)*time.Millisecond))
	}
	return s + "floor: " + r.Floor.Describe("case")
}

// pooledProcs says how many pooled agent processes served how many cases.
func pooledProcs(r *conformance.Report) string {
	s := fmt.Sprintf("%d pooled process(es) (%d case(s)); %d case(s) that failed there ran again alone in a fresh process, and are reported from that run", r.PoolProcesses, r.PooledCases, r.PoolRanAlone)
	switch {
	case r.RerunPooled == conformance.RerunKnown || len(r.PoolKnown) > 0:
		s += fmt.Sprintf("; %d failed there only with failures that cases of the run had already confirmed alone in a fresh process, and were not run again (--rerun-pooled %s: each such failure names the case that confirmed it)%s",
			len(r.PoolKnown), conformance.RerunKnown, someIDs(r.PoolKnown))
	case r.RerunPooled == conformance.RerunEvery:
		s += fmt.Sprintf(" (--rerun-pooled %s: every case that failed there)", conformance.RerunEvery)
	}
	if n := len(r.PoolFirstFailed); n > 0 {
		s += fmt.Sprintf("; %d failed as the first and only session of a fresh pooled process, which served other cases only after: they ran alone in a fresh process already, and are reported from it with no re-run%s", n, someIDs(r.PoolFirstFailed))
	}
	return s
}

// someIDs names the first poolIDsShown of ids, in parentheses ("" for
// none).
func someIDs(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	shown, more := ids[:min(len(ids), poolIDsShown)], ""
	if len(ids) > len(shown) {
		more = fmt.Sprintf(" … %d more", len(ids)-len(shown))
	}
	return " (" + strings.Join(shown, ", ") + more + ")"
}

// poolIDsShown bounds the cases the pool line names.
const poolIDsShown = 5

func caseCount(r *conformance.Report) string {
	if r.Repeat > 1 {
		return fmt.Sprintf("%d case runs", len(r.Cases))
	}
	return fmt.Sprintf("%d cases", len(r.Cases))
}
