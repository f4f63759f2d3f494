package report

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/internal/buildinfo"
	"github.com/todoharness/todoharness/internal/jsonx"
	"github.com/todoharness/todoharness/internal/termtext"
	"github.com/todoharness/todoharness/internal/textcut"
	"html/template"
	"io"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// The HTML report (conform --html, peers --html) is one self-contained
// file: its CSS and script are inline, and a Content-Security-Policy lets
// the page load nothing from anywhere. Everything the agent sent (wire
// lines, plan entries, stderr) goes through html/template and is shown as
// text, never as markup.

//go:embed html.tmpl
var reportHTMLTemplate string

// htmlTemplate parses the embedded template (once per write: no package
// state).
func htmlTemplate() (*template.Template, error) {
	t, err := template.New("report").Funcs(template.FuncMap{
		"lower": strings.ToLower,
		"show":  htmlShown,
	}).Parse(reportHTMLTemplate)
	if err != nil {
		return nil, fmt.Errorf("conformance: HTML report template: %w", err)
	}
	return t, nil
}

// htmlShown is v as the page shows it: a character the browser would act
// on rather than show (a bidirectional control such as U+202E, which
// reorders the rest of the line; a zero-width or control character; a
// byte that is not UTF-8) written visibly, as \u202e (termtext.Hidden),
// line breaks and tabs kept. Every value the page shows goes through it.
func htmlShown(v any) string {
	s, ok := v.(string)
	if !ok {
		return fmt.Sprint(v)
	}
	var b strings.Builder
	last := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || (r != '\n' && r != '\t' && termtext.Hidden(r)) {
			b.WriteString(s[last:i])
			b.WriteString(termtext.Visible(s[i : i+n]))
			last = i + n
		}
		i += n
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

// PeerResult is one agent of a peers run for the HTML report: its name
// and version, the verdict the peers table shows, and its report (nil
// when the catalogue did not run: it failed to install or start).
type PeerResult struct {
	Name, Version, Verdict string
	Report                 *conformance.Report
}

// WriteHTML writes the report as one self-contained HTML page: the
// verdict and counts, the checks table (filterable by outcome and level),
// every failure with its whole reason, and per case the ACP wire and the
// model journal side by side.
func WriteHTML(w io.Writer, r *conformance.Report) error {
	page := htmlPage{Title: "todoharness conformance: " + r.Agent, Generated: time.Now().UTC().Format(time.RFC3339)}
	page.Agents = []htmlAgent{htmlAgentOf(r, "", r.Agent, "")}
	return page.write(w)
}

// WritePeersHTML writes one page for a peers run: a matrix of agents ×
// checks, then each agent's report as WriteHTML draws it.
func WritePeersHTML(w io.Writer, peers []PeerResult) error {
	page := htmlPage{Title: "todoharness peers", Generated: time.Now().UTC().Format(time.RFC3339), Peers: true}
	var ids []string
	seen := map[string]bool{}
	for _, c := range conformance.Catalogue() {
		ids, seen[c.ID] = append(ids, c.ID), true
	}
	for _, p := range peers {
		if p.Report == nil {
			continue
		}
		for _, c := range p.Report.Checks {
			if !seen[c.ID] {
				ids, seen[c.ID] = append(ids, c.ID), true
			}
		}
	}
	page.MatrixIDs = ids
	for i, p := range peers {
		key := fmt.Sprintf("a%d-", i)
		name := strings.TrimSpace(p.Name + " " + p.Version)
		row := htmlMatrixRow{Name: name, Anchor: key + "agent", Verdict: p.Verdict}
		if p.Report == nil {
			row.Cells = make([]htmlCell, len(ids))
			for k := range row.Cells {
				row.Cells[k] = htmlCell{Outcome: "none", Symbol: "·", Title: ids[k] + ": not run (" + p.Verdict + ")"}
			}
			page.Agents = append(page.Agents, htmlAgent{Key: key, Name: name, Verdict: "NOT RUN", VerdictClass: "notrun", VerdictLine: p.Verdict})
		} else {
			by := map[string]conformance.CheckResult{}
			for _, c := range p.Report.Checks {
				by[c.ID] = c
			}
			for _, id := range ids {
				c, ok := by[id]
				if !ok {
					row.Cells = append(row.Cells, htmlCell{Outcome: "none", Symbol: "·", Title: id + ": not in this report"})
					continue
				}
				cell := htmlCell{Outcome: OutcomeClass(c), Symbol: outcomeSymbol(c), Title: id + ": " + outcomeLabel(c) + " — " + c.Reason}
				if failureShown(c) {
					cell.Href = "#" + key + "check-" + c.ID
				}
				row.Cells = append(row.Cells, cell)
			}
			page.Agents = append(page.Agents, htmlAgentOf(p.Report, key, name, p.Verdict))
		}
		page.Matrix = append(page.Matrix, row)
	}
	return page.write(w)
}

func (p *htmlPage) write(w io.Writer) error {
	t, err := htmlTemplate()
	if err != nil {
		return err
	}
	if err := t.Execute(w, p); err != nil {
		return fmt.Errorf("conformance: write HTML report: %w", err)
	}
	return nil
}

// htmlPage is what the template draws.
type htmlPage struct {
	Title, Generated string
	Peers            bool
	MatrixIDs        []string
	Matrix           []htmlMatrixRow
	Agents           []htmlAgent
}

type htmlMatrixRow struct {
	Name, Anchor, Verdict string
	Cells                 []htmlCell
}

type htmlCell struct {
	Outcome, Symbol, Title, Href string
}

// htmlAgent is one agent's report. Key prefixes every anchor of it (""
// on a conform page, "aN-" on a peers page).
type htmlAgent struct {
	Key, Name                          string
	Verdict, VerdictClass, VerdictLine string
	// Note is what the run says before any check (Report.Note): every
	// well-formed call refused, say.
	Note             string
	Info             []htmlKV
	Counts           []htmlCount
	Outcomes, Levels []string
	Checks           []htmlCheck
	Roots            []htmlRoot
	Failures         []htmlFailure
	Cases            []htmlCase
}

type htmlKV struct{ K, V string }

type htmlCount struct {
	Label, Class string
	N            int
}

type htmlCheck struct {
	ID, Level, Outcome, Class, Title, Reason, Href string
}

type htmlRoot struct {
	Checks []string
	What   string
	Where  []htmlLink
}

type htmlLink struct{ Href, Label, Note string }

type htmlFailure struct {
	Anchor, ID, Level, Outcome, Class, Title, Spec, Source, Expected string
	Stale, FailsRun                                                  bool
	Items                                                            []htmlFailItem
	Runs                                                             []conformance.RunOutcome
}

type htmlFailItem struct {
	// NotRunAgain is CaseVerdict.NotRunAgain.
	Case, Reason, NotRunAgain string
	Expected                  bool
	CaseHref                  string
	Evidence                  []htmlLink
}

type htmlCase struct {
	Anchor, ID, Title, Status, Error string
	// Rerun is the command that runs the case again; Script the case as
	// the run had it (JSON).
	Rerun, Script string
	Time          string
	Run           int
	Completed     bool
	Failed        []string
	Flaky         []string
	Steps         []string
	Rows          []htmlRow
	Stderr        []htmlKV

	// NotReached is CaseResult.NotReached; Pool CaseResult.Pool.
	NotReached, Pool string
}

// htmlRow is one row of a case's timeline: a wire message (left) or a
// model request (right).
type htmlRow struct {
	At   string
	Wire *htmlWire
	Req  *htmlReq
}

type htmlWire struct {
	Anchor, Arrow, What, Line, Problem string
	Seq, Proc                          int
	Received, Late                     bool
	Marks                              []string
	Plan                               *conformance.PlanView
}

type htmlReq struct {
	N, Turn           int
	Wire, Path, Error string
	Side              bool
	Tools             string
	Results, Answer   []string
	Marks             []string
	// Missing are the lists of the calls this request's answer made that
	// no plan update showed, drawn as the checklists the client should
	// have got.
	Missing []*conformance.PlanView
}

// htmlAgentOf builds one agent's view of the report.
func htmlAgentOf(r *conformance.Report, key, name, verdictNote string) htmlAgent {
	a := htmlAgent{Key: key, Name: name, Verdict: r.Verdict, VerdictClass: strings.ToLower(r.Verdict),
		VerdictLine: strings.TrimPrefix(VerdictLine(r), r.Verdict+": ")}
	if verdictNote != "" && verdictNote != r.Verdict {
		a.VerdictLine = verdictNote
	}
	a.Note = r.Note
	a.Info = htmlInfo(r)
	a.addChecks(r)
	caseAnchor := caseAnchors(r, key)
	a.addRoots(r, caseAnchor)
	a.addFailures(r, caseAnchor)
	a.addCases(r)
	return a
}

// htmlInfo is what the report says of the run: the agent, its dialect
// and policy, the cases, the tool.
func htmlInfo(r *conformance.Report) []htmlKV {
	var info []htmlKV
	info = append(info, htmlKV{"agent", r.Agent})
	if r.AgentInfo != nil {
		info = append(info, htmlKV{"agent info", r.AgentInfo.String() + " (its initialize answer)"})
	}
	info = append(info, htmlKV{"dialect", r.Dialect + " (" + r.DialectSource + ")"})
	info = append(info, htmlKV{"ACP protocol version", r.Protocol.String()})
	if r.Policy != "" {
		info = append(info, htmlKV{"policy", r.Policy + " (" + r.PolicySource + ")"})
	}
	if len(r.Wires) > 0 {
		info = append(info, htmlKV{"model API", strings.Join(r.Wires, ", ")})
	}
	if r.Repeat > 1 {
		info = append(info, htmlKV{"runs", fmt.Sprintf("every case %d times", r.Repeat)})
	}
	info = append(info, htmlKV{"pool", PoolLine(r)})
	info = append(info,
		htmlKV{"cases", fmt.Sprintf("%d in %.2fs (parallel %d)", len(r.Cases), r.Duration.Seconds(), r.Parallel)},
		htmlKV{"todoharness", fmt.Sprintf("%s, catalogue version %d", r.ToolVersion, r.CatalogueVersion)})
	if r.Strict {
		info = append(info, htmlKV{"strict", "a failed SHOULD check fails the run"})
	}
	return append(info, htmlEnv(r)...)
}

// htmlEnv is the environment of the run, as far as the report knows it:
// the flags it ran with, the variables added to the agent's environment
// (names only: a value may be a secret), the agent's command line, its
// working folder and initialize answer, and where the page was written.
func htmlEnv(r *conformance.Report) []htmlKV {
	flags := fmt.Sprintf("--parallel %d --timeout %s", r.Parallel, r.Timeout)
	if r.Repeat > 1 {
		flags += fmt.Sprintf(" --repeat %d", r.Repeat)
	}
	if r.Strict {
		flags += " --strict"
	}
	if r.Pool != conformance.PoolOn {
		flags += " --pool off"
	}
	env := []htmlKV{{"flags", flags + dialectFlags(r)}}
	var ev *conformance.Evidence
	for _, cr := range r.Cases {
		if ev = cr.Evidence(); ev != nil {
			break
		}
	}
	if ev != nil {
		names := "none recorded"
		if len(ev.Run.Env) > 0 {
			names = strings.Join(ev.Run.Env, ", ") + " (names only: a value may be a secret)"
		}
		env = append(env, htmlKV{"agent environment", names})
		if len(ev.Procs) > 0 {
			p := ev.Procs[0]
			env = append(env, htmlKV{"agent command", textcut.Truncate(strings.Join(p.Argv, " "), htmlTextShown)})
			if len(p.Init) > 0 {
				env = append(env, htmlKV{"initialize answer", textcut.Truncate(string(p.Init), htmlTextShown)})
			}
		}
		if ev.Cwd != "" {
			env = append(env, htmlKV{"working folder", ev.Cwd + " (one per case; HOME " + ev.Home + ")"})
		}
	}
	return append(env, htmlKV{"written by", fmt.Sprintf("todoharness %s (%s, %s/%s)", buildinfo.Version(), runtime.Version(), runtime.GOOS, runtime.GOARCH)})
}

// dialectFlags are the --dialect and --policy flags that pin what the
// run chose ("" for what it detected or defaulted).
func dialectFlags(r *conformance.Report) string {
	s := ""
	if r.DialectSource == "forced" {
		s += " --dialect " + r.Dialect
	}
	if r.Policy != "" && strings.HasPrefix(r.PolicySource, "--policy") {
		s += " --policy " + r.Policy
	}
	return s
}

// rerunCommand is the command line that runs case cr of r again against
// the same agent (add the run's --env, --file and, for a case of a
// folder, --cases flags: the environment panel names the variables).
func rerunCommand(r *conformance.Report, cr *conformance.CaseResult) string {
	cmd := "todoharness conform --agent " + shellQuote(r.Agent) + " --case " + shellQuote(cr.ID) + dialectFlags(r)
	if r.Strict {
		cmd += " --strict"
	}
	return cmd
}

// shellQuote quotes s for a POSIX shell (as is when it needs nothing).
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,@+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// addChecks adds the checks table, its counts by outcome and the levels
// it has.
func (a *htmlAgent) addChecks(r *conformance.Report) {
	counts := map[string]int{}
	levels := map[string]bool{}
	for _, c := range r.Checks {
		cls := OutcomeClass(c)
		counts[cls]++
		levels[string(c.Level)] = true
		hc := htmlCheck{ID: c.ID, Level: string(c.Level), Outcome: outcomeLabel(c), Class: cls, Title: c.Title, Reason: c.Reason}
		switch {
		case c.Stale:
			hc.Reason = "a baseline entry (" + c.Expected + ") matches no failure: remove it from the baseline"
		case c.Outcome == conformance.XFail:
			hc.Reason = "expected: " + c.Expected + " — " + c.Reason
		case c.Outcome == conformance.Pass:
			hc.Reason = r.PassSeen(c)
		}
		if failureShown(c) {
			hc.Href = "#" + a.Key + "check-" + c.ID
		}
		// The table's reason is short; the whole one is in the check's
		// section among the failures (its ID links there).
		hc.Reason = CutReason(hc.Reason, tableReasonShown)
		a.Checks = append(a.Checks, hc)
	}
	for _, o := range []struct{ label, class string }{{"pass", "pass"}, {"fail", "fail"}, {"xfail", "xfail"}, {"flaky", "flaky"}, {"stale", "stale"}, {"not run", "notrun"}, {"n/a", "na"}} {
		if counts[o.class] > 0 || o.class == "pass" || o.class == "fail" {
			a.Counts = append(a.Counts, htmlCount{Label: o.label, Class: o.class, N: counts[o.class]})
			a.Outcomes = append(a.Outcomes, o.class)
		}
	}
	for _, l := range []conformance.Level{conformance.MUST, conformance.SHOULD, conformance.INFO} {
		if levels[string(l)] {
			a.Levels = append(a.Levels, string(l))
		}
	}

}

// tableReasonShown bounds a reason in the checks table (CutReason).
const tableReasonShown = 300

// caseAnchors is the anchor of each case's first run, by case ID.
func caseAnchors(r *conformance.Report, key string) map[string]string {
	caseAnchor := map[string]string{} // case ID -> anchor of its first run
	for i, name := range FolderNames(r) {
		cr, anchor := r.Cases[i], key+"case-"+name
		if _, ok := caseAnchor[cr.ID]; !ok {
			caseAnchor[cr.ID] = anchor
		}
	}
	return caseAnchor
}

// addRoots adds the root causes, each linked to where it is.
func (a *htmlAgent) addRoots(r *conformance.Report, caseAnchor map[string]string) {
	for _, rc := range RootCauses(r) {
		hr := htmlRoot{Checks: rc.Checks, What: rc.What}
		for _, wh := range rc.Where {
			href := "#" + caseAnchor[wh.Case]
			if wh.Seq >= 0 {
				href += fmt.Sprintf("-L%d", wh.Seq)
			}
			hr.Where = append(hr.Where, htmlLink{Href: href, Label: wh.String()})
		}
		a.Roots = append(a.Roots, hr)
	}
}

// addFailures adds a section per check with a failure shown.
func (a *htmlAgent) addFailures(r *conformance.Report, caseAnchor map[string]string) {
	for _, c := range r.Checks {
		if !failureShown(c) {
			continue
		}
		f := htmlFailure{Anchor: a.Key + "check-" + c.ID, ID: c.ID, Level: string(c.Level), Outcome: outcomeLabel(c), Class: OutcomeClass(c),
			Title: c.Title, Spec: c.Spec, Source: c.Source, Expected: c.Expected, Stale: c.Stale, FailsRun: r.FailsRun(c)}
		if c.Outcome == conformance.Flaky {
			f.Runs = c.Runs
		}
		for _, cv := range c.Cases {
			// A flaky case of a pooled run (no runs of --repeat to show):
			// failed as a session of a pooled process, passed alone.
			flakyCase := cv.Outcome == conformance.Flaky && len(c.Runs) == 0
			if cv.Outcome != conformance.Fail && cv.Outcome != conformance.XFail && !flakyCase {
				continue
			}
			it := htmlFailItem{Case: cv.Case, Reason: cv.Reason, NotRunAgain: cv.NotRunAgain(), Expected: cv.Outcome == conformance.XFail, CaseHref: "#" + caseAnchor[cv.Case]}
			seqs := make([]int, 0, len(cv.Lines))
			for s := range cv.Lines {
				seqs = append(seqs, s)
			}
			sort.Ints(seqs)
			for _, s := range seqs {
				it.Evidence = append(it.Evidence, htmlLink{Href: fmt.Sprintf("#%s-L%d", caseAnchor[cv.Case], s), Label: fmt.Sprintf("wire line #%d", s), Note: cv.Lines[s]})
			}
			f.Items = append(f.Items, it)
		}
		a.Failures = append(a.Failures, f)
	}
}

// addCases adds every case, marked flaky for the flaky checks it failed
// in some run.
func (a *htmlAgent) addCases(r *conformance.Report) {
	flaky := map[string]bool{}
	for _, id := range r.Flaky {
		flaky[id] = true
	}
	for _, c := range r.Checks {
		if c.Outcome == conformance.Flaky {
			flaky[c.ID] = true
		}
	}
	// A case is marked flaky for the flaky checks it failed in some run.
	flakyOn := map[string][]string{}
	for _, cr := range r.Cases {
		for _, id := range cr.Failed {
			if flaky[id] && !slices.Contains(flakyOn[cr.ID], id) {
				flakyOn[cr.ID] = append(flakyOn[cr.ID], id)
			}
		}
	}
	names := FolderNames(r) // one anchor a case, as one folder a case
	for i, cr := range r.Cases {
		hc := htmlCaseOf(cr, a.Key+"case-"+names[i], RequestMarks(r, cr))
		hc.Rerun = rerunCommand(r, cr)
		hc.Flaky = flakyOn[cr.ID]
		sort.Strings(hc.Flaky)
		a.Cases = append(a.Cases, hc)
	}
}

// failureShown reports whether check c gets a section of its own among
// the failures.
func failureShown(c conformance.CheckResult) bool {
	return c.Outcome == conformance.Fail || c.Outcome == conformance.XFail || c.Outcome == conformance.Flaky || c.Stale
}

func outcomeLabel(c conformance.CheckResult) string {
	if c.Stale {
		return "STALE"
	}
	return strings.ToUpper(string(c.Outcome))
}

func outcomeSymbol(c conformance.CheckResult) string {
	switch OutcomeClass(c) {
	case "pass":
		return "✓"
	case "fail":
		return "✗"
	case "xfail":
		return "x"
	case "flaky":
		return "~"
	case "stale":
		return "!"
	case "na":
		return "–"
	}
	return "·"
}

// htmlCaseOf draws one case: its status, steps, and the timeline of the
// ACP wire beside the model journal in arrival order.
func htmlCaseOf(cr *conformance.CaseResult, anchor string, reqMarks map[int][]string) htmlCase {
	hc := htmlCase{Anchor: anchor, ID: cr.ID, Title: cr.Title, Run: cr.Run, Completed: cr.Completed, Error: cr.Error, NotReached: cr.NotReached, Failed: cr.Failed, Pool: cr.Pool}
	hc.Time = fmt.Sprintf("%.2fs: agent %.2fs, waiting %.2fs", cr.Duration.Seconds(), cr.Agent.Seconds(), cr.Waiting.Seconds())
	switch {
	case !cr.Completed:
		hc.Status = "did not complete"
	case len(cr.Failed) > 0:
		hc.Status = "failed " + strings.Join(cr.Failed, ", ")
	default:
		hc.Status = "no check failed"
	}
	ev := cr.Evidence()
	if ev == nil {
		return hc
	}
	hc.addSteps(ev)
	tl := timeline{shown: htmlCaseShown}
	if ev.Case != nil {
		if b, err := jsonx.MarshalIndent(ev.Case); err == nil {
			hc.Script = tl.cut(string(b), "the whole case is in evidence.json under --out")
		}
	}
	tl.addWire(ev, hc.Anchor, cr.LineMarks())
	tl.addRequests(ev, reqMarks)
	for i, kv := range hc.Stderr {
		hc.Stderr[i].V = tl.cut(kv.V, "the whole stderr is in stderr-N.txt and evidence.json under --out")
	}
	rows, times := tl.rows, tl.times
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return times[idx[a]].Before(times[idx[b]]) })
	for _, i := range idx {
		hc.Rows = append(hc.Rows, rows[i])
	}
	return hc
}

