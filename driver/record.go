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
	// answers (it, or Scheduler's Script, gives the script), Env.Start when
	// the case started (default: when RunCase is called).
	Env EnvConfig
	// Steps are what the case sends.
	Steps []Step
	// Timeout bounds the case (it must be set); Grace is the shutdown
	// grace; Settle the quiet window (see DefaultSettle).
	Timeout, Grace, Settle time.Duration
	// Scheduler is the runner's side of the case: RunCase reports to it
	// what the case reached and asks it when the case may go on (nil: the
	// case runs unscheduled, with Env.Script).
	Scheduler Scheduler
	// Lease, when set, runs the case as a session of a pooled process
	// (Pool.Lease): the first prompt of each of its sessions carries the
	// lease's marker, and the lease is released when the case ends.
	// Env.Target is the pooled one.
	Lease *Lease
	// Offer is what the case's initialize offers: the protocol version
	// (each process then speaks the one it negotiated, ProcResult.ACPVersion)
	// and, on v1, the plan operations capability.
	Offer Offer
	// Exits is what the case's run has learned of how the agent exits
	// (nil: nothing is kept): each process of the case that waits its
	// whole grace out after its stdin closed teaches it, and once it has
	// learned that, the case's processes are signalled at once when their
	// stdin closes (ProcResult.GraceCut). A pooled case (Lease) neither
	// teaches nor uses it: its stand-in is not the agent's process.
	// ExitName names the case in what it teaches (default Env.Name).
	Exits    *ExitWatch
	ExitName string
}

// Scheduler is what RunCase asks when a case may go on, and tells what it
// reached: a runner running several cases at once shares its parallel
// slots and what its first case learns of the agent through it.
type Scheduler interface {
	// Reached tells what the case reached (see Event). It must return at
	// once: it is called from the case's goroutine and from the watch of
	// its model requests.
	Reached(Event)
	// Script is asked, once, before the first prompt step when Env.Script
	// is nil, for the script the mock model plays: the agent starts and
	// the steps before it run while the scheduler makes it (say, once
	// another case told what the agent offers). The case's clock is
	// stopped meanwhile (the wait is the runner's, not the agent's); an
	// error aborts the case with it.
	Script(context.Context) (*mockmodel.Script, error)
	// GoOn is asked after the case reached Waiting, before its next step:
	// it returns once the case may run it, or with an error when ctx ended
	// (the case is then interrupted). The case's clock is stopped meanwhile.
	GoOn(context.Context) error
}

// EventKind is what a case reached (Event).
type EventKind int

const (
	// Initialized: an initialize was answered (each time one is).
	Initialized EventKind = iota + 1
	// FirstRequest: the mock model has the case's first request that
	// offers tools (side requests aside), once: Event.Tools are its tools,
	// Event.InitAnswered whether an initialize was answered by then.
	FirstRequest
	// LastAnswered: the last step has its answer; what is left is
	// waiting (the settle and the exit), once.
	LastAnswered
	// Waiting: the case waits for quiet wires or an exit with nothing of
	// its own to run (a settle that is not after the last step, a
	// restart's shutdown: Event.Exiting), and asks GoOn before its next
	// step. A runner may give its parallel slot to another case meanwhile.
	Waiting
)

// Event is what a case reached, for Scheduler.Reached.
type Event struct {
	Kind EventKind
	// Tools and InitAnswered: FirstRequest's.
	Tools        []llm.ToolSpec
	InitAnswered bool
	// Exiting (Waiting): the agent is shutting down for a restart, as it
	// does after the last step, and starts again only after GoOn.
	Exiting bool
}

