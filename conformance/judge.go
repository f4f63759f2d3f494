package conformance

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// JudgeConfig is what a judgement needs besides the evidence.
type JudgeConfig struct {
	// Checks is the catalogue (nil: Catalogue()).
	Checks []Check
	// Expected lists known failures (see ReadExpectedFailures).
	Expected []ExpectedFailure
	// Validator checks messages against the ACP schema (nil: compile one).
	Validator *SchemaValidator
}

// Judge judges the evidence of a run's cases with a catalogue: every check
// on every case that feeds it, then the baseline. It is a pure function of
// its arguments, in the spirit of testing/fstest.TestFS: it starts nothing
// and reads nothing but the evidence, so a saved run (ReadEvidenceDir) is
// judged again with the current catalogue and baseline. Run is the drive
// (start the agent, run the steps, collect the evidence) followed by Judge.
// The error is set only for a bad configuration.
func Judge(evs []*Evidence, cfg JudgeConfig) (*Report, error) {
	if len(evs) == 0 {
		return nil, errors.New("conformance: judge: no evidence")
	}
	if cfg.Checks == nil {
		cfg.Checks = Catalogue()
	}
	if err := validateExpected(cfg.Expected, cfg.Checks); err != nil {
		return nil, err
	}
	v := cfg.Validator
	if v == nil {
		var err error
		if v, err = NewSchemaValidator(); err != nil {
			return nil, err
		}
	}
	info := evs[0].Run
	rep := &Report{Agent: info.Agent, Dialect: evs[0].Dialect.Name, DialectSource: info.DialectSource, ToolsOffered: info.ToolsOffered,
		Started: info.Started, Parallel: info.Parallel, Timeout: info.Timeout}
	var end time.Time
	for _, ev := range evs {
		if ev == nil || ev.Case == nil {
			return nil, errors.New("conformance: judge: evidence without its case")
		}
		if e := ev.Started.Add(ev.Duration); e.After(end) {
			end = e
		}
		rep.Cases = append(rep.Cases, caseResult(ev))
	}
	if !end.IsZero() && !info.Started.IsZero() {
		rep.Duration = end.Sub(info.Started)
	}
	rep.Wires = modelWires(evs)
	rep.Policy, rep.PolicySource = runPolicy(evs)
	d := evs[0].Dialect
	for _, c := range cfg.Checks {
		res := CheckResult{Check: c}
		if !c.AppliesTo(d.Name) {
			res.Outcome = NA
			res.Reason = fmt.Sprintf("applies to the %s dialect only; the agent speaks %s", strings.Join(c.Dialects, ", "), d.Name)
			rep.Checks = append(rep.Checks, res)
			continue
		}
		for _, cr := range rep.Cases {
			ev := judgeable(cr.ev, v)
			if !(c.Always || ev.Case.Feeds(c.ID)) {
				continue
			}
			vd := judgeCheck(ev, c)
			res.Cases = append(res.Cases, CaseVerdict{Case: cr.ID, Outcome: vd.Outcome, Reason: vd.Reason})
			if vd.Outcome == Fail {
				cr.Failed = append(cr.Failed, c.ID)
			}
		}
		res.Outcome, res.Reason = aggregate(res.Cases)
		rep.Checks = append(rep.Checks, res)
	}
	rep.applyExpected(cfg.Expected)
	return rep, nil
}

// judgeable is a copy of ev that the evaluations can read with validator v
// (the evidence itself is left as it was).
func judgeable(ev *Evidence, v *SchemaValidator) *Evidence {
	e := *ev
	e.validator = v
	return &e
}

// judgeCheck evaluates check c on one case's evidence.
func judgeCheck(ev *Evidence, c Check) verdict {
	if ev.Aborted != "" && !c.Always {
		return skipf("case %s did not complete (see RUN-1)", ev.Case.ID)
	}
	return c.eval(ev)
}

// caseFailures judges one case on its own (the progress line): the checks
// it feeds that fail on it.
func caseFailures(ev *Evidence, cat []Check, v *SchemaValidator) []string {
	ev = judgeable(ev, v)
	var out []string
	for _, c := range cat {
		if (c.Always || ev.Case.Feeds(c.ID)) && c.AppliesTo(ev.Dialect.Name) && judgeCheck(ev, c).Outcome == Fail {
			out = append(out, c.ID)
		}
	}
	return out
}

// caseResult is the report's row of a case, from its evidence.
func caseResult(ev *Evidence) *CaseResult {
	cr := &CaseResult{ID: ev.Case.ID, Title: ev.Case.Title, Duration: ev.Duration, Completed: ev.Aborted == "", Error: ev.Aborted, ev: ev}
	if len(ev.Procs) > 0 {
		cr.Startup = ev.Procs[0].Startup
		cr.StderrTail = lastLines(ev.Procs[len(ev.Procs)-1].Stderr, 10)
	}
	return cr
}

// aggregate: any failure fails; else any pass passes; else skip.
func aggregate(vs []CaseVerdict) (Outcome, string) {
	if len(vs) == 0 {
		return Skip, "no selected case feeds this check"
	}
	var fails []CaseVerdict
	passes := 0
	for _, v := range vs {
		switch v.Outcome {
		case Fail:
			fails = append(fails, v)
		case Pass:
			passes++
		}
	}
	if len(fails) > 0 {
		reason := fails[0].Case + ": " + fails[0].Reason
		if len(fails) > 1 {
			reason += fmt.Sprintf(" (and %d more case(s))", len(fails)-1)
		}
		return Fail, reason
	}
	if passes > 0 {
		return Pass, ""
	}
	return Skip, vs[0].Case + ": " + vs[0].Reason
}

// applyExpected marks expected failures and stale entries and sets OK.
func (r *Report) applyExpected(es []ExpectedFailure) {
	want := map[string]string{}
	for _, e := range es {
		want[e.ID] = e.Reason
	}
	r.Failing, r.Stale = nil, nil
	for i := range r.Checks {
		c := &r.Checks[i]
		reason, listed := want[c.ID]
		if listed {
			c.Expected = reason
			if c.Outcome == Pass {
				c.Stale = true
				r.Stale = append(r.Stale, c.ID)
			}
		}
		if c.Outcome == Fail && c.Level == MUST && !listed {
			r.Failing = append(r.Failing, c.ID)
		}
	}
	r.OK = len(r.Failing) == 0 && len(r.Stale) == 0
}
