package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/todoharness/todoharness/internal/safefile"
	"github.com/todoharness/todoharness/mockmodel"
)

// Report is the verdict of a run.
type Report struct {
	// ToolVersion is the version of the todoharness that judged the run
	// (buildinfo.Version); CatalogueVersion the catalogue's.
	ToolVersion      string `json:"toolVersion"`
	CatalogueVersion int    `json:"catalogueVersion"`
	Agent            string `json:"agent"`
	// AgentInfo is the agent's own name and version, from its initialize
	// answer (nil when it gave none).
	AgentInfo *AgentInfo `json:"agentInfo,omitempty"`
	// Dialect is the dialect the cases were run in; DialectSource says
	// whether it was detected, forced or defaulted; ToolsOffered lists the
	// tools the agent offered the model in the probe case.
	Dialect       string   `json:"dialect"`
	DialectSource string   `json:"dialectSource"`
	ToolsOffered  []string `json:"toolsOffered,omitempty"`
	// Policy is the in_progress policy TW-VALID-TWOACTIVE was judged
	// under (single or parallel); PolicySource says why (configured, or
	// read from the agent's tool description under --policy auto).
	Policy       string `json:"policy"`
	PolicySource string `json:"policySource"`
	// Wires are the model APIs the agent used (mockmodel.Wire*), in order
	// of first use.
	Wires []string `json:"wires,omitempty"`
	// Strict: a failed SHOULD check fails the run too (--strict).
	Strict bool `json:"strict"`
	// Started is when the run started. Duration and Timeout are in the
	// JSON report as durationMs and timeoutMs (milliseconds).
	Started  time.Time     `json:"started"`
	Duration time.Duration `json:"-"`
	Parallel int           `json:"parallel"`
	Timeout  time.Duration `json:"-"`

	Checks []CheckResult `json:"checks"`
	Cases  []*CaseResult `json:"cases"`
	// Repeat is how many times every case ran (Config.Repeat; 0 or 1:
	// once). Cases then lists every run's cases (CaseResult.Run).
	Repeat int `json:"repeat,omitempty"`

	// Verdict is PASS, FAIL, INCOMPLETE or INTERRUPTED (see VerdictPass
	// and the others); OK is true exactly when it is PASS: the exit status
	// is 0 exactly then.
	Verdict string `json:"verdict"`
	OK      bool   `json:"ok"`
	// Failing lists the checks that fail the run (the failed MUST checks,
	// and under Strict the failed SHOULD checks); Stale the baseline
	// entries that matched no failure; NotJudged the checks that must pass
	// (MUST; SHOULD too under Strict) that apply but could not be judged
	// (not run).
	Failing []string `json:"failing,omitempty"`
	Stale   []string `json:"stale,omitempty"`
	// Flaky lists the checks that must pass whose outcome differed between
	// runs (--repeat).
	Flaky     []string `json:"flaky,omitempty"`
	NotJudged []string `json:"notJudged,omitempty"`
	// Interrupted says why the run stopped before it finished ("" when it
	// did not).
	Interrupted string `json:"interrupted,omitempty"`
}

// AgentInfo is what the agent says it is in its initialize answer
// (agentInfo: name, version, title).
type AgentInfo struct {
	Name    string `json:"name"`
	Version string `json:"version,omitempty"`
	Title   string `json:"title,omitempty"`
}

// String is "name version".
func (a *AgentInfo) String() string {
	return strings.TrimSpace(a.Name + " " + a.Version)
}

// Required reports whether check c must pass for the run to pass: a MUST
// check, or a SHOULD check under Strict.
func (r *Report) Required(c Check) bool {
	return c.Level == MUST || (r.Strict && c.Level == SHOULD)
}

// FailsRun reports whether c's result fails the run: a required check
// that failed (not as expected) or was flaky, or a stale baseline entry.
func (r *Report) FailsRun(c CheckResult) bool {
	return c.Stale || ((c.Outcome == Fail || c.Outcome == Flaky) && r.Required(c.Check))
}