// CaseRecord is what RunCase observed of one case. It is the driver's part
// of a case's evidence (conformance.Evidence embeds it): its JSON form is
// that of the saved evidence.
type CaseRecord struct {
	// Cwd is the case's working directory; Home its throw-away home folder
	// (see Target.Home).
	Cwd  string `json:"cwd,omitempty"`
	Home string `json:"home,omitempty"`
	// Duration is the case's wall time. Answered is when (from the case
	// start) its last step was answered: the case then gave up its
	// parallel slot, and what followed was the settle and the agent's
	// exit. ExitWait is the time spent waiting for the agent processes to
	// exit once their stdin closed (grace periods and signals included).
	// ScriptWait is the time the case waited, before its first prompt, for
	// its script (Scheduler.Script).
	Duration   time.Duration `json:"duration"`
	Answered   time.Duration `json:"answered,omitempty"`
	ExitWait   time.Duration `json:"exitWait,omitempty"`
	ScriptWait time.Duration `json:"scriptWait,omitempty"`

	// Wire is every ACP message both ways, of every process of the case.
	Wire []WireMsg `json:"wire"`
	// Journal is what the agent sent the model for the script, in the
	// mock's canonical form (whatever wire API it came on): the checks
	// read only its canonical fields (Messages, Tools, System, TurnIndex,
	// Time), never Raw or Path. Entries keep their Index in the mock's
	// journal; side requests are left out.
	Journal []mockmodel.JournalEntry `json:"journal"`
	// SideRequests are the requests that offered no tools (titles, topic
	// checks), answered with the script's SideText outside the script.
	SideRequests []mockmodel.JournalEntry `json:"sideRequests,omitempty"`
	Steps        []StepResult             `json:"steps"`
	Procs        []ProcResult             `json:"procs"`
	// Offer is what the case's initialize offered (CaseConfig.Offer; the
	// zero value, protocol version 1, in evidence saved before there was
	// a choice).
	Offer Offer `json:"offer,omitzero"`

	// Aborted says why the case did not run to completion ("" when it did):
	// the agent hung, crashed or broke the protocol.
	Aborted string `json:"aborted,omitempty"`
	// Stopped says which request of the case was answered with an error
	// (the case stops there; the checks that needed it fail, quoting it).
	Stopped string `json:"stopped,omitempty"`
	// Interrupted says why the run was stopped before the case finished
	// (cancelled, e.g. Ctrl-C): no check is judged on it and nothing is
	// blamed on the agent.
	Interrupted string `json:"interrupted,omitempty"`
	// LoadSkipped says why a loadSession step was skipped (the steps after
	// it are skipped too); PromptsRun counts the prompt steps sent.
	LoadSkipped string `json:"loadSkipped,omitempty"`
	PromptsRun  int    `json:"promptsRun"`
	// ModelErrors are the mock model's refusals (past the end of the
	// script, a failed expect, a malformed request).
	ModelErrors []string `json:"modelErrors,omitempty"`
	// NotStarted says why the case's agent never got going, when it did
	// not: its first process could not be started (no such command), or
	// exited before answering initialize. Aborted says so too.
	NotStarted string `json:"notStarted,omitempty"`
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
	// IdleSeq (prompt steps on protocol version 2) is the wire position of
	// the idle state_update that ended the turn (0: none came), StopReason
	// its stopReason ("" when it had none); IdleWait is how long the
	// runner waited for it after the prompt's answer (an acknowledgment on
	// v2), and NoIdle why it stopped waiting when none came.
	IdleSeq    int           `json:"idleSeq,omitempty"`
	StopReason string        `json:"stopReason,omitempty"`
	IdleWait   time.Duration `json:"idleWait,omitempty"`
	NoIdle     string        `json:"noIdle,omitempty"`
}