// addSteps adds the case's steps and each process's stderr.
func (hc *htmlCase) addSteps(ev *conformance.Evidence) {
	for _, s := range ev.Steps {
		line := fmt.Sprintf("%d %s (process %d) %s", s.Index+1, s.Op, s.Proc+1, s.Duration.Round(time.Millisecond))
		if s.Error != "" {
			line += " ERROR " + s.Error
		}
		if s.Skipped != "" {
			line += " SKIPPED " + s.Skipped
		}
		if s.Settled != "" {
			line += fmt.Sprintf("; settled after %s: %s", s.Settle.Round(time.Millisecond), s.Settled)
		}
		hc.Steps = append(hc.Steps, textcut.Truncate(line, htmlTextShown))
	}
	for _, p := range ev.Procs {
		if p.Stderr != "" {
			name := fmt.Sprintf("process %d", p.Index+1)
			switch {
			case p.Loader != "":
				name += " (" + p.Pooled + ": " + p.Loader + ")"
			case p.PooledAlone:
				name += " (" + p.Pooled + ": started for this case, its only session while it ran; it served other cases after)"
			case p.Pooled != "":
				name += " (" + p.Pooled + ": shared with other cases)"
			}
			if p.Retired != "" {
				name += "; " + p.Retired
			}
			hc.Stderr = append(hc.Stderr, htmlKV{name, p.Stderr})
		}
	}
	if pf := ev.PooledFailure; pf != nil && pf.PooledStderr() != "" {
		hc.Stderr = append(hc.Stderr, htmlKV{"before the fresh run, as " + pf.Session + ", where it failed (shared with other cases)", pf.PooledStderr()})
	}
}