// CheckResult is one check's outcome over the cases that feed it.
type CheckResult struct {
	Check
	Outcome Outcome `json:"outcome"`
	// Reason is one line: the first failure (or why it was not run).
	Reason string        `json:"reason,omitempty"`
	Cases  []CaseVerdict `json:"cases,omitempty"`
	// Expected is the baseline's reason when an entry matched a failure.
	Expected string `json:"expected,omitempty"`
	// Stale: a baseline entry for the check matched no failure.
	Stale bool `json:"stale,omitempty"`
	// Runs is the check's outcome in each run when the cases ran several
	// times (Config.Repeat); they differ when Outcome is Flaky.
	Runs []RunOutcome `json:"runs,omitempty"`
}

// RunOutcome is a check's outcome in one run of the cases.
type RunOutcome struct {
	Run     int     `json:"run"`
	Outcome Outcome `json:"outcome"`
	Reason  string  `json:"reason,omitempty"`
}

// CaseVerdict is a check's outcome on one case.
type CaseVerdict struct {
	Case    string  `json:"case"`
	Outcome Outcome `json:"outcome"`
	Reason  string  `json:"reason,omitempty"`
	// Expected is the reason of the baseline entry that matched (XFail).
	Expected string `json:"expected,omitempty"`
	// Lines are the wire lines (by seq) the verdict points at, each with
	// what is wrong there (the transcript marks them).
	Lines map[int]string `json:"lines,omitempty"`
	// Failures are every failure of the check on the case (Reason is the
	// first one the baseline does not expect), each with the baseline's
	// reason when an entry matched it.
	Failures []Failure `json:"failures,omitempty"`

	// incomplete: not run because the case did not run to its end.
	incomplete bool
}

// CaseResult is one case as run.
type CaseResult struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	// Run is the run the case was part of (1, 2, ...) when the cases ran
	// several times, else 0.
	Run int `json:"run,omitempty"`
	// Duration is the case's wall time; Startup the first agent process's
	// start-up (process start to the initialize answer). In JSON:
	// durationMs and startupMs (milliseconds).
	Duration time.Duration `json:"-"`
	Startup  time.Duration `json:"-"`
	// Waiting is the part of Duration spent waiting with nothing asked of
	// the agent: the settles after its answers (for late updates) and its
	// exit after stdin closed; Agent is the rest. In JSON: waitingMs and
	// agentMs.
	Waiting   time.Duration `json:"-"`
	Agent     time.Duration `json:"-"`
	Completed bool          `json:"completed"`
	// Error says why the case did not complete.
	Error      string   `json:"error,omitempty"`
	StderrTail []string `json:"stderrTail,omitempty"`
	// Failed lists the checks that failed on this case.
	Failed []string `json:"failed,omitempty"`
	// Transcript is the folder written for this case under Config.Out.
	Transcript string `json:"transcript,omitempty"`
	// Plans says which write each plan update of a prompt was tied to,
	// and why (the transcript marks them).
	Plans []PlanTie `json:"plans,omitempty"`

	// marks are the failed checks' notes on wire lines, by seq; reqMarks
	// on model requests, by journal Index (see RequestMarks).
	marks    map[int][]string
	reqMarks map[int][]string
	// failures are every failure on this case, "ID: reason".
	failures []string

	ev *Evidence
}

// ms is d in milliseconds (fractions kept).
func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// MarshalJSON writes the report with its durations in milliseconds.
func (r *Report) MarshalJSON() ([]byte, error) {
	type plain Report
	return json.Marshal(struct {
		*plain
		DurationMs float64 `json:"durationMs"`
		TimeoutMs  float64 `json:"timeoutMs"`
	}{(*plain)(r), ms(r.Duration), ms(r.Timeout)})
}

// MarshalJSON writes the case with its durations in milliseconds.
func (c *CaseResult) MarshalJSON() ([]byte, error) {
	type plain CaseResult
	return json.Marshal(struct {
		*plain
		DurationMs float64 `json:"durationMs"`
		StartupMs  float64 `json:"startupMs"`
		AgentMs    float64 `json:"agentMs"`
		WaitingMs  float64 `json:"waitingMs"`
	}{(*plain)(c), ms(c.Duration), ms(c.Startup), ms(c.Agent), ms(c.Waiting)})
}

// Evidence returns what was observed while running the case.
func (c *CaseResult) Evidence() *Evidence { return c.ev }

// SafeID is the case's ID with every character but letters, digits, -
// and _ as _: its folder under --out and its anchor in the HTML report.
func (c *CaseResult) SafeID() string { return safeName(c.ID) }

