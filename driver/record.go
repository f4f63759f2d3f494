package driver

import (
	"context"
	"encoding/json"
	"time"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/mockmodel"
)

// Defaults.
const (
	// DefaultTimeout bounds one case, agent start-up included: some real
	// agents take seconds to start.
	DefaultTimeout = 60 * time.Second
	// DefaultGrace is how long an agent gets to exit after its stdin closes
	// (and again after SIGTERM) before it is signalled (killed).
	DefaultGrace = 3 * time.Second
	// DefaultSettle is how long both wires (ACP and the model) must stay
	// quiet after a prompt is answered, and after the last step, before the
	// runner goes on (and, at the end, closes the agent's stdin): real
	// agents answer session/prompt while a tool call of the turn still
	// runs, and send its updates afterwards.
	DefaultSettle = 1500 * time.Millisecond
	// settleFast ends a settle early (at most Settle) when the agent's
	// last message is the answer and the model has taken every turn of the
	// prompts sent, none in flight: the turn is over on both wires.
	settleFast = 100 * time.Millisecond
	// settlePendingMin is the least time a settle waits for model turns
	// the prompts sent still have coming after the agent answered (10 x
	// Settle when longer): the agent said the turn ended, its model
	// conversation did not.
	settlePendingMin = 5 * time.Second
)

// CaseConfig is one case for RunCase.
type CaseConfig struct {
	// Env is the case's environment: Env.Script is what the mock model
	// answers (it or Script must be set), Env.Start when the case started
	// (default: when RunCase is called).
	Env EnvConfig
	// Script, when set (with Env.Script nil), gives the mock model its
	// script later: the agent starts and the steps before the first prompt
	// run while it waits (say, for what another case tells of the agent);
	// it is called once, before the first prompt step, with the case's
	// clock stopped (the wait is the runner's, not the agent's). An error
	// aborts the case with it.
	Script func(context.Context) (*mockmodel.Script, error)
	// Steps are what the case sends.
	Steps []Step
	// Timeout bounds the case (it must be set); Grace is the shutdown
	// grace; Settle the quiet window (see DefaultSettle).
	Timeout, Grace, Settle time.Duration
	// FirstRequest, when set, is called once with the tools of the first
	// model request (side requests aside) as soon as the mock has it, and
	// whether an initialize was answered by then.
	FirstRequest func(initAnswered bool, tools []llm.ToolSpec)
	// Initialized, when set, is called each time an initialize is
	// answered; LastAnswered once the last step has its answer (what is
	// left is waiting: the settle and the exit).
	Initialized, LastAnswered func()
	// Waiting and Resume, when set, are called around each settle that
	// is not after the last step, and around each restart's shutdown
	// (the agent's grace to exit): the case waits for quiet wires or an
	// exit, with nothing of its own to run, so a runner may give its parallel slot
	// to another case (Waiting) and take one again before the next step
	// (Resume; an error, its context ended, interrupts the case).
	// Waiting's exiting is set for a restart: the agent is shutting down,
	// as it does after the last step, and starts again only after Resume.
	Waiting func(exiting bool)
	Resume  func(context.Context) error
}

// CaseRecord is what RunCase observed. The fields are those of the same
// name of conformance.Evidence, which documents them.
type CaseRecord struct {
	Cwd, Home                    string
	Duration, Answered, ExitWait time.Duration
	ScriptWait                   time.Duration
	Wire                         []WireMsg
	Journal, SideRequests        []mockmodel.JournalEntry
	Steps                        []StepResult
	Procs                        []ProcResult
	Aborted, Stopped             string
	Interrupted, LoadSkipped     string
	PromptsRun                   int
	ModelErrors                  []string
	// NotStarted says why the case's agent never got going, when it did
	// not: its first process could not be started (no such command), or
	// exited before answering initialize. Aborted says so too.
	NotStarted string
}

// StepResult is one step as run.
type StepResult struct {
	Index int    `json:"index"`
	Op    string `json:"op"`
	Proc  int    `json:"proc"`
	// Prompt is the 0-based prompt number (prompt steps only).
	Prompt int `json:"prompt"`
	// ReqSeq and RespSeq are the wire positions of the request and of the
	// last message seen when its answer arrived (-1 when not sent).
	ReqSeq   int             `json:"reqSeq"`
	RespSeq  int             `json:"respSeq"`
	Duration time.Duration   `json:"duration"`
	Result   json.RawMessage `json:"result,omitempty"`
	Error    string          `json:"error,omitempty"`
	Skipped  string          `json:"skipped,omitempty"`
	// Refused (loadSession steps) says the step asked for the session
	// open on the process and the agent clearly refused (Error is its
	// answer; RefusesLiveLoad): ACP does not require an agent to accept
	// that, so the case goes on, and the load is not judged on it.
	Refused string `json:"refused,omitempty"`
	// Settle is how long the runner waited after the answer for both
	// wires to go quiet (prompt steps, and the last step); Settled says
	// why the wait ended.
	Settle  time.Duration `json:"settle,omitempty"`
	Settled string        `json:"settled,omitempty"`
	// CancelSeq is the wire position of the session/cancel the runner
	// sent during a prompt step with Cancel (0 or -1: none sent: the turn
	// was answered before the agent showed it took the write); CancelAfter
	// is the sign it was sent after (Step.Cancel).
	CancelSeq   int    `json:"cancelSeq,omitempty"`
	CancelAfter string `json:"cancelAfter,omitempty"`
}

// ProcResult is one agent process of a case.
type ProcResult struct {
	Index int      `json:"index"`
	Argv  []string `json:"argv"`
	// InProcess: the agent ran as a function in the runner's process
	// (Target.InProcess), not as a process.
	InProcess bool `json:"inProcess,omitempty"`
	// StartedAt is the offset from the case start; Startup the time from
	// process start to the initialize answer (process start + handshake).
	StartedAt time.Duration   `json:"startedAt"`
	Startup   time.Duration   `json:"startup"`
	Init      json.RawMessage `json:"init,omitempty"`
	// Shutdown says how the process ended; Exit its exit status.
	Shutdown string `json:"shutdown"`
	Exit     string `json:"exit"`
	// ExitedEarly: the process was gone before the runner closed its stdin.
	ExitedEarly    bool            `json:"exitedEarly,omitempty"`
	Stderr         string          `json:"stderr,omitempty"`
	ClientRequests []ClientRequest `json:"clientRequests,omitempty"`
	// Killed lists the descendants of the agent still running when it
	// ended (in its process group or out of it), which the runner killed.
	Killed []string `json:"killed,omitempty"`
}

// Interrupted says why the run's context ended.
func Interrupted(ctx context.Context) string {
	return "the run was interrupted (" + ctx.Err().Error() + ")"
}
