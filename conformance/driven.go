package conformance

import (
	"context"
	"time"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/harness/llm"
)

// The driver's names the catalogue, the evidence and the reports use: the
// same types and values (package driver launches and drives the agent).
type (
	// Step is one ACP action of a case.
	Step = driver.Step
	// StepResult is one step as run; ProcResult one agent process.
	StepResult = driver.StepResult
	ProcResult = driver.ProcResult
	// WireMsg is one ACP message; ClientRequest one request of the agent
	// the runner answered.
	WireMsg       = driver.WireMsg
	ClientRequest = driver.ClientRequest
	// SchemaValidator checks messages against the ACP schema.
	SchemaValidator = driver.SchemaValidator
	// Dialect is an agent's todo tool.
	Dialect = driver.Dialect
)

// Step operations.
const (
	OpInitialize  = driver.OpInitialize
	OpNewSession  = driver.OpNewSession
	OpPrompt      = driver.OpPrompt
	OpRestart     = driver.OpRestart
	OpLoadSession = driver.OpLoadSession
)

// Dialect names.
const (
	DialectTodoWrite = driver.DialectTodoWrite
	DialectOpencode  = driver.DialectOpencode
	DialectCodex     = driver.DialectCodex
)

// Wire directions and message kinds.
const (
	Sent             = driver.Sent
	Received         = driver.Received
	KindResponse     = driver.KindResponse
	KindNotification = driver.KindNotification
	KindInvalid      = driver.KindInvalid
)

// ACPSchemaSource is where the ACP schema the validator uses comes from.
const ACPSchemaSource = driver.ACPSchemaSource

// DialectByName returns a known dialect by name (driver.DialectByName).
func DialectByName(name string) (Dialect, error) { return driver.DialectByName(name) }

// DetectDialect picks the dialect whose tool the agent offers
// (driver.DetectDialect).
func DetectDialect(toolNames []string) (Dialect, bool) { return driver.DetectDialect(toolNames) }

// NewSchemaValidator compiles the ACP schema (driver.NewSchemaValidator).
func NewSchemaValidator() (*SchemaValidator, error) { return driver.NewSchemaValidator() }

func truncate(s string, n int) string { return driver.Truncate(s, n) }

func lastLines(s string, n int) []string { return driver.LastLines(s, n) }

// runCase drives one case to completion or abortion and returns its
// evidence; it never returns an error: whatever went wrong is in the
// evidence (Aborted).
//
// release, when not nil, is called once the last step is answered (or the
// case ends before): what is left is waiting (the settle, the exit), and
// the runner gives the case's parallel slot to the next one.
func (r *runner) runCase(ctx context.Context, c *Case, d Dialect, itemProps map[string]bool, gate *probeGate, release func()) *Evidence {
	start := time.Now()
	ev := &Evidence{Format: EvidenceFormat, Case: c, Dialect: d, Policy: r.cfg.Policy, Writes: c.Writes(), Started: start,
		memo: &judgeMemo{}}
	script, err := c.script(d, itemProps)
	if err != nil {
		ev.Aborted, ev.Duration = err.Error(), time.Since(start)
		return ev
	}
	ev.Script = script
	cfg := r.cfg
	dc := driver.CaseConfig{Env: driver.EnvConfig{Target: cfg.Agent, Name: c.ID, DirPrefix: "conform-" + safeName(c.ID),
		TempDir: cfg.TempDir, KeepDirs: cfg.KeepDirs, Model: cfg.Model, Script: script, Start: start},
		Steps: c.Steps, Timeout: cfg.Timeout, Grace: cfg.Grace, Settle: cfg.Settle, LastAnswered: release}
	if gate != nil && gate.detect {
		dc.FirstRequest = func(initAnswered bool, tools []llm.ToolSpec) { gate.close(initAnswered, nonNil(tools)) }
	} else if gate != nil {
		dc.Initialized = func() { gate.close(true, nil) }
	}
	rec := driver.RunCase(ctx, dc)
	ev.Cwd, ev.Home, ev.Duration, ev.Answered, ev.ExitWait = rec.Cwd, rec.Home, rec.Duration, rec.Answered, rec.ExitWait
	ev.Wire, ev.Journal, ev.SideRequests, ev.Steps, ev.Procs = rec.Wire, rec.Journal, rec.SideRequests, rec.Steps, rec.Procs
	ev.Aborted, ev.Stopped, ev.Interrupted, ev.LoadSkipped = rec.Aborted, rec.Stopped, rec.Interrupted, rec.LoadSkipped
	ev.PromptsRun, ev.ModelErrors = rec.PromptsRun, rec.ModelErrors
	// The judge's heavy part, here in the case's goroutine while other
	// cases run, not in the judge's single pass after the last case.
	ev.warmJudgeMemo(r.validator)
	return ev
}