// LineMarks are the failed checks' notes on the case's wire lines, by
// seq ("TW-PLAN-1: ..."), as the transcript marks them.
func (c *CaseResult) LineMarks() map[int][]string { return c.marks }

// FailedIDs returns the IDs of every failed check (any level), sorted.
func (r *Report) FailedIDs() []string {
	var out []string
	for _, c := range r.Checks {
		if c.Outcome == Fail {
			out = append(out, c.ID)
		}
	}
	sort.Strings(out)
	return out
}

// Check returns the result of check id.
func (r *Report) Check(id string) (CheckResult, bool) {
	for _, c := range r.Checks {
		if c.ID == id {
			return c, true
		}
	}
	return CheckResult{}, false
}

// WriteSummary writes the summary table and the verdict. The checks no
// selected case feeds share one line after the table.
func (r *Report) WriteSummary(w io.Writer) error { return r.WriteSummaryColor(w, false) }

// WriteSummaryColor is WriteSummary, with the outcomes and the verdict in
// colour when color is set (the command line sets it on a terminal, unless
// NO_COLOR is set).
func (r *Report) WriteSummaryColor(w io.Writer, color bool) error {
	paint := painter(color)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	// The header is painted too (in the terminal's own colour): every
	// cell of the column then carries the same bytes of codes.
	fmt.Fprintf(tw, "ID\tLEVEL\t%s\tREASON\n", paint("", "OUTCOME"))
	var unfed []string
	for _, c := range r.Checks {
		if c.Outcome == NotRun && c.Reason == NoCaseFeeds && !c.Stale {
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
		case c.Outcome == XFail:
			reason = "expected: " + c.Expected + " — " + reason
		case c.Outcome == Pass:
			reason = r.PassSeen(c)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.ID, c.Level, paint(OutcomeClass(c), outcome), CutReason(reason, 140))
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("conformance: write summary: %w", err)
	}
	if len(unfed) > 0 {
		fmt.Fprintf(w, "NOT RUN (no selected case feeds them): %s\n", strings.Join(unfed, ", "))
	}
	r.writeFailures(w)
	counts := map[Outcome]int{}
	for _, c := range r.Checks {
		counts[c.Outcome]++
	}
	fmt.Fprintf(w, "\nagent: %s\n", r.Agent)
	if r.AgentInfo != nil {
		fmt.Fprintf(w, "agent info: %s (its initialize answer)\n", r.AgentInfo)
	}
	fmt.Fprintf(w, "dialect: %s (%s)\n", r.Dialect, r.DialectSource)
	if r.Policy != "" {
		fmt.Fprintf(w, "policy: %s (%s)\n", r.Policy, r.PolicySource)
	}
	if len(r.Wires) > 0 {
		fmt.Fprintf(w, "model API: %s\n", strings.Join(r.Wires, ", "))
	}
	if r.Repeat > 1 {
		fmt.Fprintf(w, "runs: every case %d times; %d check(s) flaky (the outcome differed between runs)\n", r.Repeat, counts[Flaky])
	}
	fmt.Fprintf(w, "%d checks: %d pass, %d fail, %d xfail, %d not run, %d n/a; %d cases in %.2fs\n",
		len(r.Checks), counts[Pass], counts[Fail], counts[XFail], counts[NotRun], counts[NA], len(r.Cases), r.Duration.Seconds())
	if r.Strict {
		fmt.Fprintln(w, "strict: a failed SHOULD check fails the run")
	}
	_, err := fmt.Fprintln(w, paint(strings.ToLower(r.Verdict), r.VerdictLine()))
	return err
}

