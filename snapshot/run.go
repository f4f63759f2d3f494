package snapshot

import (
	"cmp"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/pmezard/go-difflib/difflib"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/driver/acpnorm"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/internal/safefile"
	"github.com/todoharness/todoharness/mockmodel"
	"github.com/todoharness/todoharness/scenario"
)

// Files of a scenario folder, in the original's layout.
const (
	SessionFile = "session.jsonl"
	// ExpectedFile is the expected stdout's name at the original's HEAD,
	// GoldenFile its name at the RFC commit; --update writes the one the
	// folder has (ExpectedFile when it has neither).
	ExpectedFile = "stdout.expected.jsonl"
	GoldenFile   = "stdout.golden.jsonl"
)

// Status is the verdict of one scenario.
type Status string

// Statuses.
const (
	Pass Status = "pass"
	Fail Status = "fail"
	// Error: the scenario could not run (bad folder, unreadable log, the
	// agent would not start); Reason says why.
	Error Status = "error"
	// Updated: --update wrote the expected file.
	Updated Status = "updated"
)

// Scenario is a loaded scenario folder.
type Scenario struct {
	Name string
	Dir  string
	// Steps are input.json's ACP steps.
	Steps []scenario.Step
	// Logs are session.jsonl, then session.1.jsonl, session.2.jsonl, …
	Logs []string
	// Expected is the expected stdout file ("" when the folder has none).
	Expected string
}

var reChildLog = regexp.MustCompile(`^session\.([0-9]+)\.jsonl$`)