// timeline is a case's rows (wire messages and model requests) with the
// time of each, to sort them by; shown is what is left of the case's
// budget of text (htmlCaseShown).
type timeline struct {
	rows  []htmlRow
	times []time.Time
	shown int
}

// Bounds of the text the HTML report shows of a case (what the agent sent
// and the model was asked): a wire line, a tool result, a scripted
// answer, a stderr is shown up to htmlTextShown bytes; once a case has
// shown htmlCaseShown bytes, up to htmlTextSmall each; a plan's checklist
// up to htmlPlanShown items. The page says where the whole text is (the
// files --out writes): a case shows at most about htmlCaseShown plus
// htmlTextSmall per line of its wire (driver.MaxWireMsgs) and journal.
const (
	htmlTextShown = 8 << 10
	htmlTextSmall = 160
	htmlCaseShown = 1 << 20
	htmlPlanShown = 200
)

// cut is s as the page shows it: cut between characters to the bound the
// case's budget allows, saying how long it was and where the whole is.
func (tl *timeline) cut(s, where string) string {
	n := htmlTextShown
	if tl.shown <= 0 {
		n = htmlTextSmall
	}
	if len(s) <= n {
		tl.shown -= len(s)
		return s
	}
	kept := textcut.Prefix(s, n)
	tl.shown -= len(kept)
	return fmt.Sprintf("%s… [%d bytes in all, %d shown: %s]", kept, len(s), len(kept), where)
}

