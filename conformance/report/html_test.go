package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/driver"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// scriptItem is a plan entry an agent could send to attack the page.
const scriptItem = `<script>document.title="owned"</script><img src=x onerror=alert(1)>`

// hostileRun is the captured run named, read afresh, with the first entry
// of every plan update the agent sent replaced by scriptItem.
func hostileRun(t *testing.T, name string) []*conformance.Evidence {
	t.Helper()
	evs, err := conformance.ReadEvidenceArchive(filepath.Join(evidenceDir, name+".jsonl.gz"))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, ev := range evs {
		for i, m := range ev.Wire {
			if m.UpdateKind() != "plan" {
				continue
			}
			var msg map[string]any
			if err := json.Unmarshal([]byte(m.Line), &msg); err != nil {
				t.Fatal(err)
			}
			entries, _ := msg["params"].(map[string]any)["update"].(map[string]any)["entries"].([]any)
			if len(entries) == 0 {
				continue
			}
			entries[0].(map[string]any)["content"] = scriptItem
			b, err := json.Marshal(msg)
			if err != nil {
				t.Fatal(err)
			}
			ev.Wire[i].Line = string(b)
			n++
		}
	}
	if n == 0 {
		t.Fatalf("run %s has no plan update to edit", name)
	}
	return evs
}