// Folders expands the arguments of `snapshot run`: a scenario folder (one
// holding input.json) stands for itself, a folder of scenario folders for
// each of them in name order; anything else is kept, for Run to say why it
// is not a scenario.
func Folders(args []string) []string {
	var out []string
	for _, a := range args {
		if _, err := os.Stat(filepath.Join(a, scenario.InputFile)); err == nil {
			out = append(out, a)
			continue
		}
		if names, err := scenario.List(a); err == nil {
			for _, n := range names {
				out = append(out, filepath.Join(a, n))
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

// Load reads a scenario folder.
func Load(dir string) (*Scenario, error) {
	if fi, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("scenario %s: %w", dir, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("scenario %s: not a folder (a scenario is a folder holding %s)", dir, scenario.InputFile)
	}
	sc, err := scenario.Load(dir)
	if err != nil {
		return nil, err
	}
	s := &Scenario{Name: filepath.Base(filepath.Clean(dir)), Dir: dir, Steps: sc.Steps}
	parent := filepath.Join(dir, SessionFile)
	if _, err := os.Stat(parent); err != nil {
		return nil, fmt.Errorf("scenario %s: no %s to rebuild the model's answers from: %w", dir, SessionFile, err)
	}
	s.Logs = append(s.Logs, parent)
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("scenario %s: %w", dir, err)
	}
	type child struct {
		n    int
		path string
	}
	var children []child
	for _, e := range entries {
		if m := reChildLog.FindStringSubmatch(e.Name()); m != nil && !e.IsDir() {
			n, _ := strconv.Atoi(m[1])
			children = append(children, child{n, filepath.Join(dir, e.Name())})
		}
	}
	sort.Slice(children, func(i, j int) bool { return children[i].n < children[j].n })
	for _, c := range children {
		s.Logs = append(s.Logs, c.path)
	}
	for _, name := range []string{ExpectedFile, GoldenFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			s.Expected = filepath.Join(dir, name)
			break
		}
	}
	return s, nil
}

// MaxExpectedBytes is the largest expected stdout file Run reads.
const MaxExpectedBytes = 64 << 20

// Options configure Run.
type Options struct {
	// Agent is the agent under test.
	Agent driver.Target
	// Timeout bounds one scenario, agent start-up included (default 60s);
	// Grace is the shutdown grace (default driver.DefaultGrace).
	Timeout, Grace time.Duration
	// Model is offered to templates as {{.Model}} (default "mock").
	Model string
	// Update writes the normalised stdout as the expected file instead of
	// comparing.
	Update bool
	// TempDir is where working directories are made (default: the
	// system's); KeepDirs keeps them.
	TempDir  string
	KeepDirs bool
}

// Result is one scenario's verdict.
type Result struct {
	Name   string `json:"name"`
	Dir    string `json:"dir"`
	Status Status `json:"status"`
	// Reason says why the scenario failed or could not run.
	Reason string `json:"reason,omitempty"`
	// Diff is the unified diff from the expected stdout to the agent's
	// (both normalised, keys sorted), on a failure.
	Diff string `json:"diff,omitempty"`
	// Expected names the expected file compared with (or written).
	Expected string `json:"expected,omitempty"`
	// Stdout is the agent's normalised stdout, in wire key order.
	Stdout string `json:"-"`
	// Notes are what is worth a look beside the verdict: warnings of the
	// rebuild, model requests the logs had no answer for, steps answered
	// with an error, how the agent ended and its stderr tail on a failure.
	Notes    []string      `json:"notes,omitempty"`
	Duration time.Duration `json:"duration"`
}

// Run runs one scenario folder against the agent. It never returns an
// error: whatever went wrong is the result's Reason.
func Run(ctx context.Context, dir string, opts Options) *Result {
	start := time.Now()
	res := &Result{Name: filepath.Base(filepath.Clean(dir)), Dir: dir}
	defer func() { res.Duration = time.Since(start) }()
	sc, err := Load(dir)
	if err != nil {
		return res.fail(Error, "%v", err)
	}
	res.Name = sc.Name
	if sc.Expected == "" && !opts.Update {
		return res.fail(Error, "no %s or %s to compare with (--update writes %s)", ExpectedFile, GoldenFile, ExpectedFile)
	}
	res.Expected = sc.Expected
	if res.Expected == "" {
		res.Expected = filepath.Join(dir, ExpectedFile)
	}
	// The expected file is read before the agent runs: only a regular file
	// (never a FIFO, whose open would wait for a writer, nor a device).
	var want []byte
	if !opts.Update {
		if want, err = safefile.ReadRegular(sc.Expected, MaxExpectedBytes); err != nil {
			return res.fail(Error, "read %s: %v", sc.Expected, err)
		}
	}
	script, err := res.rebuild(ctx, sc)
	if err != nil {
		return res
	}
	stdout, notes, err := drive(ctx, sc, script, opts)
	res.Notes = append(res.Notes, notes...)
	if err != nil {
		return res.fail(Error, "%v", err)
	}
	res.Stdout = string(stdout)
	if opts.Update {
		// Written beside it and renamed over it: a link there is replaced,
		// never written through.
		if err := safefile.WriteFile(res.Expected, stdout, 0o644); err != nil {
			return res.fail(Error, "write %s: %v", res.Expected, err)
		}
		res.Status = Updated
		return res
	}
	return res.compare(want, stdout, sc.Expected)
}

// fail sets the result's status and reason.
func (res *Result) fail(st Status, format string, a ...any) *Result {
	res.Status, res.Reason = st, fmt.Sprintf(format, a...)
	return res
}

// rebuild reads the scenario's logs and rebuilds the model's answers from
// them, noting the warnings of both. An error is in the result (failed).
func (res *Result) rebuild(ctx context.Context, sc *Scenario) (*mockmodel.Script, error) {
	var logs []Log
	for _, p := range sc.Logs {
		ld, err := session.LoadFileContext(ctx, p)
		if err != nil {
			res.fail(Error, "read %s: %v", p, err)
			return nil, err
		}
		for _, w := range ld.Warnings {
			res.Notes = append(res.Notes, filepath.Base(p)+": "+w)
		}
		logs = append(logs, Log{Name: filepath.Base(p), Log: ld})
	}
	script, warnings, err := ScriptFromLogs(sc.Name, logs)
	if err != nil {
		res.fail(Error, "rebuild the model's answers: %v", err)
		return nil, err
	}
	res.Notes = append(res.Notes, warnings...)
	return script, nil
}

// compare compares the agent's normalised stdout with the expected one
// (from the file expected), key order aside: pass, or fail with a diff.
func (res *Result) compare(want, stdout []byte, expected string) *Result {
	a, err := acpnorm.Canonical(want, expected)
	if err != nil {
		return res.fail(Error, "%v", err)
	}
	b, err := acpnorm.Canonical(stdout, "the agent's stdout")
	if err != nil {
		return res.fail(Error, "%v", err)
	}
	if strings.Join(a, "\n") == strings.Join(b, "\n") {
		res.Status = Pass
		return res
	}
	diff, err := difflib.GetUnifiedDiffString(difflib.UnifiedDiff{
		A: withNewlines(a), B: withNewlines(b),
		FromFile: filepath.Base(expected) + " (expected)", ToFile: "stdout (the agent's, normalised)", Context: 2,
	})
	if err != nil {
		return res.fail(Error, "diff: %v", err)
	}
	res.Diff = diff
	return res.fail(Fail, "the agent's normalised stdout differs from %s (%d lines expected, %d written)", filepath.Base(expected), len(a), len(b))
}

func withNewlines(lines []string) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = l + "\n"
	}
	return out
}

// drive serves script from the mock model, runs the agent in a fresh cwd
// through the scenario's steps and returns its normalised stdout. An error
// means the agent could not be run at all; an agent that answers a step
// with an error, or dies, yields its stdout (and notes) as it is.
func drive(ctx context.Context, sc *Scenario, script *mockmodel.Script, opts Options) ([]byte, []string, error) {
	res, err := driver.Drive(ctx, driver.DriveConfig{
		Env: driver.EnvConfig{Target: opts.Agent, Name: sc.Name, DirPrefix: "snapshot-" + sc.Name,
			TempDir: opts.TempDir, KeepDirs: opts.KeepDirs, Model: cmp.Or(opts.Model, "mock"), Script: script},
		Steps: sc.Steps, Timeout: opts.Timeout, Grace: opts.Grace,
	})
	if res == nil {
		return nil, nil, err
	}
	notes := append(res.Notes, res.ModelErrors...)
	if res.Unasked > 0 {
		notes = append(notes, fmt.Sprintf("%d of the %d rebuilt model answers were never asked for", res.Unasked, len(script.Turns)))
	}
	if err != nil {
		return nil, notes, err
	}
	return res.Stdout, notes, nil
}
