package conformance_test

// The tests of the text summary and the transcripts (package
// conformance/report) over reports the runner and the judge make: an
// external test package, as report imports conformance. The dot import
// is the one Go allows in such tests; the internal helpers they use are
// exported in export_test.go.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	. "github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/conformance/report"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/internal/buildinfo"
	"github.com/todoharness/todoharness/internal/safefile"
	"github.com/todoharness/todoharness/mockmodel"
)

// The summary never cuts a fix hint: a refusal the model could not see
// as one says, in the table and below it, how to word it.
func TestSummaryKeepsFixHintsWhole(t *testing.T) {
	t.Parallel()
	rep, err := Judge(SavedRun(t, "fake-no-error-prefix"), JudgeConfig{Checks: CapturedChecks(t), Validator: SharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.WriteSummary(&b, rep, false); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, line := range strings.Split(b.String(), "\n") {
		if !strings.Contains(line, "was accepted: the model saw") && !strings.Contains(line, "carries no error") {
			continue
		}
		n++
		if !strings.Contains(line, `it counts as an error only when its text starts with "Error:" (start the refusal with it)`) {
			t.Errorf("a fix hint is cut: %s", line)
		}
	}
	if n < 12 {
		t.Fatalf("%d lines with the hint, want the table's and the failures' for each of the six refusals:\n%s", n, b.String())
	}
}

// Follow-on failures are grouped under their root cause: a refused call
// whose model was told it went through fails the refusal check, and every
// check that then finds the call's list missing from the plans or in the
// model's history, with no wire line in common; the scripted call ties
// them. Groups are not chained: the refusal of another case, failing
// TW-PLAN-1 too, is a root cause of its own.
func TestRootCauseGroupsFollowOnsOfOneCall(t *testing.T) {
	t.Parallel()
	rep, err := Judge(ToldAccepted(t, "fake-no-error-prefix"), JudgeConfig{Checks: CapturedChecks(t), Validator: SharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	var group *report.RootCause
	rcs := report.RootCauses(rep)
	for i := range rcs {
		if slices.Contains(rcs[i].Checks, "TW-VALID-EMPTY") {
			group = &rcs[i]
		}
	}
	if group == nil {
		t.Fatalf("TW-VALID-EMPTY is in no root cause: %+v", rcs)
	}
	for _, id := range []string{"TW-PLAN-1", "TW-HISTORY-1"} {
		if !slices.Contains(group.Checks, id) {
			t.Errorf("%s is not grouped with TW-VALID-EMPTY: %v", id, group.Checks)
		}
	}
	for _, id := range []string{"TW-VALID-DUP", "TW-VALID-WS"} {
		if slices.Contains(group.Checks, id) {
			t.Errorf("%s (another case's refusal) is chained into TW-VALID-EMPTY's root cause: %v", id, group.Checks)
		}
	}
	for _, rc := range rcs {
		if len(rc.Where) == 0 || len(rc.Checks) < 2 {
			t.Errorf("a root cause of %d checks at %d places: %+v", len(rc.Checks), len(rc.Where), rc)
		}
	}
	if !slices.Contains(group.Where, report.RootAt{Case: "reject-empty", Seq: -1, Call: "call_2"}) {
		t.Errorf("the group does not name reject-empty's call_2: %v", group.Where)
	}
}

// The load checks mark the replayed plan they judged, so the transcript
// points at it and it joins the failures on the same line.
func TestLoadFailuresMarkTheReplayedPlan(t *testing.T) {
	t.Parallel()
	rep, err := Judge(SavedRun(t, "bridge-plan-on-reject"), JudgeConfig{Checks: CapturedChecks(t), Validator: SharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"TW-LOAD-1", "TW-LOAD-2"} {
		c, _ := rep.Check(id)
		marked := false
		for _, cv := range c.Cases {
			marked = marked || (cv.Outcome == Fail && len(cv.Lines) > 0)
		}
		if c.Outcome != Fail || !marked {
			t.Errorf("%s: %s with no wire line marked", id, c.Outcome)
		}
		if !strings.Contains(c.Reason, "(the list of call_4)") {
			t.Errorf("%s does not say whose list was replayed: %s", id, c.Reason)
		}
	}
}

// A passing row says where the check held and what the run saw there,
// never only the check's title: every check of the catalogue has words
// for what it saw (TestEveryCheckHasWordsForAPass), and they are added up
// over the cases.
func TestPassingRowSaysWhatWasSeen(t *testing.T) {
	t.Parallel()
	rep, err := Judge(SavedRun(t, "reference"), JudgeConfig{Checks: CapturedChecks(t), Validator: SharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.WriteSummary(&b, rep, false); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || f[2] != "PASS" {
			continue
		}
		c, _ := rep.Check(f[0])
		if !regexp.MustCompile(`PASS +(\d+ cases|[a-z0-9-]+): `).MatchString(line) || strings.Contains(line, c.Title) {
			t.Errorf("a passing row does not say where it held and what was seen: %s", line)
		}
	}
	for id, want := range map[string]string{
		"TW-VALID-EMPTY":     `reject-empty: 1 call refused, no plan after: "Error: `,
		"TW-VALID-TWOACTIVE": `reject-two-active: 1 call refused, no plan after: "Error: `,
		"TW-PLAN-1":          `11 cases: 16 plans, each the list of the accepted write before it, and none for 7 refused calls`,
		"TW-EMPTY-1":         `empty-list: 1 empty list accepted, followed by a plan with no entries`,
		"TW-FINAL-1":         `11 cases: 13 prompt turns and 2 session/loads, each ending on the last accepted list`,
		"ACP-INIT-1":         `12 cases: 14 initialize answers, each protocolVersion 1`,
	} {
		c, _ := rep.Check(id)
		if got := rep.PassSeen(c); !strings.HasPrefix(got, want) {
			t.Errorf("%s: %s, want it to start %s", id, got, want)
		}
	}
	// Without the evidence (a report read back), the title stands.
	c, _ := rep.Check("TW-PLAN-1")
	if got := (&Report{}).PassSeen(c); got != "11 cases: "+c.Title {
		t.Errorf("TW-PLAN-1 without evidence: %s", got)
	}
}

// A failing case's transcript marks every failure it can place: on the
// wire line it points at, else at the model request that carried the
// result of the call it names.
func TestTranscriptMarksFailuresWithNoWireLine(t *testing.T) {
	t.Parallel()
	rep, err := Judge(ToldAccepted(t, "fake-no-error-prefix"), JudgeConfig{Checks: CapturedChecks(t), Validator: SharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := report.WriteTranscripts(dir, rep); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "reject-empty", "transcript.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"TW-VALID-EMPTY", "TW-PLAN-1"} {
		if !strings.Contains(string(b), "vvv FAILED "+id+": the result of call_2") {
			t.Errorf("the transcript does not mark %s at call_2's result:\n%s", id, b)
		}
	}
}

// In colour every outcome is painted and the table stays aligned; without,
// the summary carries no escape code.
func TestSummaryColour(t *testing.T) {
	t.Parallel()
	rep, err := Judge(SavedRun(t, "bridge-plan-on-reject"), JudgeConfig{Checks: CapturedChecks(t), Validator: SharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	var plain, colour bytes.Buffer
	if err := report.WriteSummary(&plain, rep, false); err != nil {
		t.Fatal(err)
	}
	if err := report.WriteSummary(&colour, rep, true); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(plain.String(), "\x1b[") {
		t.Error("escape codes without colour")
	}
	for _, want := range []string{"\x1b[32mPASS\x1b[0m", "\x1b[31mFAIL\x1b[0m", "\x1b[31mFAIL: MUST failed"} {
		if !strings.Contains(colour.String(), want) {
			t.Errorf("no %q in colour", want)
		}
	}
	if got := regexp.MustCompile("\x1b\\[[0-9;]*m").ReplaceAllString(colour.String(), ""); got != plain.String() {
		t.Errorf("the coloured summary, codes removed, differs from the plain one:\n%s\n---\n%s", got, plain.String())
	}
}

// A capped wire line, a capped model body and text, and the descendants
// the runner killed are marked in the transcript.
func TestTranscriptMarksCapsAndKills(t *testing.T) {
	c := &Case{ID: "c", Title: "t", Source: "(test)"}
	ev := &Evidence{Case: c, CaseRecord: driver.CaseRecord{
		Procs: []driver.ProcResult{{Argv: []string{"agent"}, Killed: []string{"pid 42 (sleep)"}}},
		Wire:  []driver.WireMsg{{Dir: driver.Received, Line: "aaaa", Kind: driver.KindInvalid, Capped: true, Size: 1 << 30, Problem: "a line of 1073741824 bytes, over the runner's cap"}},
		Journal: []mockmodel.JournalEntry{{Wire: mockmodel.WireOpenAIChat, RawCapped: true, RawBytes: 20 << 20, RawSHA256: "abc",
			Capped: []string{"messages[0].content[0].text: 20971520 bytes, sha256 def, first 1048576 kept"}}}}}
	d := t.TempDir()
	if err := report.WriteTranscript(d, &Report{}, NewCaseResult("c", "t", ev)); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(d, "transcript.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"killed by the runner: pid 42 (sleep)", "CAPPED: a line of 1073741824 bytes", "BODY CAPPED: 20971520 bytes, sha256 abc", "CAPPED: messages[0].content[0].text: 20971520 bytes"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the transcript does not say %q:\n%s", want, b)
		}
	}
}

// A panic in the function is the agent's crash: status 2, the panic and
// its stack on its stderr; the runner goes on.
func TestInProcessPanic(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	rep := RunStub(t, StubTarget(func(ctx context.Context, p driver.ProcIO) int {
		fmt.Fprintln(p.Stderr, "stub: starting")
		StubServe(p, func() { panic("boom") })
		return 0
	}), StubCase(true), nil)
	writeTranscripts(t, out, rep)
	cr := rep.Cases[0]
	pr := cr.Evidence().Procs[0]
	if pr.Exit != "panic: boom (exit status 2)" {
		t.Errorf("Exit %q, want panic: boom (exit status 2)", pr.Exit)
	}
	if !strings.HasPrefix(pr.Stderr, "stub: starting\npanic: boom\n\ngoroutine ") || !strings.Contains(pr.Stderr, "TestInProcessPanic") {
		t.Errorf("Stderr %q, want what the agent wrote, then the panic and the stack through TestInProcessPanic", pr.Stderr)
	}
	run, _ := rep.Check("RUN-1")
	if run.Outcome != Fail || !strings.Contains(run.Reason, "step 3 (prompt)") || !strings.Contains(run.Reason, "the agent exited (panic: boom (exit status 2))") ||
		!strings.Contains(run.Reason, "stderr: ") {
		t.Errorf("RUN-1: %s %q, want a failure at the prompt naming the panic and quoting stderr", run.Outcome, run.Reason)
	}
	if !strings.HasPrefix(cr.Transcript, out) {
		t.Errorf("transcript folder %q, want it under %s", cr.Transcript, out)
	}
	b, err := os.ReadFile(filepath.Join(cr.Transcript, "transcript.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "in-process agent 1: stub-agent --acp\n") || !strings.Contains(string(b), "panic: boom (exit status 2)") {
		t.Errorf("the transcript does not name the in-process agent and its panic:\n%s", b)
	}
	// A second run in the same process works: the panic was contained.
	rep = RunStub(t, StubTarget(func(ctx context.Context, p driver.ProcIO) int { StubServe(p, nil); return 0 }), StubCase(false), nil)
	if c, _ := rep.Check("RUN-1"); c.Outcome != Pass {
		t.Errorf("after the panic, RUN-1: %s %q", c.Outcome, c.Reason)
	}
}

// Writing transcripts under an --out folder that already holds links
// never writes through them: a case folder that is a link is refused, a
// file that is a link is replaced by the file.
func TestWriteTranscriptsNeverFollowsLinks(t *testing.T) {
	evs := SavedRun(t, "fake-no-plan")
	rep, err := Judge(evs, JudgeConfig{Checks: CapturedChecks(t), Validator: SharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	var failing *CaseResult
	for _, cr := range rep.Cases {
		if cr.Evidence() != nil && len(cr.Failed) > 0 {
			failing = cr
			break
		}
	}
	if failing == nil {
		t.Fatal("no failing case in fake-no-plan")
	}
	name := failing.SafeID()

	t.Run("a case folder that is a link", func(t *testing.T) {
		out, outside := t.TempDir(), t.TempDir()
		if err := os.Symlink(outside, filepath.Join(out, name)); err != nil {
			t.Fatal(err)
		}
		err := report.WriteTranscripts(out, rep)
		if !errors.Is(err, safefile.ErrLink) {
			t.Fatalf("WriteTranscripts = %v, want a refusal of the link", err)
		}
		if left, _ := os.ReadDir(outside); len(left) > 0 {
			t.Fatalf("written through the link: %v", left)
		}
	})
	t.Run("a file that is a link", func(t *testing.T) {
		out, outside := t.TempDir(), t.TempDir()
		victim := filepath.Join(outside, "victim")
		if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Mkdir(filepath.Join(out, name), 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{EvidenceFile, "transcript.txt"} {
			if err := os.Symlink(victim, filepath.Join(out, name, f)); err != nil {
				t.Fatal(err)
			}
		}
		if err := report.WriteTranscripts(out, rep); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(victim); string(b) != "keep" {
			t.Fatalf("the file outside was written through a link: %.60q", b)
		}
		for _, f := range []string{EvidenceFile, "transcript.txt"} {
			if fi, err := os.Lstat(filepath.Join(out, name, f)); err != nil || !fi.Mode().IsRegular() {
				t.Fatalf("%s is not a regular file: %v", f, err)
			}
		}
	})
}

// The transcript (--out) lists every failure of the case and marks which
// write each plan line was tied to; the JSON report carries the ties.
func TestTranscriptListsEveryFailureAndTheTies(t *testing.T) {
	t.Parallel()
	rep := JudgeSaved(t, "bridge-wrong-counts", nil, "replace")
	b := transcriptOf(t, rep, rep.Cases[0])
	for _, want := range []string{
		"\n  TW-COUNTS-1: call_1: the result ",
		"\n  TW-COUNTS-1: call_2: the result ",
		"      ^^^ PLAN tied to call_1: shows its accepted list",
		"      ^^^ PLAN tied to call_2: shows its accepted list",
	} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the transcript lacks %q:\n%s", want, b)
		}
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"call": "call_2"`) || !strings.Contains(js.String(), `"failures": [`) {
		t.Errorf("the JSON report lacks the plan ties or the failures")
	}
	// --out: the evidence written records the ties, and judged again it
	// gives the same verdict.
	out := t.TempDir()
	writeTranscripts(t, out, rep)
	again, err := ReadEvidenceDir(out)
	if err != nil {
		t.Fatal(err)
	}
	if len(again) != 1 || len(again[0].PlanTies) != 2 || again[0].PlanTies[1].Call != "call_2" {
		t.Fatalf("the written evidence records the ties %+v", again[0].PlanTies)
	}
	rep2, err := Judge(again, JudgeConfig{Validator: SharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	if c, _ := rep2.Check("TW-COUNTS-1"); c.Outcome != Fail || len(c.Cases[0].Failures) != 2 {
		t.Errorf("judged again: TW-COUNTS-1 %s %+v", c.Outcome, c.Cases)
	}
}

func TestRunClientRequests(t *testing.T) {
	t.Parallel()
	tmp := t.TempDir()
	rep, err := Run(context.Background(), Config{Agent: FakeTarget(t, "client-requests"), Cases: OneCase(t, "plan-basic"),
		Timeout: time.Minute, TempDir: tmp, KeepDirs: true})
	if err != nil {
		t.Fatal(err)
	}
	ev := rep.Cases[0].Evidence()
	if len(ev.Procs) != 1 {
		t.Fatalf("%d processes", len(ev.Procs))
	}
	var got []string
	for _, q := range ev.Procs[0].ClientRequests {
		got = append(got, q.Method+" -> "+q.Answer)
	}
	want := []string{
		"session/request_permission -> ok",
		"fs/read_text_file -> ok",
		"fs/read_text_file -> JSON-RPC error -32602",
		"fs/write_text_file -> ok",
		"terminal/create -> JSON-RPC error -32601",
	}
	if len(got) != len(want) {
		t.Fatalf("client requests %q", got)
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("request %d: %q, want prefix %q", i, got[i], want[i])
		}
	}
	// The answers are on the wire: permission picked the allow option, the
	// read honoured line/limit, the write landed inside the cwd.
	var answers []string
	for _, m := range ev.Wire {
		if m.Dir == driver.Sent && m.Kind == driver.KindResponse {
			answers = append(answers, m.Line)
		}
	}
	all := strings.Join(answers, "\n")
	for _, s := range []string{`"optionId":"yes"`, `"content":"two\n"`} {
		if !strings.Contains(all, s) {
			t.Errorf("answers lack %s:\n%s", s, all)
		}
	}
	if b, err := os.ReadFile(filepath.Join(ev.Cwd, "out", "w.txt")); err != nil || string(b) != "written" {
		t.Errorf("written file: %q %v", b, err)
	}
	// The transcript lists each client request with what was asked.
	dir := t.TempDir()
	if err := report.WriteTranscript(dir, rep, rep.Cases[0]); err != nil {
		t.Fatal(err)
	}
	text, _ := os.ReadFile(filepath.Join(dir, "transcript.txt"))
	for _, s := range []string{
		`client request session/request_permission picked "yes" (allow_once) -> ok`,
		"client request fs/read_text_file /etc/passwd -> JSON-RPC error -32602",
		"client request fs/write_text_file " + filepath.Join(ev.Cwd, "out", "w.txt") + " (7 bytes) -> ok",
		"client request terminal/create -> JSON-RPC error -32601",
	} {
		if !strings.Contains(string(text), s) {
			t.Errorf("transcript lacks %q:\n%s", s, text)
		}
	}
	// The runner's own messages are valid ACP too.
	v, err := driver.NewSchemaValidator()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ev.Wire {
		if m.Dir == driver.Sent {
			if err := v.Validate(m, false); err != nil {
				t.Errorf("runner message #%d invalid: %v\n%s", m.Seq, err, m.Line)
			}
		}
	}
}

func TestRunExpectedFailures(t *testing.T) {
	t.Parallel()
	cases := OneCase(t, "plan-basic")
	// wrong-counts fails TW-COUNTS-1 (MUST) and TW-COUNTS-2 (INFO).
	listed := RunFake(t, "wrong-counts", func(c *Config) {
		c.Cases = cases
		c.Expected = []ExpectedFailure{{ID: "TW-COUNTS-1", Reason: "we count differently"}}
	})
	if listed.Verdict != VerdictIncomplete || len(listed.Failing) > 0 {
		t.Errorf("listed failure failed the run: %s %v %v", listed.Verdict, listed.Failing, listed.Stale)
	}
	// The text summary quotes the clause of each failing check and names
	// the cases that failed it.
	var lb bytes.Buffer
	_ = report.WriteSummary(&lb, listed, false)
	for _, want := range []string{"What the failing checks test:", "TW-COUNTS-1 (MUST): \"The tool result reports only pending", SrcREADME, "case plan-basic (expected): "} {
		if !strings.Contains(lb.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, lb.String())
		}
	}
	stale := RunFake(t, "ok", func(c *Config) {
		c.Cases = cases
		c.Expected = []ExpectedFailure{{ID: "TW-COUNTS-1", Reason: "we count differently"}}
	})
	if stale.OK || !reflect.DeepEqual(stale.Stale, []string{"TW-COUNTS-1"}) {
		t.Errorf("stale entry: OK=%v stale=%v", stale.OK, stale.Stale)
	}
	var b bytes.Buffer
	_ = report.WriteSummary(&b, stale, false)
	if !strings.Contains(b.String(), "STALE") {
		t.Errorf("summary does not say STALE:\n%s", b.String())
	}
	_, err := Run(context.Background(), Config{Agent: FakeTarget(t, "ok"), Cases: cases,
		Expected: []ExpectedFailure{{ID: "TW-NOPE", Reason: "typo"}}})
	if err == nil || !strings.Contains(err.Error(), "TW-NOPE") {
		t.Errorf("unknown id: %v", err)
	}
}

func TestReportsAndTranscripts(t *testing.T) {
	t.Parallel()
	out := t.TempDir()
	rep := RunFake(t, "no-plan", nil)
	writeTranscripts(t, out, rep)
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var back struct {
		OK     bool `json:"ok"`
		Checks []struct {
			ID, Outcome string
		} `json:"checks"`
	}
	if err := json.Unmarshal(js.Bytes(), &back); err != nil || back.OK || len(back.Checks) != len(Catalogue()) {
		t.Errorf("JSON report: %v ok=%v checks=%d", err, back.OK, len(back.Checks))
	}
	// A folder per case with its evidence; a transcript for each case with
	// a failure, none for clean cases.
	var withFail, all []string
	for _, c := range rep.Cases {
		all = append(all, c.SafeID())
		if len(c.Failed) > 0 {
			withFail = append(withFail, c.SafeID())
		}
	}
	var dirs, transcripts []string
	entries, _ := os.ReadDir(out)
	for _, e := range entries {
		dirs = append(dirs, e.Name())
		if _, err := os.Stat(filepath.Join(out, e.Name(), EvidenceFile)); err != nil {
			t.Error(err)
		}
		if _, err := os.Stat(filepath.Join(out, e.Name(), "transcript.txt")); err == nil {
			transcripts = append(transcripts, e.Name())
		}
	}
	sort.Strings(withFail)
	sort.Strings(all)
	if !reflect.DeepEqual(dirs, all) {
		t.Errorf("case folders %v, want %v", dirs, all)
	}
	if !reflect.DeepEqual(transcripts, withFail) {
		t.Errorf("transcripts %v, want %v", transcripts, withFail)
	}
	// The saved evidence, judged again, gives the same verdicts.
	evs, err := ReadEvidenceDir(out)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Judge(evs, JudgeConfig{Validator: SharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.FailedIDs(), rep.FailedIDs()) || again.OK != rep.OK || again.Dialect != rep.Dialect || len(again.Cases) != len(rep.Cases) {
		t.Errorf("judged again: failed %v ok=%v dialect %s, %d cases; the run: %v ok=%v dialect %s, %d cases",
			again.FailedIDs(), again.OK, again.Dialect, len(again.Cases), rep.FailedIDs(), rep.OK, rep.Dialect, len(rep.Cases))
	}
	for i := range rep.Checks {
		if a, b := again.Checks[i], rep.Checks[i]; a.Outcome != b.Outcome || a.Reason != b.Reason {
			t.Errorf("%s judged again: %s %q; in the run: %s %q", b.ID, a.Outcome, a.Reason, b.Outcome, b.Reason)
		}
	}
	tr, err := os.ReadFile(filepath.Join(out, "replace", "transcript.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"== ACP wire", `"method":"session/prompt"`, "== model requests", "tools: todo_write", "failed checks: "} {
		if !strings.Contains(string(tr), s) {
			t.Errorf("transcript lacks %q", s)
		}
	}
	for _, f := range []string{"wire.jsonl", "journal.jsonl", "stderr-1.txt"} {
		if _, err := os.Stat(filepath.Join(out, "replace", f)); err != nil {
			t.Error(err)
		}
	}
}

func TestRunCancelled(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	// The run is cancelled once an agent runs: the first to start says so
	// through a FIFO (opening it for reading waits for a writer), then
	// never answers. The others wait to open it, never answering either.
	started := filepath.Join(t.TempDir(), "started")
	if err := syscall.Mkfifo(started, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	go func() {
		_, _ = os.ReadFile(started)
		cancel()
	}()
	// No case timeout: only the cancellation can end this run.
	var rep *Report
	HangCheck(t, HangLimit, "a cancelled Run of agents that never answer", func() {
		var err error
		rep, err = Run(ctx, Config{Agent: ShellTarget("echo started >'" + started + "'; exec sleep 600"), Cases: BuiltinCases(t), Dialect: driver.DialectTodoWrite, Parallel: 2,
			Timeout: time.Hour, Grace: 100 * time.Millisecond})
		if err != nil {
			t.Error(err)
		}
	})
	if rep == nil {
		return
	}
	// Interrupted: said so, and nothing is blamed on the agent.
	if rep.OK || rep.Verdict != VerdictInterrupted || !strings.Contains(rep.Interrupted, "context canceled") {
		t.Errorf("cancelled run: verdict %s (%q)", rep.Verdict, rep.Interrupted)
	}
	if ids := rep.FailedIDs(); len(ids) > 0 {
		t.Errorf("a cancelled run blamed the agent: failed %v", ids)
	}
	var b bytes.Buffer
	_ = report.WriteSummary(&b, rep, false)
	if !strings.Contains(b.String(), "INTERRUPTED: the run was interrupted (context canceled)") {
		t.Errorf("summary does not say the run was interrupted:\n%s", b.String())
	}
}

// --repeat on a racy agent (its plan is missing in every other process)
// reports the plan check FLAKY, with the runs of each outcome, and the
// verdict is not PASS.
func TestRepeatReportsFlaky(t *testing.T) {
	t.Parallel()
	var cases []*Case
	for _, c := range BuiltinCases(t) {
		if c.ID == "plan-basic" {
			cases = append(cases, c)
		}
	}
	tg := FakeTarget(t, "flip-plan")
	tg.Env = append(tg.Env, FakeCounterEnv+"="+filepath.Join(t.TempDir(), "count"))
	out := t.TempDir()
	rep := RunFake(t, "", func(c *Config) {
		c.Agent, c.Cases, c.Dialect, c.Parallel, c.Repeat = tg, cases, driver.DialectTodoWrite, 1, 5
	})
	writeTranscripts(t, out, rep)
	// The evidence of each run is kept apart, and judged again it is as
	// flaky (--judge DIR).
	saved, err := ReadEvidenceDir(out)
	if err != nil || len(saved) != 5 {
		t.Fatalf("%d saved evidence files (%v), want one per run", len(saved), err)
	}
	again, err := Judge(saved, JudgeConfig{Validator: SharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	if p, _ := again.Check("TW-PLAN-1"); p.Outcome != Flaky {
		t.Errorf("judged again: TW-PLAN-1 %s, want flaky", p.Outcome)
	}
	p, _ := rep.Check("TW-PLAN-1")
	if p.Outcome != Flaky {
		DumpFailures(t, rep)
		t.Fatalf("TW-PLAN-1 %s %q, want flaky", p.Outcome, p.Reason)
	}
	if want := "fail in runs 1,3,5: plan-basic: no plan update shows call_1"; !strings.Contains(p.Reason, want) || !strings.Contains(p.Reason, "pass in runs 2,4") {
		t.Errorf("reason %q, want the runs of each outcome (%q, pass in runs 2,4)", p.Reason, want)
	}
	// With no plan, the checks about plan entries are not judged in runs
	// 1,3,5: not-run there, pass in 2,4, flaky too; the client ends the
	// turn with no plan in runs 1,3,5 (TW-FINAL-1); the fallback rule has
	// no plan update to judge there (n/a), one in 2,4.
	if want := []string{"ACP-PLAN-FALLBACK-1", "TW-PLAN-1", "TW-FINAL-1", "TW-PLAN-PRIORITY-1", "TW-PLAN-NONNULL-1"}; rep.OK || rep.Verdict != VerdictFail || !reflect.DeepEqual(rep.Flaky, want) {
		t.Errorf("verdict %s, flaky %v: want FAIL for the flaky MUST checks %v", rep.Verdict, rep.Flaky, want)
	}
	if r, _ := rep.Check("TW-PLAN-PRIORITY-1"); r.Outcome != Flaky {
		t.Errorf("TW-PLAN-PRIORITY-1 %s: no plan entry in runs 1,3,5, judged in 2,4", r.Outcome)
	}
	var sum strings.Builder
	if err := report.WriteSummary(&sum, rep, false); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"TW-PLAN-1", "FLAKY", "flaky (the outcome differed between runs): ACP-PLAN-FALLBACK-1, TW-PLAN-1", "run 2: pass"} {
		if !strings.Contains(sum.String(), want) {
			t.Errorf("summary lacks %q:\n%s", want, sum.String())
		}
	}
}

// A failed SHOULD check (the fake that is slow to exit fails only
// ACP-EXIT-1) passes the run; under Strict it fails the run, says so in
// the verdict and goes into the baseline --write-baseline writes (the
// JUnit report: conformance/report's TestJUnitStrict).
func TestStrictFailsTheRunOnShouldFailures(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		strict        bool
		verdict, line string
		inBaseline    bool
	}{
		{strict: false, verdict: VerdictPass, line: "PASS: every MUST check passes"},
		{strict: true, verdict: VerdictFail, line: "FAIL: SHOULD failed (--strict): ACP-EXIT-1", inBaseline: true},
	} {
		rep := JudgeStrict(t, "fake-slow-exit", tc.strict)
		if rep.Verdict != tc.verdict || rep.OK != (tc.verdict == VerdictPass) || rep.Strict != tc.strict {
			t.Errorf("strict %v: verdict %s (ok %v, strict %v), want %s", tc.strict, rep.Verdict, rep.OK, rep.Strict, tc.verdict)
		}
		sum := summary(t, rep)
		if !strings.Contains(sum, tc.line+"\n") {
			t.Errorf("strict %v: summary does not end with %q:\n%s", tc.strict, tc.line, sum)
		}
		baseline := Render(t, func(b *bytes.Buffer) error { return rep.WriteBaseline(b) })
		if got := strings.Contains(baseline, "- id: ACP-EXIT-1\n"); got != tc.inBaseline {
			t.Errorf("strict %v: baseline lists ACP-EXIT-1: %v, want %v:\n%s", tc.strict, got, tc.inBaseline, baseline)
		}
	}
	// Under Strict a baselined SHOULD failure passes, as a MUST one does.
	rep := JudgeStrict(t, "fake-slow-exit", true, ExpectedFailure{ID: "ACP-EXIT-1", Reason: "exits late"})
	if rep.Verdict != VerdictPass {
		t.Errorf("strict with the SHOULD failure baselined: %s, want PASS", rep.Verdict)
	}
}

// The JSON report names the tool, the catalogue, the agent (its
// initialize answer's agentInfo) and the run's start, durations in ms.
func TestJSONReportSaysWhatJudgedWhat(t *testing.T) {
	t.Parallel()
	rep := JudgeStrict(t, "reference", false)
	var got struct {
		ToolVersion      *string
		CatalogueVersion *int
		AgentInfo        *AgentInfo
		Started          *time.Time
		DurationMs       *float64
		Strict           *bool
		Cases            []struct{ DurationMs, StartupMs *float64 }
	}
	if err := json.Unmarshal([]byte(Render(t, func(b *bytes.Buffer) error { return rep.WriteJSON(b) })), &got); err != nil {
		t.Fatal(err)
	}
	switch {
	case got.ToolVersion == nil || *got.ToolVersion != buildinfo.Version():
		t.Errorf("toolVersion %v, want %q", got.ToolVersion, buildinfo.Version())
	case got.CatalogueVersion == nil || *got.CatalogueVersion != CatalogueVersion:
		t.Errorf("catalogueVersion %v, want %d", got.CatalogueVersion, CatalogueVersion)
	case got.AgentInfo == nil || *got.AgentInfo != (AgentInfo{Name: "todoharness", Version: "0.1.0"}):
		t.Errorf("agentInfo %+v, want the reference agent's initialize answer", got.AgentInfo)
	case got.Started == nil || !got.Started.Equal(SavedRun(t, "reference")[0].Run.Started):
		t.Errorf("started %v, want the run's start", got.Started)
	case got.DurationMs == nil || *got.DurationMs <= 0 || got.Strict == nil:
		t.Errorf("durationMs %v, strict %v", got.DurationMs, got.Strict)
	case len(got.Cases) == 0 || got.Cases[0].DurationMs == nil || got.Cases[0].StartupMs == nil:
		t.Errorf("cases without durationMs / startupMs")
	}
	if !strings.Contains(summary(t, rep), "\nagent info: todoharness 0.1.0 (its initialize answer)\n") {
		t.Errorf("the summary does not name the agent's own version:\n%s", summary(t, rep))
	}
}

func summary(t *testing.T, rep *Report) string {
	t.Helper()
	var b bytes.Buffer
	if err := report.WriteSummary(&b, rep, false); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// PASS only when every MUST check that applies was judged: a run narrowed
// to some cases is INCOMPLETE, says which MUST checks were not judged and
// why in one line, and lists the checks no selected case feeds on one line
// instead of a row each.
func TestVerdictIncompleteWhenMustChecksAreNotJudged(t *testing.T) {
	t.Parallel()
	full := JudgeSaved(t, "fake-ok", nil)
	if full.Verdict != VerdictPass || !full.OK {
		t.Fatalf("the full run: %s", full.Verdict)
	}
	rep := JudgeSaved(t, "fake-ok", nil, "probe", "plan-basic")
	if rep.Verdict != VerdictIncomplete || rep.OK {
		t.Fatalf("narrowed run: verdict %s, want INCOMPLETE", rep.Verdict)
	}
	for _, id := range []string{"TW-LOAD-1", "TW-LOAD-2", "TW-VALID-DUP", "TW-EMPTY-1"} {
		c, _ := rep.Check(id)
		if c.Outcome != NotRun || c.Reason != NoCaseFeeds || !slices.Contains(rep.NotJudged, id) {
			t.Errorf("%s: %s %q (not judged: %v)", id, c.Outcome, c.Reason, rep.NotJudged)
		}
	}
	s := summary(t, rep)
	for _, want := range []string{
		"\nNOT RUN (no selected case feeds them): ",
		"INCOMPLETE: MUST checks not judged: ",
		"TW-REJECT-KEEP-1, TW-LOAD-1, TW-LOAD-2 (no selected case feeds them)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("summary lacks %q:\n%s", want, s)
		}
	}
	if regexp.MustCompile(`(?m)^TW-LOAD-1\s`).MatchString(s) {
		t.Errorf("an unfed check has a row of its own:\n%s", s)
	}
	// A MUST check whose case did not complete is not judged either; the
	// run is then INCOMPLETE unless something failed.
	evs := SavedRun(t, "fake-ok")
	cut := *evs[1]
	cut.Interrupted = ""
	cut.NotRun = "not run: the first case could not get initialize answered"
	rep, err := Judge(append([]*Evidence{evs[0], &cut}, evs[2:]...), JudgeConfig{Checks: CapturedChecks(t), Validator: SharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict != VerdictIncomplete || len(rep.FailedIDs()) > 0 {
		t.Errorf("a case not run: verdict %s, failed %v", rep.Verdict, rep.FailedIDs())
	}
	if c, _ := rep.Check("TW-PLAN-1"); c.Outcome != NotRun || !strings.Contains(c.Reason, cut.Case.ID+": not run: the first case") {
		t.Errorf("TW-PLAN-1, fed by a case that was not run and by others that pass: %s %q", c.Outcome, c.Reason)
	}
}

// An expected failure is XFAIL: counted apart from failures in the
// footer, "xfail" in JSON, and the run passes.
func TestVerdictXFailIsNotAFailure(t *testing.T) {
	t.Parallel()
	rep := JudgeSaved(t, "bridge-wrong-counts", []ExpectedFailure{{ID: "TW-COUNTS-1", Reason: "we count differently"}})
	if c, _ := rep.Check("TW-COUNTS-1"); c.Outcome != XFail || c.Expected != "we count differently" {
		t.Errorf("TW-COUNTS-1: %s %q", c.Outcome, c.Expected)
	}
	if rep.Verdict != VerdictPass {
		t.Errorf("verdict %s: %v", rep.Verdict, rep.Failing)
	}
	s := summary(t, rep)
	if !strings.Contains(s, " 1 fail, 1 xfail, 0 not run, ") || !regexp.MustCompile(`TW-COUNTS-1\s+MUST\s+XFAIL\s+expected: we count differently`).MatchString(s) {
		t.Errorf("summary:\n%s", s)
	}
	var b bytes.Buffer
	if err := rep.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"outcome": "xfail"`) || !strings.Contains(b.String(), `"verdict": "PASS"`) {
		t.Errorf("JSON report lacks the xfail outcome or the verdict")
	}
}

// writeTranscripts writes rep's folders under out (--out).
func writeTranscripts(t *testing.T, out string, rep *Report) {
	t.Helper()
	if err := report.WriteTranscripts(out, rep); err != nil {
		t.Fatal(err)
	}
}

// transcriptOf writes cr's transcript (rep's marks) and returns it.
func transcriptOf(t *testing.T, rep *Report, cr *CaseResult) []byte {
	t.Helper()
	dir := t.TempDir()
	if err := report.WriteTranscript(dir, rep, cr); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "transcript.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// The transcript marks the wire line a check failed on; the summary groups
// the failures that point at the same line as one root cause.
func TestDiagnosticsMarkLinesAndGroupRootCauses(t *testing.T) {
	t.Parallel()
	rep := JudgeSaved(t, "bridge-no-priority", nil)
	var cr *CaseResult
	for _, c := range rep.Cases {
		if c.ID == "plan-basic" {
			cr = c
		}
	}
	b := transcriptOf(t, rep, cr)
	mark := regexp.MustCompile(`(?m)^#(\d+) .*"sessionUpdate":"plan".*\n      \^\^\^ FAILED ACP-SCHEMA-1: invalid SessionNotification \(plan\): /update/entries/0: missing property 'priority'`)
	if !mark.Match(b) {
		t.Errorf("the transcript does not mark the plan line:\n%s", b)
	}
	if !strings.Contains(string(b), "^^^ FAILED TW-PLAN-PRIORITY-1: entry 1 has no priority") {
		t.Errorf("the transcript does not mark the line TW-PLAN-PRIORITY-1 failed on")
	}
	s := summary(t, rep)
	if !regexp.MustCompile(`Failures that share a root cause.*\n  ACP-SCHEMA-1, TW-PLAN-PRIORITY-1, TW-PLAN-PRIORITY-2: session/update plan at \S+ #\d+`).MatchString(s) {
		t.Errorf("the summary does not group the priority failures:\n%s", s)
	}
	s = summary(t, JudgeSaved(t, "fake-no-load", nil))
	if !strings.Contains(s, "  TW-LOAD-CAP-1, TW-LOAD-1, TW-LOAD-2: the answer to initialize at ") {
		t.Errorf("the summary does not group the load failures under the initialize answer:\n%s", s)
	}
	// A plan with status "done" for a call the agent refused: the schema's
	// failure and the checks the shown refusal breaks are one root cause.
	s = summary(t, JudgeSaved(t, "bridge-plan-on-reject", nil))
	if !regexp.MustCompile(`\n  ACP-SCHEMA-1, [^\n:]*TW-VALID-BADSTATUS, TW-REJECT-KEEP-1[^\n:]*: session/update plan at [^\n]*reject-bad-status #9`).MatchString(s) {
		t.Errorf("the summary does not group the failures of the plan with status done:\n%s", s)
	}
}

// The summary shows the first failure of a check in a case and the count
// of the others (the baseline matches them one by one:
// TestBaselineMatchesEachFailure).
func TestSummaryCountsTheFailuresOfACase(t *testing.T) {
	t.Parallel()
	s := summary(t, JudgeSaved(t, "bridge-wrong-counts", nil, "replace"))
	if !strings.Contains(s, "(+1 more failure(s) of this check in this case: see the JSON report)") {
		t.Errorf("the summary does not count the failures:\n%s", s)
	}
}

// A pass is carried by what the agent sent: on every saved run, no passing
// row says it saw nothing ("0 plan updates …, each a plan" was a PASS of
// ACP-PLAN-FALLBACK-1 on an agent that sent no plan at all).
func TestNoPassOnNothingSeen(t *testing.T) {
	t.Parallel()
	runs, err := filepath.Glob(filepath.Join("testdata", "evidence", "*.jsonl.gz"))
	if err != nil || len(runs) == 0 {
		t.Fatalf("no saved runs under testdata/evidence (%v)", err)
	}
	for _, run := range runs {
		name := strings.TrimSuffix(filepath.Base(run), ".jsonl.gz")
		rep, err := Judge(SavedRun(t, name), JudgeConfig{Validator: SharedValidator(t)})
		if err != nil {
			t.Fatal(name, err)
		}
		for _, c := range rep.Checks {
			if c.Outcome != Pass {
				continue
			}
			if seen := rep.PassSeen(c); regexp.MustCompile(`^(\d+ cases|[a-z0-9-]+): 0 `).MatchString(seen) {
				t.Errorf("%s: %s passes on nothing seen: %s", name, c.ID, seen)
			}
		}
	}
}
