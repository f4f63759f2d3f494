package report

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/todoharness/todoharness/conformance"
)

// markdownOf is r's Markdown summary.
func markdownOf(t *testing.T, r *conformance.Report) string {
	t.Helper()
	var b strings.Builder
	if err := WriteMarkdown(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// unescapedPipes counts the | of a Markdown line that are not
// backslash-escaped: the cell borders a GitHub table reads.
func unescapedPipes(line string) int {
	n := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n
}

// checkMarkdownTables fails unless every table line of md has the cells
// of its header: a value that ended its cell or its row would change that.
func checkMarkdownTables(t *testing.T, md string) {
	t.Helper()
	want := -1
	for i, l := range strings.Split(md, "\n") {
		if !strings.HasPrefix(l, "|") {
			want = -1
			continue
		}
		if want < 0 {
			want = unescapedPipes(l)
			continue
		}
		if got := unescapedPipes(l); got != want {
			t.Errorf("line %d has %d cell borders, its table's header %d: %q", i+1, got, want, l)
		}
	}
}

// hostileReason is what an agent could send to break out of a cell, run
// markup, notify people, reverse the text or flood the summary.
const hostileReason = "a | b ` c ``` <script>alert(1)</script> <img src=x onerror=alert(1)> @octocat [click](https://example.invalid) ![x](https://example.invalid/x.png)\nnew line\r\n# heading\u202egnp.exe\x1b[31m red & &amp; *bold* _it_ ~~s~~ \\"

func hostileReport() *conformance.Report {
	long := strings.Repeat("é", 5000) // two bytes each: a cut can fall inside one
	return &conformance.Report{
		ToolVersion:      "v1.2.3",
		CatalogueVersion: 5,
		Agent:            "my-agent --acp | `x` @octocat\n::error::forged",
		AgentInfo:        &conformance.AgentInfo{Name: "<b>evil</b>", Version: "1\u202e2"},
		Dialect:          "todo_write",
		Duration:         1500 * time.Millisecond,
		Verdict:          conformance.VerdictFail,
		Failing:          []string{"TW-PLAN-1"},
		Note:             "every call refused: " + hostileReason,
		Checks: []conformance.CheckResult{
			{Check: conformance.Check{ID: "TW-PLAN-1", Level: conformance.MUST, Title: "the plan shows the list"}, Outcome: conformance.Fail, Reason: hostileReason,
				Cases: []conformance.CaseVerdict{
					{Case: "plan-basic", Outcome: conformance.Fail, Reason: hostileReason},
					{Case: "plan-long", Outcome: conformance.Fail, Reason: "saw " + long},
					{Case: "plan-ok", Outcome: conformance.Pass},
				}},
			{Check: conformance.Check{ID: "TW-OK-1", Level: conformance.MUST, Title: "fine"}, Outcome: conformance.Pass},
			{Check: conformance.Check{ID: "TW-X-1", Level: conformance.SHOULD, Title: "known"}, Outcome: conformance.XFail, Expected: "known | bug"},
		},
	}
}

// What the agent sent cannot end a cell, start a line, run markup, load
// an image, notify anyone, or reverse the text; long text is cut between
// characters.
func TestMarkdownSummaryEscapesWhatTheAgentSent(t *testing.T) {
	t.Parallel()
	md := markdownOf(t, hostileReport())
	checkMarkdownTables(t, md)
	if !utf8.ValidString(md) {
		t.Error("the summary is not valid UTF-8")
	}
	// No < but those of the summary's own tags is unescaped.
	own := strings.NewReplacer("<code>", "", "</code>", "", "<br>", "", "<sub>", "", "</sub>", "")
	if l := own.Replace(md); strings.Contains(strings.ReplaceAll(strings.ReplaceAll(l, `\\`, ""), `\<`, ""), "<") {
		t.Errorf("an unescaped < in the summary:\n%s", md)
	}
	for _, bad := range []string{"\u202e", "\x1b", "\r", "](", "![", "\n# heading", "\n::error", "``"} {
		if strings.Contains(md, bad) {
			t.Errorf("the summary holds %q raw:\n%s", bad, md)
		}
	}
	for _, want := range []string{`\u202e`, `\x1b`, `\<script\>`, `a \| b`, "\\`", "new line # heading", "case plan-basic", "case plan-long", "TW-X-1"} {
		if !strings.Contains(md, want) {
			t.Errorf("the summary lacks %q:\n%s", want, md)
		}
	}
	// Every @ the agent sent is inside <code> (no mention is linked there).
	outside := regexp.MustCompile(`<code>.*?</code>`).ReplaceAllString(md, "")
	if strings.Contains(outside, "@") {
		t.Errorf("an @ outside <code>: %q", outside)
	}
	// Each reason is cut: the 10,000-byte one leaves a row of a few hundred.
	for _, l := range strings.Split(md, "\n") {
		if len(l) > 4000 {
			t.Errorf("a line of %d bytes: %.200q…", len(l), l)
		}
	}
	if !strings.Contains(md, "| TW-PLAN-1 | MUST | FAIL | **yes** |") {
		t.Errorf("no row for the failing check:\n%s", md)
	}
	if strings.Contains(md, "TW-OK-1") {
		t.Error("a passing check has a row")
	}
}

// However many checks fail with however long reasons, the summary stays
// under MarkdownMaxBytes and says how many it left out.
func TestMarkdownSummaryIsBounded(t *testing.T) {
	t.Parallel()
	r := hostileReport()
	r.Checks = nil
	for i := range 400 {
		c := conformance.CheckResult{Check: conformance.Check{ID: fmt.Sprintf("TW-MANY-%d", i), Level: conformance.MUST, Title: "many"}, Outcome: conformance.Fail}
		for j := range 8 {
			c.Cases = append(c.Cases, conformance.CaseVerdict{Case: fmt.Sprintf("case-%d", j), Outcome: conformance.Fail, Reason: strings.Repeat("\u202e|<", 400)})
		}
		r.Checks = append(r.Checks, c)
	}
	md := markdownOf(t, r)
	if len(md) > MarkdownMaxBytes {
		t.Errorf("%d bytes, want at most %d", len(md), MarkdownMaxBytes)
	}
	checkMarkdownTables(t, md)
	m := regexp.MustCompile(`(\d+) more failing checks not shown here`).FindStringSubmatch(md)
	if m == nil {
		t.Fatalf("no line says what was left out:\n%.2000s", md[len(md)-2000:])
	}
	shown := strings.Count(md, "\n| TW-MANY-")
	if got := fmt.Sprint(400 - shown); m[1] != got {
		t.Errorf("says %s left out, %d rows shown of 400", m[1], shown)
	}
	if !strings.Contains(md, "… and 3 more cases") {
		t.Error("a check's cases past the fifth are not counted")
	}
}

// Saved runs: a passing one has no failing rows, a failing one a row per
// check that fails the run, and the verdict line the text summary ends on.
func TestMarkdownSummaryOfSavedRuns(t *testing.T) {
	t.Parallel()
	pass := judgeSaved(t, "reference", false, nil)
	md := markdownOf(t, pass)
	if !strings.HasPrefix(md, "### todoharness conform: ✅ PASS\n") || strings.Contains(md, "Failing checks") {
		t.Errorf("the reference's summary:\n%s", md)
	}
	fail := judgeSaved(t, "fake-no-plan", false, nil)
	if fail.Verdict != conformance.VerdictFail {
		t.Fatalf("fake-no-plan judged %s", fail.Verdict)
	}
	md = markdownOf(t, fail)
	checkMarkdownTables(t, md)
	if !strings.HasPrefix(md, "### todoharness conform: ❌ FAIL\n") {
		t.Errorf("heading: %.80q", md)
	}
	if !strings.Contains(md, "**"+mdText(VerdictLine(fail))+"**") {
		t.Errorf("no verdict line %q", VerdictLine(fail))
	}
	for _, id := range fail.Failing {
		if !strings.Contains(md, "\n| "+mdText(id)+" | ") {
			t.Errorf("no row for %s", id)
		}
	}
}