// cutPlan is plan view v with each list cut to htmlPlanShown items (v
// itself when both are shorter).
func cutPlan(v *conformance.PlanView) *conformance.PlanView {
	if v == nil || (len(v.Shown) <= htmlPlanShown && len(v.Expected) <= htmlPlanShown) {
		return v
	}
	c := *v
	var notes []string
	if c.Note != "" {
		notes = append(notes, c.Note)
	}
	for _, l := range []struct {
		name  string
		items *[]conformance.PlanItem
	}{{"shown", &c.Shown}, {"expected", &c.Expected}} {
		if n := len(*l.items); n > htmlPlanShown {
			*l.items = (*l.items)[:htmlPlanShown]
			notes = append(notes, fmt.Sprintf("the %s list has %d items: its first %d are drawn (the whole plan is its wire line, in wire.jsonl and evidence.json under --out)", l.name, n, htmlPlanShown))
		}
	}
	c.Note = strings.Join(notes, "; ")
	return &c
}

// addWire adds a row per wire message; anchor is the case's.
func (tl *timeline) addWire(ev *conformance.Evidence, anchor string, marks map[int][]string) {
	plans := ev.PlanViews()
	late := lateSeqs(ev)
	for _, m := range ev.Wire {
		hw := &htmlWire{Anchor: fmt.Sprintf("%s-L%d", anchor, m.Seq), Seq: m.Seq, Proc: m.Proc + 1, Received: m.Dir == driver.Received,
			Line: tl.cut(m.Line, "the whole line is in wire.jsonl and evidence.json under --out"),
			Late: late[m.Seq], Plan: cutPlan(plans[m.Seq]), Problem: textcut.Truncate(m.Problem, htmlTextSmall)}
		hw.Arrow = "→ agent"
		if hw.Received {
			hw.Arrow = "← agent"
		}
		switch {
		case m.Kind == driver.KindResponse:
			hw.What = "answer to " + m.ReplyTo
		case m.UpdateKind() != "":
			hw.What = m.Method + " " + m.UpdateKind()
		case m.Method != "":
			hw.What = m.Method
		default:
			hw.What = "not JSON-RPC"
		}
		if m.Capped {
			hw.Problem = "CAPPED: " + m.Problem
		}
		hw.Marks = append(hw.Marks, marks[m.Seq]...)
		sort.Strings(hw.Marks)
		tl.rows = append(tl.rows, htmlRow{At: fmt.Sprintf("%.3fs", m.At.Seconds()), Wire: hw})
		tl.times = append(tl.times, m.Time)
	}
}

