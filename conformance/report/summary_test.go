package report

import (
	"bytes"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/todoharness/todoharness/conformance"
)

func TestCutReason(t *testing.T) {
	long := strings.Repeat("x", 200)
	for _, tc := range []struct {
		name, in string
		n        int
		want     string
	}{
		{"short", "a  b\nc", 20, "a b c"},
		{"no hint", long, 10, "xxxxxxxxxx…"},
		{"hint kept", long + "; do this", 120, strings.Repeat("x", 120-len("; do this")) + "…; do this"},
		{"the observation keeps 100 bytes", long + "; do this", 20, strings.Repeat("x", 100) + "…; do this"},
		{"a quoted semicolon is no hint", `"` + long + `; not a hint"`, 10, `"xxxxxxxxx…`},
		{"from the first \"; \" outside quotes", `"a; b" ` + long + "; first; second", 130, `"a; b" ` + strings.Repeat("x", 130-len(`"a; b" `)-len("; first; second")) + "…; first; second"},
		{"a hint too long is cut", "x; " + long + long, 120, "x; " + strings.Repeat("x", 117) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CutReason(tc.in, tc.n); got != tc.want {
				t.Errorf("CutReason(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
		})
	}
}

func TestContainsWord(t *testing.T) {
	for _, tc := range []struct {
		s, w string
		want bool
	}{
		{"after call_1 no plan", "call_1", true},
		{"call_1", "call_1", true},
		{"after call_10 no plan", "call_1", false},
		{"xcall_1", "call_1", false},
		{"call_10 and (call_1)", "call_1", true},
	} {
		if got := containsWord(tc.s, tc.w); got != tc.want {
			t.Errorf("containsWord(%q, %q) = %v", tc.s, tc.w, got)
		}
	}
}

// Under Repeat the summary counts runs of cases, not cases: one case
// and the probe run twice are "4 case runs", not "4 cases".
func TestSummaryCountsCaseRunsUnderRepeat(t *testing.T) {
	t.Parallel()
	runs := func(repeat int) []*conformance.Evidence {
		var out []*conformance.Evidence
		for run := 1; run <= repeat; run++ {
			for _, ev := range savedRun(t, "fake-ok") {
				e := *ev
				if repeat > 1 {
					e.Repeat = run
				}
				out = append(out, &e)
			}
		}
		return out
	}
	cases := len(savedRun(t, "fake-ok"))
	for _, tc := range []struct {
		repeat int
		want   string
	}{
		{1, fmt.Sprintf("; %d cases in ", cases)},
		{2, fmt.Sprintf("; %d case runs in ", 2*cases)},
	} {
		rep, err := conformance.Judge(runs(tc.repeat), conformance.JudgeConfig{Checks: capturedChecks(t), Validator: sharedValidator(t)})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := WriteSummary(&b, rep, false); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("repeat %d: the summary does not say %q:\n%s", tc.repeat, tc.want, b.String())
		}
	}
}

// Every report cuts an agent's text between UTF-8 characters: a reason of
// 2-byte characters, cut by the summary table, the GitHub annotations and
// the HTML report's marks, stays valid UTF-8.
func TestReportsCutBetweenCharacters(t *testing.T) {
	t.Parallel()
	rep := judgeSaved(t, "fake-no-plan", false, nil)
	for i, c := range rep.Checks {
		for k, cv := range c.Cases {
			if cv.Outcome == conformance.Fail {
				rep.Checks[i].Cases[k].Reason = "x" + strings.Repeat("é", 400) + " call_1; " + strings.Repeat("ü", 30)
			}
		}
		if c.Outcome == conformance.Fail {
			rep.Checks[i].Reason = "x" + strings.Repeat("é", 400)
		}
	}
	for name, write := range map[string]func(*strings.Builder) error{
		"summary": func(b *strings.Builder) error { return WriteSummary(b, rep, false) },
		"github":  func(b *strings.Builder) error { return WriteGitHub(b, rep) },
		"html":    func(b *strings.Builder) error { return WriteHTML(b, rep) },
	} {
		var b strings.Builder
		if err := write(&b); err != nil {
			t.Fatal(err)
		}
		if s := b.String(); !utf8.ValidString(s) {
			i := 0
			for i < len(s) {
				r, n := utf8.DecodeRuneInString(s[i:])
				if r == utf8.RuneError && n == 1 {
					break
				}
				i += n
			}
			t.Errorf("%s: not valid UTF-8 at byte %d: %q", name, i, s[max(0, i-40):min(len(s), i+10)])
		}
	}
}