// EndSeq is the wire position where the step's turn ended: its idle
// state_update on protocol version 2 (IdleSeq), else its answer (RespSeq).
func (s StepResult) EndSeq() int {
	if s.IdleSeq > 0 {
		return s.IdleSeq
	}
	return s.RespSeq
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
	// ACPVersion is the protocol version the process speaks after its
	// initialize answer (Offer.Negotiated; 0: no answer, or evidence
	// saved before there was a choice: version 1).
	ACPVersion int `json:"acpVersion,omitempty"`
	// Shutdown says how the process ended; Exit its exit status.
	Shutdown string `json:"shutdown"`
	Exit     string `json:"exit"`
	// GraceCut is set when the process was not given the whole grace to
	// exit on its own after its stdin closed: it says what the run had
	// learned by then (CaseConfig.Exits: which process of the run did not
	// exit within the grace), and how it ended is no evidence of how the
	// agent exits.
	GraceCut string `json:"graceCut,omitempty"`
	// Pooled names the pooled process the case ran as a session of
	// (Lease.Describe; "" for a process of the case's own): the process
	// was not started for the case and did not end with it (its exit is
	// not judged on the case), and its initialize was answered once, when
	// it started: the case's initialize got that answer, replayed.
	Pooled string `json:"pooled,omitempty"`
	// PooledAlone: the pooled process was started for the case, and no
	// other case was leased it before the case ended (Lease.Alone): the
	// case was the first and only session of a fresh process, as with a
	// process of its own (it served other cases only after), and a failure
	// of the case needs no run again alone to be its own.
	PooledAlone bool `json:"pooledAlone,omitempty"`
	// Retired (a pooled process, the first of a case that restarts its
	// agent) says the case held the process alone and its restart ended
	// it, as a restart ends a process of the case's own: Shutdown, Exit,
	// GraceCut, ExitedEarly and Killed are that process's end, judged as
	// a restart's (ACP-EXIT-1).
	Retired string `json:"retired,omitempty"`
	// Loader (a pooled process, the one after a case's restart) says it
	// was started fresh at the restart in the folders of the process
	// retired there (Retired), to load the case's session, and joined the
	// pool in that one's place after the case: its initialize was the
	// case's own, and it did not end with the case.
	Loader string `json:"loader,omitempty"`
	// PoolStore names the folders of the pooled process (its working
	// folder's name): a process retired at a restart and the one started
	// in its folders (Loader) share them, and with them the sessions every
	// case of either saved (ACP-ISOLATION-1 judges those cases beside each
	// other). Empty in evidence saved before it was kept.
	PoolStore string `json:"poolStore,omitempty"`
	// SessionCPU is what the pooled process's session for the case cost
	// it in CPU (nil for a process of the case's own; for a case that
	// restarts, each process's part).
	SessionCPU *SessionCPU `json:"sessionCpu,omitempty"`
	// CPU is what the process cost in CPU over its life, start-up and
	// shutdown included (ProcCPU), for a process of the case's own (nil
	// for a pooled session, whose process's is its pool's, Pool.CPU; for
	// an agent in the runner's process; and in evidence saved before it
	// was read).
	CPU *ProcCPU `json:"cpu,omitempty"`
	// ExitedEarly: the process was gone before the runner closed its stdin.
	ExitedEarly    bool            `json:"exitedEarly,omitempty"`
	Stderr         string          `json:"stderr,omitempty"`
	ClientRequests []ClientRequest `json:"clientRequests,omitempty"`
	// Killed lists the descendants of the agent still running when it
	// ended (in its process group or out of it), which the runner killed.
	Killed []string `json:"killed,omitempty"`
}

// SessionCPU is the CPU time a pooled process (its tree: the process and
// its descendants, with the children they waited for) used while it
// served one case: read when the case was leased it and when the case
// ended.
type SessionCPU struct {
	// Nth is the session's number in its process (1: the first session
	// after its start and initialize).
	Nth int `json:"nth"`
	// Ms is the CPU time in milliseconds (at the resolution of
	// /proc/PID/stat: 10 ms); 0 when Unmeasured.
	Ms int64 `json:"ms"`
	// Unmeasured says why Ms was not read ("" when it was): the process
	// serves several sessions at once, runs in the runner's process, no
	// /proc, the process ended during the session.
	Unmeasured string `json:"unmeasured,omitempty"`
}

// ProcCPU is the CPU time an agent process used over its life: its tree's
// (the process and its descendants, with the children they waited for)
// as /proc showed it when the runner began to end it, or its own and its
// waited-for children's from its exit status when that is more.
type ProcCPU struct {
	// Ms is the CPU time in milliseconds; 0 when Unmeasured.
	Ms int64 `json:"ms"`
	// Unmeasured says why Ms was not read ("" when it was): no /proc, the
	// agent runs in the runner's process.
	Unmeasured string `json:"unmeasured,omitempty"`
}

// Interrupted says why the run's context ended.
func Interrupted(ctx context.Context) string {
	return "the run was interrupted (" + ctx.Err().Error() + ")"
}