// VerdictLine is the last line of the summary: the verdict and why.
func (r *Report) VerdictLine() string {
	switch r.Verdict {
	case VerdictPass:
		if r.Strict {
			return "PASS: every MUST and SHOULD check passes"
		}
		return "PASS: every MUST check passes"
	case VerdictInterrupted:
		return "INTERRUPTED: " + r.Interrupted + "; the run stopped before it finished, nothing is blamed on the agent"
	case VerdictIncomplete:
		what := "MUST"
		if r.Strict {
			what = "MUST and SHOULD"
		}
		return "INCOMPLETE: " + what + " checks not judged: " + r.notJudgedWhy()
	}
	var why, must, should []string
	for _, id := range r.Failing {
		if c, _ := r.Check(id); c.Level == SHOULD {
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
	if len(r.Flaky) > 0 {
		why = append(why, "flaky (the outcome differed between runs): "+strings.Join(r.Flaky, ", "))
	}
	if len(r.Stale) > 0 {
		why = append(why, "stale expected failures: "+strings.Join(r.Stale, ", "))
	}
	return "FAIL: " + strings.Join(why, "; ")
}

// notJudgedWhy lists the MUST checks not judged, grouped by why.
func (r *Report) notJudgedWhy() string {
	var order []string
	byWhy := map[string][]string{}
	for _, id := range r.NotJudged {
		c, _ := r.Check(id)
		why := c.Reason
		if why == NoCaseFeeds {
			why = "no selected case feeds them"
		}
		if _, ok := byWhy[why]; !ok {
			order = append(order, why)
		}
		byWhy[why] = append(byWhy[why], id)
	}
	var parts []string
	for _, why := range order {
		parts = append(parts, strings.Join(byWhy[why], ", ")+" ("+oneLine(why, 120)+")")
	}
	return strings.Join(parts, "; ")
}

// RootCauses groups the failed checks that point at the same thing: the
// same wire line, or the same scripted call named in their reasons (a
// refusal the model did not see as one fails the refusal check and every
// check that then finds the call's list shown, replayed or in the history
// of the model's requests). Checks linked by a shared line or call are one
// root cause, named by the kind of line (or the call), with where. Only
// groups of two checks or more, in catalogue order.
func (r *Report) RootCauses() []RootCause {
	ids, at, keys := r.failureLinks()
	// Union-find over the checks, joined by the lines and calls they share.
	parent := make([]int, len(ids))
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	for _, l := range keys {
		for _, i := range at[l][1:] {
			parent[find(i)] = find(at[l][0])
		}
	}
	sort.Slice(keys, func(a, b int) bool {
		ka, kb := keys[a], keys[b]
		if ka.Case != kb.Case {
			return ka.Case < kb.Case
		}
		if (ka.Seq < 0) != (kb.Seq < 0) {
			return ka.Seq >= 0 // lines first, then calls
		}
		if ka.Seq != kb.Seq {
			return ka.Seq < kb.Seq
		}
		return ka.Call < kb.Call
	})
	var out []RootCause
	byRoot := map[int]int{}
	for i := range ids {
		root := find(i)
		k, ok := byRoot[root]
		if !ok {
			k = len(out)
			byRoot[root] = k
			out = append(out, RootCause{})
		}
		out[k].Checks = append(out[k].Checks, ids[i])
		if !ok {
			for _, l := range keys {
				if len(at[l]) > 1 && find(at[l][0]) == root {
					out[k].Where = append(out[k].Where, l)
				}
			}
			out[k].What = r.rootWhat(out[k].Where)
		}
	}
	kept := out[:0]
	for _, rc := range out {
		if len(rc.Checks) > 1 {
			kept = append(kept, rc)
		}
	}
	return kept
}

// failureLinks lists the checks that failed (ids) and the lines and
// calls their failures point at (keys, in order of first sight), each
// with the indexes in ids of the checks there.
func (r *Report) failureLinks() (ids []string, at map[RootAt][]int, keys []RootAt) {
	at = map[RootAt][]int{}
	for _, c := range r.Checks {
		i := -1
		for _, cv := range c.Cases {
			if cv.Outcome != Fail && cv.Outcome != XFail {
				continue
			}
			var here []RootAt
			for seq := range cv.Lines {
				here = append(here, RootAt{Case: cv.Case, Seq: seq})
			}
			for _, call := range r.callsNamed(cv.Case, cv.Reason) {
				here = append(here, RootAt{Case: cv.Case, Seq: -1, Call: call})
			}
			for _, l := range here {
				if i < 0 {
					i = len(ids)
					ids = append(ids, c.ID)
				}
				if _, ok := at[l]; !ok {
					keys = append(keys, l)
				}
				at[l] = append(at[l], i)
			}
		}
	}
	return ids, at, keys
}

// RootCause is failures of several checks that share a wire line or a
// scripted call.
type RootCause struct {
	Checks []string
	What   string   // the kind of line: "session/update plan"; or "the agent's verdict on a scripted call"
	Where  []RootAt // the lines first, then the calls
}

// RootAt is a wire line (Seq >= 0) or a scripted call (Seq -1, Call) of
// a case.
type RootAt struct {
	Case string
	Seq  int
	Call string
}

// String is "case #seq" or "case call_N".
func (a RootAt) String() string {
	if a.Seq >= 0 {
		return fmt.Sprintf("%s #%d", a.Case, a.Seq)
	}
	return a.Case + " " + a.Call
}

// rootWhat names what a root cause's failures share: the kind of its
// first wire line, else the call.
func (r *Report) rootWhat(where []RootAt) string {
	for _, a := range where {
		if a.Seq >= 0 {
			return r.lineWhat(a.Case, a.Seq)
		}
	}
	return "the agent's verdict on a scripted todo call (accepted or refused), and what followed from it"
}

// callsNamed are the scripted calls of case c that reason names (as a
// word: call_1 is not call_10).
func (r *Report) callsNamed(c, reason string) []string {
	var out []string
	for _, cr := range r.Cases {
		if cr.ID != c || cr.ev == nil {
			continue
		}
		for _, w := range cr.ev.Writes {
			if w.CallID != "" && containsWord(reason, w.CallID) && !slices.Contains(out, w.CallID) {
				out = append(out, w.CallID)
			}
		}
		break
	}
	return out
}

// containsWord reports whether word occurs in s with no letter, digit or
// underscore either side.
func containsWord(s, word string) bool {
	isWord := func(b byte) bool {
		return b == '_' || b >= '0' && b <= '9' || b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z'
	}
	for i := 0; ; {
		k := strings.Index(s[i:], word)
		if k < 0 {
			return false
		}
		k += i
		end := k + len(word)
		if (k == 0 || !isWord(s[k-1])) && (end == len(s) || !isWord(s[end])) {
			return true
		}
		i = k + 1
	}
}

// lineWhat names the kind of wire line seq of case c.
func (r *Report) lineWhat(c string, seq int) string {
	for _, cr := range r.Cases {
		if cr.ID != c || cr.ev == nil {
			continue
		}
		for _, m := range cr.ev.Wire {
			if m.Seq != seq {
				continue
			}
			switch {
			case m.Kind == KindResponse:
				return "the answer to " + m.ReplyTo
			case updateKind(m) != "":
				return m.Method + " " + updateKind(m)
			case m.Method != "":
				return m.Method
			}
			return "a line that is not JSON-RPC"
		}
	}
	return "a wire line"
}

// writeFailures writes the failures that share a root cause, then each
// failure with the clause it tests, so the table reads as a verdict clause
// by clause without opening the JSON report.
func (r *Report) writeFailures(w io.Writer) {
	if rcs := r.RootCauses(); len(rcs) > 0 {
		fmt.Fprintln(w, "\nFailures that share a root cause (the same wire line, see the transcript's FAILED marks; or the same scripted call):")
		for _, rc := range rcs {
			where := make([]string, len(rc.Where))
			for i, a := range rc.Where {
				where[i] = a.String()
			}
			fmt.Fprintf(w, "  %s: %s at %s\n", strings.Join(rc.Checks, ", "), rc.What, strings.Join(first(where, 4), ", "))
		}
	}
	first := true
	for _, c := range r.Checks {
		if c.Outcome != Fail && c.Outcome != XFail && c.Outcome != Flaky && !c.Stale {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nWhat the failing checks test:")
			first = false
		}
		fmt.Fprintf(w, "  %s (%s): %q\n      %s\n", c.ID, c.Level, oneLine(c.Spec, 300), c.Source)
		if c.Outcome == Flaky {
			for _, ro := range c.Runs {
				fmt.Fprintf(w, "      run %d: %s %s\n", ro.Run, ro.Outcome, oneLine(ro.Reason, len(ro.Reason)))
			}
			continue
		}
		for _, cv := range c.Cases {
			switch cv.Outcome {
			case Fail:
				fmt.Fprintf(w, "      case %s: %s%s\n", cv.Case, oneLine(cv.Reason, len(cv.Reason)), cv.more())
			case XFail:
				fmt.Fprintf(w, "      case %s (expected): %s\n", cv.Case, oneLine(cv.Reason, len(cv.Reason)))
			}
		}
	}
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("conformance: write JSON report: %w", err)
	}
	return nil
}

// WriteTranscripts writes a folder per case under dir holding its evidence
// (evidence.json, which `todoharness conform --judge DIR` judges again)
// and, for a case with a failed check or that did not complete, its
// transcript: transcript.txt (readable: steps, the ACP wire both ways, the
// model requests, stderr), wire.jsonl, journal.jsonl and stderr-N.txt.
func (r *Report) WriteTranscripts(dir string) error {
	for _, cr := range r.Cases {
		if cr.ev == nil {
			continue
		}
		name := safeName(cr.ID)
		if cr.Run > 0 {
			name += fmt.Sprintf("-run%d", cr.Run)
		}
		d, err := safefile.MkdirInside(dir, name)
		if err != nil {
			return fmt.Errorf("conformance: transcripts: %w", err)
		}
		ev := *cr.ev
		ev.PlanTies = cr.Plans // what the judge made of the plans, for readers
		if err := WriteEvidence(d, &ev); err != nil {
			return err
		}
		if cr.Completed && len(cr.Failed) == 0 {
			continue
		}
		cr.reqMarks = r.RequestMarks(cr)
		if err := writeTranscript(d, cr); err != nil {
			return err
		}
		cr.Transcript = d
	}
	return nil
}

func writeTranscript(d string, cr *CaseResult) error {
	ev := cr.ev
	var b strings.Builder
	transcriptHead(&b, cr)
	transcriptProcs(&b, ev)
	transcriptSteps(&b, ev)
	transcriptWire(&b, cr)
	transcriptRequests(&b, cr)
	for _, p := range ev.Procs {
		fmt.Fprintf(&b, "\n== stderr, process %d\n%s\n", p.Index+1, p.Stderr)
	}
	if err := safefile.WriteFile(filepath.Join(d, "transcript.txt"), []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("conformance: transcripts: %w", err)
	}
	if err := writeJSONL(filepath.Join(d, "wire.jsonl"), len(ev.Wire), func(i int) any { return ev.Wire[i] }); err != nil {
		return err
	}
	all := ev.allRequests()
	if err := writeJSONL(filepath.Join(d, "journal.jsonl"), len(all), func(i int) any { return all[i] }); err != nil {
		return err
	}
	for _, p := range ev.Procs {
		if err := safefile.WriteFile(filepath.Join(d, fmt.Sprintf("stderr-%d.txt", p.Index+1)), []byte(p.Stderr), 0o644); err != nil {
			return fmt.Errorf("conformance: transcripts: %w", err)
		}
	}
	return nil
}

// transcriptHead writes what the case is and what failed.
func transcriptHead(b *strings.Builder, cr *CaseResult) {
	ev := cr.ev
	fmt.Fprintf(b, "case %s: %s\nsource: %s\ndialect: %s\n", cr.ID, cr.Title, ev.Case.Source, ev.Dialect.Name)
	if ev.Aborted != "" {
		fmt.Fprintf(b, "DID NOT COMPLETE: %s\n", ev.Aborted)
	}
	if len(cr.Failed) > 0 {
		fmt.Fprintf(b, "failed checks: %s\n", strings.Join(cr.Failed, ", "))
		for _, f := range cr.failures {
			fmt.Fprintf(b, "  %s\n", f)
		}
	}
}

// transcriptProcs writes the agent's processes and their client requests.
func transcriptProcs(b *strings.Builder, ev *Evidence) {
	b.WriteString("\n== processes\n")
	for _, p := range ev.Procs {
		kind := "process"
		if p.InProcess {
			kind = "in-process agent"
		}
		fmt.Fprintf(b, "%s %d: %s\n  startup %s, %s, %s\n", kind, p.Index+1, strings.Join(p.Argv, " "), p.Startup.Round(time.Millisecond), p.Shutdown, p.Exit)
		for _, q := range p.ClientRequests {
			detail := ""
			if q.Detail != "" {
				detail = " " + q.Detail
			}
			fmt.Fprintf(b, "  client request %s%s -> %s\n", q.Method, detail, q.Answer)
		}
		for _, k := range p.Killed {
			fmt.Fprintf(b, "  left running, killed by the runner: %s\n", k)
		}
	}
}

// transcriptSteps writes the steps the runner took.
func transcriptSteps(b *strings.Builder, ev *Evidence) {
	b.WriteString("\n== steps\n")
	for _, s := range ev.Steps {
		fmt.Fprintf(b, "%d %s (process %d) %s", s.Index+1, s.Op, s.Proc+1, s.Duration.Round(time.Millisecond))
		if s.Error != "" {
			fmt.Fprintf(b, " ERROR %s", s.Error)
		}
		if s.Skipped != "" {
			fmt.Fprintf(b, " SKIPPED %s", s.Skipped)
		}
		if s.Settled != "" {
			fmt.Fprintf(b, "; settled after %s: %s", s.Settle.Round(time.Millisecond), s.Settled)
		}
		b.WriteString("\n")
	}
}

// transcriptWire writes the ACP wire, each line with its marks.
func transcriptWire(b *strings.Builder, cr *CaseResult) {
	b.WriteString("\n== ACP wire (> client to agent, < agent to client)\n")
	for _, m := range cr.ev.Wire {
		arrow := ">"
		if m.Dir == Received {
			arrow = "<"
		}
		capped := ""
		if m.Capped {
			capped = fmt.Sprintf(" […] CAPPED: %s", m.Problem)
		}
		fmt.Fprintf(b, "#%-4d p%d %8.3fs %s %s%s\n", m.Seq, m.Proc+1, m.At.Seconds(), arrow, m.Line, capped)
		notes := slices.Clone(cr.marks[m.Seq])
		sort.Strings(notes)
		for _, note := range notes {
			fmt.Fprintf(b, "      ^^^ FAILED %s\n", note)
		}
		if tie := cr.tieAt(m.Seq); tie != "" {
			fmt.Fprintf(b, "      ^^^ PLAN %s\n", tie)
		}
	}
}

// transcriptRequests writes the model's journal, each request with its
// marks.
func transcriptRequests(b *strings.Builder, cr *CaseResult) {
	b.WriteString("\n== model requests (journal; canonical form, whatever the wire)\n")
	for _, e := range cr.ev.allRequests() {
		for _, note := range cr.reqMarks[e.Index] {
			fmt.Fprintf(b, "vvv FAILED %s\n", note)
		}
		fmt.Fprintf(b, "request %d (turn %d) %s %s", e.Index+1, e.TurnIndex+1, e.Wire, e.Path)
		if e.Side {
			fmt.Fprintf(b, " SIDE REQUEST (no tools offered: answered %q, no script turn)", SideText)
		}
		if e.Error != "" {
			fmt.Fprintf(b, " REFUSED: %s", e.Error)
		}
		b.WriteString("\n")
		if e.RawCapped {
			fmt.Fprintf(b, "  BODY CAPPED: %d bytes, sha256 %s: only its first %d bytes were kept\n", e.RawBytes, e.RawSHA256, mockmodel.JournalBodyPrefix)
		}
		for _, c := range e.Capped {
			fmt.Fprintf(b, "  CAPPED: %s\n", c)
		}
		var tools []string
		for _, t := range e.Tools {
			tools = append(tools, t.Name)
		}
		fmt.Fprintf(b, "  tools: %s\n", strings.Join(tools, ", "))
		for _, m := range e.Messages {
			line := m.Text()
			for _, tc := range m.ToolCalls() {
				line += fmt.Sprintf(" [call %s %s %s]", tc.ID, tc.Name, tc.Arguments)
			}
			flag := ""
			if m.IsError {
				flag = " isError"
			}
			if m.ToolCallID != "" {
				flag += " for " + m.ToolCallID
			}
			fmt.Fprintf(b, "  %s%s: %s\n", m.Role, flag, oneLine(line, 400))
		}
	}
}

func writeJSONL(path string, n int, at func(int) any) error {
	var b strings.Builder
	for i := 0; i < n; i++ {
		line, err := json.Marshal(at(i))
		if err != nil {
			return fmt.Errorf("conformance: transcripts: %w", err)
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := safefile.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		return fmt.Errorf("conformance: transcripts: %w", err)
	}
	return nil
}