// addRequests adds a row per model request, with the answer the script
// gave it.
func (tl *timeline) addRequests(ev *conformance.Evidence, reqMarks map[int][]string) {
	missing := ev.MissingPlans()
	for _, e := range ev.AllRequests() {
		hr := &htmlReq{N: e.Index + 1, Turn: e.TurnIndex + 1, Wire: e.Wire, Path: e.Path, Side: e.Side, Error: e.Error, Marks: reqMarks[e.Index]}
		var tools []string
		for _, t := range e.Tools {
			tools = append(tools, t.Name)
		}
		hr.Tools = strings.Join(tools, ", ")
		for k := len(e.Messages) - 1; k >= 0 && e.Messages[k].Role == "tool"; k-- {
			m := e.Messages[k]
			flag := ""
			if m.IsError {
				flag = " (isError)"
			}
			hr.Results = append([]string{tl.cut("result for "+m.ToolCallID+flag+": "+m.Text(), "the whole request is in journal.jsonl and evidence.json under --out")}, hr.Results...)
		}
		if ev.Case != nil && e.TurnIndex >= 0 && e.TurnIndex < len(ev.Case.Script) && !e.Side {
			t := ev.Case.Script[e.TurnIndex]
			if t.Text != "" {
				hr.Answer = append(hr.Answer, tl.cut("text: "+t.Text, "the whole script is the case's, in evidence.json under --out"))
			}
			for _, c := range t.ToolCalls {
				args := c.RawArguments
				if args == "" {
					b, _ := json.Marshal(c.Arguments)
					args = string(b)
				}
				s := "call " + c.Name + " " + args
				if c.Reject {
					s += " (the agent must refuse it)"
				}
				hr.Answer = append(hr.Answer, tl.cut(s, "the whole script is the case's, in evidence.json under --out"))
			}
		}
		if !e.Side {
			for _, mp := range missing {
				if mp.Turn == e.TurnIndex {
					hr.Missing = append(hr.Missing, cutPlan(mp.View))
				}
			}
		}
		at := ""
		if !ev.Started.IsZero() {
			at = fmt.Sprintf("%.3fs", e.Time.Sub(ev.Started).Seconds())
		}
		tl.rows = append(tl.rows, htmlRow{At: at, Req: hr})
		tl.times = append(tl.times, e.Time)
	}
}