// A long reason (a 120-item list, as a check wrote one before the judge
// shortened its lists) is short in every report: each summary line, the
// HTML checks table; the whole reason stays one click away (the check's
// section of the HTML report) and in the JSON report.
func TestLongReasonsShortInReports(t *testing.T) {
	t.Parallel()
	var items []string
	for i := range 120 {
		items = append(items, fmt.Sprintf("%q pending", fmt.Sprintf("step %d of the plan", i+1)))
	}
	long := "no plan update shows call_2 ([" + strings.Join(items, ", ") + "]); send one plan update per accepted write"
	rep := judgeSaved(t, "fake-no-plan", false, nil)
	failing := ""
	for i, c := range rep.Checks {
		for k, cv := range c.Cases {
			if cv.Outcome == conformance.Fail {
				rep.Checks[i].Cases[k].Reason = long
			}
		}
		if c.Outcome == conformance.Fail {
			rep.Checks[i].Reason, failing = long, c.ID
		}
	}
	if failing == "" {
		t.Fatal("fake-no-plan fails no check")
	}
	var sum strings.Builder
	if err := WriteSummary(&sum, rep, false); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(sum.String(), "\n") {
		if len(line) > 700 {
			t.Errorf("a summary line of %d bytes: %.200s…", len(line), line)
		}
	}
	if !strings.Contains(sum.String(), "…; send one plan update per accepted write") {
		t.Errorf("the summary does not keep the fix hint of a cut reason:\n%s", sum.String())
	}
	var page bytes.Buffer
	if err := WriteHTML(&page, rep); err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile(`(?s)<tr class="fail" data-outcome="fail"[^>]*><td class="mono"><a href="#check-` + failing + `">.*?</tr>`).FindString(page.String())
	if row == "" || len(row) > 1000 {
		t.Errorf("the checks table row of %s (%d bytes): %.300s", failing, len(row), row)
	}
	if !strings.Contains(page.String(), "step 120 of the plan") {
		t.Error("the HTML report has the whole reason nowhere")
	}
}

// The text summary, the Markdown summary and the HTML report each say
// which mode ran: a process per case (saved evidence of before the pool
// reads as such), or pooled processes, with how many served how many
// cases and how many cases ran again alone.
func TestEveryReportSaysWhichPoolModeRan(t *testing.T) {
	t.Parallel()
	pooled := func() []*conformance.Evidence {
		var out []*conformance.Evidence
		for i, ev := range savedRun(t, "fake-ok") {
			e := *ev
			e.Run.Pool = conformance.PoolOn
			e.Procs = slices.Clone(e.Procs)
			switch {
			case len(e.Procs) == 0:
			case i == 0:
				e.PooledFailure = &conformance.PooledFailure{Session: "a session of pooled agent process 1 (pid 7)", Failed: []string{"TW-PLAN-1"}}
			case e.Case.Poolable():
				e.Procs[0].Pooled = fmt.Sprintf("a session of pooled agent process %d (pid %d)", 1+i%2, 7+i%2)
			}
			out = append(out, &e)
		}
		return out
	}
	for _, tc := range []struct {
		evs                 []*conformance.Evidence
		text, md, html, flg string
	}{
		{savedRun(t, "fake-ok"), "pool: off: a process per case\n", "; pool off: a process per case", "<dt>pool</dt><dd>off: a process per case</dd>", " --pool off"},
		{pooled(), "pool: on: the cases that need no fresh process ran as sessions of 2 pooled process(es) (", "; pool on: the cases that need no fresh process ran as sessions of 2 pooled process\\(es\\) \\(",
			"<dt>pool</dt><dd>on: the cases that need no fresh process ran as sessions of 2 pooled process(es) (", ""},
	} {
		rep, page := htmlOf(t, tc.evs)
		var b strings.Builder
		if err := WriteSummary(&b, rep, false); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.text) {
			t.Errorf("pool %s: the summary does not say %q:\n%s", rep.Pool, tc.text, b.String())
		}
		if md := markdownOf(t, rep); !strings.Contains(md, tc.md) {
			t.Errorf("pool %s: the Markdown summary does not say %q:\n%s", rep.Pool, tc.md, md)
		}
		if !strings.Contains(page, tc.html) || strings.Contains(page, "--pool off") != (tc.flg != "") {
			t.Errorf("pool %s: the HTML report does not say %q (flags %q)", rep.Pool, tc.html, tc.flg)
		}
		if rep.Pool == conformance.PoolOn && (!strings.Contains(b.String(), "; 1 case(s) that failed there ran again alone") || rep.PoolProcesses != 2 || rep.PoolRanAlone != 1 || rep.PooledCases == 0) {
			t.Errorf("the pooled report counts %d processes, %d pooled cases, %d run again alone (want 2, some, 1):\n%s", rep.PoolProcesses, rep.PooledCases, rep.PoolRanAlone, b.String())
		}
	}
}