func htmlOf(t *testing.T, evs []*conformance.Evidence) (*conformance.Report, string) {
	t.Helper()
	rep, err := conformance.Judge(evs, conformance.JudgeConfig{Checks: capturedChecks(t), Validator: sharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := WriteHTML(&b, rep); err != nil {
		t.Fatal(err)
	}
	return rep, b.String()
}

// What the agent sent is shown as text: a plan entry holding markup
// neither runs nor becomes an element, and the page loads nothing.
func TestHTMLReportShowsAgentOutputAsText(t *testing.T) {
	t.Parallel()
	_, page := htmlOf(t, hostileRun(t, "reference"))
	if strings.Contains(page, "<script>document") || strings.Contains(page, "<img") {
		t.Errorf("the agent's plan entry is markup in the page")
	}
	if !strings.Contains(page, "&lt;script&gt;document.title=&#34;owned&#34;&lt;/script&gt;") {
		t.Errorf("the agent's plan entry is not shown as text")
	}
	if got := strings.Count(page, "<script"); got != 1 {
		t.Errorf("%d script elements, want the page's own one", got)
	}
	if m := regexp.MustCompile(`(?i)(src|href)\s*=\s*"(https?:)?//`).FindString(page); m != "" {
		t.Errorf("the page loads or links outside itself: %s", m)
	}
	if !strings.Contains(page, "Content-Security-Policy") {
		t.Errorf("no Content-Security-Policy")
	}
}

// A bidirectional control the agent sent (U+202E, which reverses the
// rest of the line) in a plan entry, a wire line, the model journal or
// stderr is written visibly, as \u202e, never passed to the browser.
func TestHTMLReportShowsBidiControlsVisibly(t *testing.T) {
	t.Parallel()
	evs := hostileRun(t, "reference")
	quoted, _ := json.Marshal(scriptItem)
	for _, ev := range evs {
		for i := range ev.Wire {
			ev.Wire[i].Line = strings.ReplaceAll(ev.Wire[i].Line, string(quoted[1:len(quoted)-1]), "safe\u202eexe.txt")
		}
		for i := range ev.Procs {
			ev.Procs[i].Stderr += "warning: \u2066isolated\u2069 and \u202eflipped\n"
		}
		ev.Journal = slices.Clone(ev.Journal)
		for i := range ev.Journal {
			ev.Journal[i].Messages = slices.Clone(ev.Journal[i].Messages)
			for k := range ev.Journal[i].Messages {
				for c := range ev.Journal[i].Messages[k].Content {
					ev.Journal[i].Messages[k].Content[c].Text += "\u202e!"
				}
			}
		}
	}
	_, page := htmlOf(t, evs)
	if i := strings.IndexFunc(page, func(r rune) bool { return r == 0x202e || r == 0x2066 || r == 0x2069 }); i >= 0 {
		t.Errorf("a bidirectional control reaches the page: %q", page[max(0, i-60):min(len(page), i+20)])
	}
	for _, want := range []string{`safe\u202eexe.txt`, `\u2066isolated\u2069 and \u202eflipped`} {
		if !strings.Contains(page, want) {
			t.Errorf("the page does not show %q", want)
		}
	}
}

// Every failing check has its section, every failure its whole reason,
// and every link to evidence lands on an element of the page.
func TestHTMLReportLinksEveryFailureToItsEvidence(t *testing.T) {
	t.Parallel()
	rep, page := htmlOf(t, savedRun(t, "bridge-plan-on-reject"))
	if rep.OK || len(rep.FailedIDs()) == 0 {
		t.Fatal("the run should fail")
	}
	ids := map[string]bool{}
	for _, m := range regexp.MustCompile(`id="([^"]+)"`).FindAllStringSubmatch(page, -1) {
		ids[m[1]] = true
	}
	for _, id := range rep.FailedIDs() {
		if !ids["check-"+id] {
			t.Errorf("no section for failed check %s", id)
		}
	}
	links := regexp.MustCompile(`href="#([^"]+)"`).FindAllStringSubmatch(page, -1)
	evidence := 0
	for _, m := range links {
		if !ids[m[1]] {
			t.Errorf("link to #%s lands nowhere", m[1])
		}
		if strings.Contains(m[1], "-L") {
			evidence++
		}
	}
	if evidence == 0 {
		t.Errorf("no link to a wire line")
	}
	if !strings.Contains(page, "Failures that share a root cause") {
		t.Errorf("no root causes")
	}
	if !strings.Contains(page, `class="mark">▲ FAILED`) {
		t.Errorf("no wire line marked")
	}
}

// A failure's reason is shown whole, its fix hint too.
func TestHTMLReportShowsFixHintsWhole(t *testing.T) {
	t.Parallel()
	_, page := htmlOf(t, savedRun(t, "fake-no-error-prefix"))
	hint := "it counts as an error only when its text starts with &#34;Error:&#34; (start the refusal with it)"
	if !strings.Contains(page, hint) {
		t.Errorf("the fix hint is not shown whole")
	}
	// A failure with no wire line is marked at the model request that
	// carried the result of the call it names.
	if !strings.Contains(page, `<div class="mark">◀ FAILED TW-VALID-EMPTY: the result of call_2`) {
		t.Errorf("no model request marked")
	}
}

// The plan the agent showed is drawn beside the one expected, and the
// entry that differs is marked.
func TestHTMLReportDrawsPlansBesideTheExpected(t *testing.T) {
	t.Parallel()
	_, page := htmlOf(t, hostileRun(t, "reference"))
	if !strings.Contains(page, `<h4 class="shown">shown — differs</h4>`) {
		t.Errorf("no plan marked as differing")
	}
	if !strings.Contains(page, `<li class="diff"><input type="checkbox" disabled> &lt;script&gt;`) {
		t.Errorf("the differing entry is not marked")
	}
}

// A peers page has one matrix row per agent, a cell per check, and an
// agent that did not run is a row saying so.
func TestPeersHTMLMatrix(t *testing.T) {
	t.Parallel()
	ok, err := conformance.Judge(savedRun(t, "reference"), conformance.JudgeConfig{Checks: capturedChecks(t), Validator: sharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	bad, err := conformance.Judge(savedRun(t, "fake-no-error-prefix"), conformance.JudgeConfig{Checks: capturedChecks(t), Validator: sharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	err = WritePeersHTML(&b, []PeerResult{
		{Name: "good", Version: "1.0", Verdict: "PASS", Report: ok},
		{Name: "bad", Version: "2.0", Verdict: "FAIL (MUST): TW-PLAN-1", Report: bad},
		{Name: "broken", Verdict: "install failed: npm ERR!"},
	})
	if err != nil {
		t.Fatal(err)
	}
	page := b.String()
	rows := regexp.MustCompile(`<tr><td class="name"><a href="#(a\d-agent)">([^<]*)</a>`).FindAllStringSubmatch(page, -1)
	if len(rows) != 3 || rows[0][2] != "good 1.0" || rows[2][2] != "broken" {
		t.Fatalf("matrix rows %v", rows)
	}
	if len(bad.Failing) == 0 {
		t.Fatal("fake-no-error-prefix fails no check")
	}
	failing := bad.Failing[0]
	if !strings.Contains(page, `<td class="fail" title="`+failing+`: FAIL`) || !strings.Contains(page, `href="#a1-check-`+failing+`"`) {
		t.Errorf("the failing cell of %s does not link to its failure", failing)
	}
	if !strings.Contains(page, `id="a1-check-`+failing+`"`) || !strings.Contains(page, `id="a2-agent"`) {
		t.Errorf("an agent's section is missing")
	}
	if !strings.Contains(page, "install failed: npm ERR!") {
		t.Errorf("the agent that did not run does not say why")
	}
}

// The HTML report of a case whose agent floods the wire ("<" in message
// chunks, four bytes each as &lt;) is bounded: each line shows its first
// bytes, and once the case has shown htmlCaseShown bytes only a little of
// each, saying how long the line was and where the whole is.
func TestHTMLReportBounded(t *testing.T) {
	t.Parallel()
	evs := savedRun(t, "fake-ok")
	ev := *evs[0]
	chunk := `{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"` + strings.Repeat("<", 32<<10) + `"}}}}`
	ev.Wire = slices.Clone(ev.Wire)
	const flood = 400 // 12.5 MiB of "<"
	for range flood {
		last := ev.Wire[len(ev.Wire)-1]
		ev.Wire = append(ev.Wire, driver.WireMsg{Seq: last.Seq + 1, Dir: driver.Received, Kind: driver.KindNotification, Method: "session/update", Line: chunk, At: last.At, Time: last.Time})
	}
	rep, page := htmlOf(t, []*conformance.Evidence{&ev})
	if len(rep.Cases) != 1 {
		t.Fatalf("%d cases", len(rep.Cases))
	}
	if limit := 5*htmlCaseShown + (flood+len(evs[0].Wire))*(5*htmlTextSmall+1500); len(page) > limit {
		t.Errorf("the HTML report of %d wire lines of 32 KiB is %d bytes, over %d", flood, len(page), limit)
	}
	if !strings.Contains(page, fmt.Sprintf("[%d bytes in all, %d shown: the whole line is in wire.jsonl and evidence.json under --out]", len(chunk), htmlTextSmall)) {
		t.Error("a cut line does not say how long it was and where the whole is")
	}
	t.Logf("%d lines of %d bytes: a page of %d bytes", flood, len(chunk), len(page))
}

// Each case says how to run it again and holds its script; the page has
// an environment panel (the flags, the variables added to the agent's
// environment by name, the agent's command line, the versions); a write
// the agent accepted but no plan showed is drawn as the checklist the
// client should have got, at the request whose answer made the call;
// the checks and the cases can be searched, the cases narrowed to the
// failed ones.
func TestHTMLReportCaseToolsAndEnvironment(t *testing.T) {
	t.Parallel()
	evs := savedRun(t, "fake-no-plan")
	var copied []*conformance.Evidence
	for _, ev := range evs {
		e := *ev
		e.Run.Env = []string{"OPENAI_BASE_URL", "OPENAI_API_KEY"}
		copied = append(copied, &e)
	}
	rep, page := htmlOf(t, copied)
	for _, want := range []string{
		"todoharness conform --agent " + shellQuote(rep.Agent) + " --case plan-basic",
		"<summary>the case's script</summary>",
		`&#34;id&#34;: &#34;plan-basic&#34;`,
		"<dt>flags</dt><dd>--parallel ",
		"<dt>agent environment</dt><dd>OPENAI_BASE_URL, OPENAI_API_KEY (names only: a value may be a secret)</dd>",
		"<dt>agent command</dt>",
		"<dt>written by</dt><dd>todoharness ",
		"no plan update shows the list of call_1, which the agent accepted",
		`class="f-search"`, `class="f-failed"`, `data-failed="1"`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// The missing plan's checklist is the list of call_1 as the case
	// scripts it, every item marked as differing (none was shown).
	missing := regexp.MustCompile(`(?s)<td class="req">.*?no plan update shows the list of call_1`).FindString(page)
	if i := strings.LastIndex(missing, `<td class="req">`); i < 0 || !strings.Contains(missing[i:], `<h4>expected</h4><ul><li class="diff">`) {
		t.Errorf("the missing plan is not drawn as an expected checklist: %.600s", missing[max(0, i):])
	}
	for _, s := range []string{"plain-ID_1.x", "it's here", "$(rm -rf ~)"} {
		out, err := exec.Command("sh", "-c", "printf %s "+shellQuote(s)).Output()
		if err != nil || string(out) != s {
			t.Errorf("shellQuote(%q) = %s: the shell reads %q (%v)", s, shellQuote(s), out, err)
		}
	}
}

// A run's note (every well-formed call refused, and the fields the
// agent's schema requires that the contract's calls lack) is at the top
// of the page, after the verdict, as text (issue 41 item 5).
func TestHTMLReportShowsTheRunsNoteFirst(t *testing.T) {
	t.Parallel()
	rep, page := htmlOf(t, hostileRun(t, "reference"))
	if strings.Contains(page, `class="note"`) {
		t.Fatalf("a run without a note shows one")
	}
	rep.Note = `every well-formed call was refused: its schema requires "id" <b>` + "\u202e"
	var b bytes.Buffer
	if err := WriteHTML(&b, rep); err != nil {
		t.Fatal(err)
	}
	page = b.String()
	note := strings.Index(page, `<p class="note"`)
	if note < 0 || note < strings.Index(page, `id="verdict"`) || note > strings.Index(page, `id="checks"`) && strings.Contains(page, `id="checks"`) {
		t.Fatalf("the note is not between the verdict and the checks (at %d)", note)
	}
	if want := `requires &#34;id&#34; &lt;b&gt;\u202e`; !strings.Contains(page[note:], want) {
		t.Errorf("the note is not shown as text, want %q in %q", want, page[note:min(len(page), note+300)])
	}
}

// Case IDs that make one folder name (a.b and a_b) get one anchor each in
// the page, as they get one folder each under --out: no case's section
// shadows another's, and every link to a case lands on its own.
func TestHTMLReportAnchorsCasesThatShareAName(t *testing.T) {
	t.Parallel()
	evs := hostileRun(t, "reference")
	var run []*conformance.Evidence
	for k, id := range []string{"a.b", "a_b"} {
		c := *evs[k].Case
		c.ID = id
		e := *evs[k]
		e.Case, e.Index = &c, k
		run = append(run, &e)
	}
	rep, page := htmlOf(t, run)
	names := FolderNames(rep)
	if names[0] == names[1] {
		t.Fatalf("one folder name for both cases: %q", names)
	}
	for _, n := range names {
		if got := strings.Count(page, `id="case-`+n+`"`); got != 1 {
			t.Errorf("anchor case-%s: %d elements, want 1", n, got)
		}
	}
}

// Evidence saved while a case run again alone kept its pooled session's
// stderr in pooledFailure.stderr (before its pooled evidence was kept)
// still reads, and the HTML report shows that stderr beside the fresh
// run's.
func TestOldPooledFailureStderrStillShows(t *testing.T) {
	t.Parallel()
	var evs []*conformance.Evidence
	for i, ev := range savedRun(t, "fake-ok") {
		e := *ev
		if i == 1 {
			e.PooledFailure = &conformance.PooledFailure{Session: "a session of pooled agent process 1 (pid 7)", Failed: []string{conformance.TWPlan1}, Stderr: "the pooled process's old words"}
		}
		b, err := conformance.MarshalEvidence(&e)
		if err != nil {
			t.Fatal(err)
		}
		if i == 1 && !strings.Contains(string(b), "the pooled process's old words") {
			t.Fatalf("the evidence keeps no pooledFailure.stderr: %.300s", b)
		}
		read, err := conformance.UnmarshalEvidence(b, "saved")
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, read)
	}
	_, page := htmlOf(t, evs)
	if !strings.Contains(page, "before the fresh run, as a session of pooled agent process 1 (pid 7), where it failed") || !strings.Contains(page, "the pooled process&#39;s old words") {
		t.Error("the HTML report does not show the pooled stderr of evidence saved with pooledFailure.stderr")
	}
}
