package conformance

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"
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
	// Protocol is the ACP protocol version offered and negotiated.
	Protocol Protocol `json:"protocol"`
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
	// Pool is PoolOn when the cases that need no fresh process ran as
	// sessions of pooled agent processes (RunInfo.Pool), else PoolOff.
	Pool string `json:"pool"`
	// With Pool on: PoolProcesses is how many pooled processes served
	// the PooledCases that are reported from their sessions, PoolRanAlone
	// how many cases failed there and are reported from a fresh run alone.
	// PoolFirstFailed are the pooled cases that failed as the first and
	// only session of a fresh pooled process: they ran alone in a fresh
	// process, and are reported from that session with no re-run.
	PoolProcesses   int      `json:"poolProcesses,omitempty"`
	PooledCases     int      `json:"pooledCases,omitempty"`
	PoolRanAlone    int      `json:"poolRanAlone,omitempty"`
	PoolFirstFailed []string `json:"poolFirstFailed,omitempty"`
	// RerunPooled is, with Pool on, what became of a case that failed as
	// a session of a pooled process (RunInfo.RerunPooled): RerunKnown or
	// RerunEvery. PoolKnown are the pooled cases not run again alone
	// (RerunKnown, or an exploration's known failures): each failure they
	// showed there a case of the run had confirmed alone in a fresh
	// process; they are reported from their pooled session.
	RerunPooled string   `json:"rerunPooled,omitempty"`
	PoolKnown   []string `json:"poolKnown,omitempty"`
	// CPUMs is the CPU time (user and system) the run used: the runner's
	// process and every agent process it started (each ended by the
	// report), judging included; CPUPerCaseMs its share of a case (of
	// Cases). Both absent where the CPU time is not read (not on Unix, a
	// report judged from saved evidence).
	CPUMs        int64   `json:"cpuMs,omitempty"`
	CPUPerCaseMs float64 `json:"cpuPerCaseMs,omitempty"`
	// Floor is what one session cost a warm pooled process, from the
	// cases' evidence, and the CPU a case next to it.
	Floor

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
	// Note is what the run says before any check ("" for nothing): that
	// the agent refused every well-formed todo call, say.
	Note string `json:"note,omitempty"`
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
	// ConfirmedBy, on a failure seen as a session of a pooled process and
	// not run again alone (Config.RerunPooled), names the case of the run
	// that had confirmed the same failure alone in a fresh process.
	ConfirmedBy string `json:"confirmedBy,omitempty"`

	// incomplete: not run because the case did not run to its end.
	incomplete bool
	// withheld: not judged as the run judged it elsewhere (verdict.withheld).
	withheld bool
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
	// the agent: the settles after its answers (for late updates), its
	// exit after stdin closed, and the wait for the dialect the first case
	// detects (Evidence.ScriptWait); Agent is the rest. In JSON: waitingMs and
	// agentMs.
	Waiting   time.Duration `json:"-"`
	Agent     time.Duration `json:"-"`
	Completed bool          `json:"completed"`
	// Error says why the case did not complete.
	Error string `json:"error,omitempty"`
	// NotReached says the run never reached the step the case exists
	// for (Case.KeyStep), and why: its cancel never sent, its load never
	// sent, the case stopped before it.
	NotReached string   `json:"notReached,omitempty"`
	StderrTail []string `json:"stderrTail,omitempty"`
	// Failed lists the checks that failed on this case.
	Failed []string `json:"failed,omitempty"`
	// Pool says how the case ran when the pool had a part in it: the
	// pooled process it was a session of, and whether it was that fresh
	// process's first and only session (a failure then needs no re-run),
	// or failed there and is reported from a run alone ("": a process of
	// its own).
	Pool string `json:"pool,omitempty"`
	// Transcript is the folder report.WriteTranscripts wrote for this
	// case (the --out folder's).
	Transcript string `json:"transcript,omitempty"`
	// Plans says which write each plan update of a prompt was tied to,
	// and why (the transcript marks them).
	Plans []PlanTie `json:"plans,omitempty"`

	// marks are the failed checks' notes on wire lines, by seq.
	marks map[int][]string
	// failures are every failure on this case, "ID: reason".
	failures []string

	ev *Evidence
	// beside are the other cases of the run that were sessions of its
	// pooled process.
	beside []*Evidence
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

// NotStarted is the first case whose agent never got going, when no case's
// did: every case that ran could not start its agent's first process, or
// saw it exit before answering initialize (Evidence.NotStarted), and the
// others were not run (the run stops at the first such case unless
// KeepGoing). The run could not start: its checks say nothing about the
// agent's todo list. Nil when an agent started, or the run was
// interrupted.
func (r *Report) NotStarted() *CaseResult {
	var first *CaseResult
	for _, c := range r.Cases {
		ev := c.Evidence()
		switch {
		case ev == nil || ev.Interrupted != "":
			return nil
		case ev.NotStarted != "":
			if first == nil {
				first = c
			}
		case ev.NotRun == "":
			return nil
		}
	}
	return first
}

// SafeID is the case's ID with every character but letters, digits, -
// and _ as _: its folder under --out and its anchor in the HTML report.
func (c *CaseResult) SafeID() string { return safeName(c.ID) }

// LineMarks are the failed checks' notes on the case's wire lines, by
// seq ("TW-PLAN-1: ..."), as the transcript marks them.
func (c *CaseResult) LineMarks() map[int][]string { return c.marks }

// Failures are every failure on the case, "ID: reason".
func (c *CaseResult) Failures() []string { return c.failures }

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

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("conformance: write JSON report: %w", err)
	}
	return nil
}