// A check FLAKY in one pooled run (a case failed it as a session of a
// pooled process and passed it alone in a fresh one) is worded as that,
// not as the runs of --repeat, and every report shows the case with its
// pooled failure: the summary's verdict line and failure list, the
// Markdown, GitHub and JUnit reports and the HTML page.
func TestAPooledFlakyIsWordedAsPooled(t *testing.T) {
	t.Parallel()
	const pooledReason = "a plan update (prompt 1, #5) shows a list no write of this case made"
	var evs []*conformance.Evidence
	flakyCase := ""
	for _, ev := range savedRun(t, "fake-ok") {
		e := *ev
		e.Run.Pool = conformance.PoolOn
		if flakyCase == "" && e.Case.Poolable() && e.Case.Feeds(conformance.TWPlan1) {
			flakyCase = e.Case.ID
			e.PooledFailure = &conformance.PooledFailure{Session: "a session of pooled agent process 2 (pid 8)", Failed: []string{conformance.TWPlan1},
				Failures: []string{conformance.TWPlan1 + ": " + pooledReason}}
		}
		evs = append(evs, &e)
	}
	rep, page := htmlOf(t, evs)
	c, _ := rep.Check(conformance.TWPlan1)
	if c.Outcome != conformance.Flaky || !slices.Contains(rep.Flaky, conformance.TWPlan1) {
		t.Fatalf("%s: %s %q, want flaky", c.ID, c.Outcome, c.Reason)
	}
	want := "case " + flakyCase + ": failed as a session of pooled agent process 2 (pid 8) (" + pooledReason + "), passed alone in a fresh process"
	var text strings.Builder
	if err := WriteSummary(&text, rep, false); err != nil {
		t.Fatal(err)
	}
	var gh, ju strings.Builder
	if err := WriteGitHub(&gh, rep); err != nil {
		t.Fatal(err)
	}
	if err := WriteJUnit(&ju, rep); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"summary": text.String(), "markdown": markdownOf(t, rep), "github": gh.String(), "junit": ju.String(), "html": page} {
		if strings.Contains(out, "between runs") || strings.Contains(out, "run 1:") {
			t.Errorf("%s: a pooled flaky check worded as --repeat's:\n%s", name, out)
		}
	}
	if !strings.Contains(text.String(), "      "+want) {
		t.Errorf("the summary does not list the flaky case %q:\n%s", want, text.String())
	}
	if line := VerdictLine(rep); !strings.Contains(line, "flaky (failed as a session of a pooled process, passed alone in a fresh one): TW-PLAN-1") {
		t.Errorf("the verdict line: %s", line)
	}
	if md := markdownOf(t, rep); !strings.Contains(md, "case "+flakyCase+": <code>failed as a session of pooled agent process 2") {
		t.Errorf("the Markdown does not list the flaky case:\n%s", md)
	}
	if !strings.Contains(gh.String(), "is flaky (it failed as a session of a pooled process and passed alone in a fresh one)") {
		t.Errorf("the GitHub annotation:\n%s", gh.String())
	}
	if !strings.Contains(page, ">"+flakyCase+"</a>: <span class=\"reason\">failed as a session of pooled agent process 2") {
		t.Error("the HTML report's failing checks do not list the flaky case")
	}
}