// lateSeqs marks the updates the agent sent after it answered the
// request they belong to (after the prompt's or load's response, before
// the next request of the same process).
func lateSeqs(ev *conformance.Evidence) map[int]bool {
	type span struct{ req, resp, proc int }
	var spans []span
	for _, s := range ev.Steps {
		if s.ReqSeq >= 0 && s.RespSeq >= 0 && (s.Op == driver.OpPrompt || s.Op == driver.OpLoadSession) {
			spans = append(spans, span{s.ReqSeq, s.RespSeq, s.Proc})
		}
	}
	out := map[int]bool{}
	for _, m := range ev.Wire {
		if m.Dir != driver.Received || m.Kind != driver.KindNotification || m.Method != "session/update" {
			continue
		}
		var last *span
		for i := range spans {
			if spans[i].proc == m.Proc && spans[i].req < m.Seq {
				last = &spans[i]
			}
		}
		// A later request of the same process ends the span.
		if last == nil || m.Seq <= last.resp {
			continue
		}
		next := false
		for _, n := range ev.Wire {
			if n.Seq > last.req && n.Seq < m.Seq && n.Dir == driver.Sent && n.Proc == m.Proc && n.Kind != driver.KindResponse && n.Kind != driver.KindNotification {
				next = true
				break
			}
		}
		if !next {
			out[m.Seq] = true
		}
	}
	return out
}
