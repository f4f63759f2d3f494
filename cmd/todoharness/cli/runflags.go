package cli

import (
	"fmt"
	"io"
	"time"

	"github.com/spf13/pflag"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/driver"
)

// runFlags are the options of a run that conform, peers and snapshot share:
// one definition of the flags, one rule for the per-case timeout, one way
// to build the run's Config.
type runFlags struct {
	// timeout is the per-case timeout; 0 means the preset's, else
	// driver.DefaultTimeout.
	timeout  time.Duration
	grace    time.Duration
	parallel int
	quiet    bool
	// settle and repeat: Config.Settle and Config.Repeat.
	settle time.Duration
	repeat int
	// pool is --pool: conformance.PoolOn or PoolOff (Config.Pool);
	// poolSessions --pool-sessions (0: the agent's Target.PoolSessions).
	pool         string
	poolSessions int
	// rerunPooled is --rerun-pooled (Config.RerunPooled).
	rerunPooled string
	// acpVersion and advertisePlan are --acp-version and --advertise-plan
	// (Config.Offer).
	acpVersion    int
	advertisePlan bool
}

// register defines --timeout, --grace, --parallel and -q on f; what names
// what one run covers in the help ("" for conform, " per agent" for peers).
func (r *runFlags) register(f *pflag.FlagSet, what string) {
	r.registerTimeouts(f, "case")
	f.IntVar(&r.parallel, "parallel", 0, "cases run at once"+what+", the cases with the most steps first (default: number of CPUs; every case with --in-process)")
	f.BoolVarP(&r.quiet, "quiet", "q", false, "no progress lines")
	f.DurationVar(&r.settle, "settle", driver.DefaultSettle, "how long both wires (ACP and the model) must stay quiet after a prompt is answered, and after the last step, before the runner goes on: updates an agent sends after its answer are kept and judged (ACP-TURN-1 lists them)")
	f.IntVar(&r.repeat, "repeat", 1, "run every case N times"+what+"; a check whose outcome differs between the runs is FLAKY (a flaky MUST check fails the run)")
	f.IntVar(&r.acpVersion, "acp-version", driver.ACPv1, "the ACP protocol version initialize offers: 1, or 2 (the v2 draft: the plan is plan_update, a turn ends at an idle state_update, a load is session/resume from the start); an agent offered 2 that answers 1 runs the v1 catalogue, and the report says so")
	f.BoolVar(&r.advertisePlan, "advertise-plan", false, "on protocol version 1, advertise clientCapabilities.plan: the agent may then send plan_update and plan_removed (the plan checks accept plan_update items); without it ACP-PLAN-FALLBACK-1 fails an agent that sends them")
	f.StringVar(&r.pool, "pool", conformance.PoolOn, "on: the cases that need no fresh process (no restart, no load, not the probe, no exit check) run as sessions of pooled agent processes, one case at a time a process (or --pool-sessions at once), each in its own session and working directory; a case that fails there runs again alone in a fresh process before it is reported (a check it passes alone is FLAKY, unless its pooled session was shown or sent a list only another session of its process wrote: ACP-ISOLATION-1 then fails, naming both; see --rerun-pooled). off: a process per case. Shrinks and every run of --repeat use a process per case")
	f.StringVar(&r.rerunPooled, "rerun-pooled", conformance.RerunKnown, "with --pool on, which cases that failed as a session of a pooled process run again alone in a fresh process: known: one case for each kind of failure (the same check, the same kind of reason) that no case of the run confirmed alone in a fresh process yet, then those whose failures that left unconfirmed; a case each of whose failures was confirmed so is reported from its pooled session, each failure naming the case that confirmed it. every: each of them")
	f.IntVar(&r.poolSessions, "pool-sessions", 0, "how many cases a pooled process serves at once, each in its own session: more than 1 only for an agent that answers concurrent prompts of different sessions (default: the preset's; 4 for the built-in reference agent, else 1)")
}

// check validates the options register defined (before any agent starts).
func (r runFlags) check() error {
	if r.repeat < 1 {
		return fmt.Errorf("--repeat %d: want at least 1", r.repeat)
	}
	if r.settle <= 0 {
		return fmt.Errorf("--settle %s: want a positive duration", r.settle)
	}
	if r.pool != conformance.PoolOn && r.pool != conformance.PoolOff {
		return fmt.Errorf("--pool %q: want %s or %s", r.pool, conformance.PoolOn, conformance.PoolOff)
	}
	if r.rerunPooled != conformance.RerunKnown && r.rerunPooled != conformance.RerunEvery {
		return fmt.Errorf("--rerun-pooled %q: want %s or %s", r.rerunPooled, conformance.RerunKnown, conformance.RerunEvery)
	}
	if r.poolSessions < 0 {
		return fmt.Errorf("--pool-sessions %d: want at least 1 (or 0: the agent's default)", r.poolSessions)
	}
	if r.acpVersion != driver.ACPv1 && r.acpVersion != driver.ACPv2 {
		return fmt.Errorf("--acp-version %d: want %d or %d", r.acpVersion, driver.ACPv1, driver.ACPv2)
	}
	if r.advertisePlan && r.acpVersion == driver.ACPv2 {
		return fmt.Errorf("--advertise-plan with --acp-version 2: clientCapabilities.plan is protocol version 1's; on version 2 plan_update is the plan")
	}
	return nil
}

// registerTimeouts defines --timeout and --grace only (snapshot runs one
// scenario at a time); unit names what the timeout bounds.
func (r *runFlags) registerTimeouts(f *pflag.FlagSet, unit string) {
	f.DurationVar(&r.timeout, "timeout", 0, "per-"+unit+" timeout, agent start-up included (default: the preset's, else "+driver.DefaultTimeout.String()+")")
	f.DurationVar(&r.grace, "grace", driver.DefaultGrace, "how long an agent gets to exit after its stdin closes, and after SIGTERM")
}

// caseTimeout is --timeout when given, else the preset's (p may be nil),
// else driver.DefaultTimeout.
func (r runFlags) caseTimeout(p *driver.Preset) time.Duration {
	switch {
	case r.timeout > 0:
		return r.timeout
	case p != nil && p.Timeout > 0:
		return p.Timeout
	}
	return driver.DefaultTimeout
}

// config is the run of cases against target with these options; progress
// lines go to progress unless -q.
func (r runFlags) config(target driver.Target, cases []*conformance.Case, p *driver.Preset, progress io.Writer) conformance.Config {
	if r.poolSessions > 0 {
		target.PoolSessions = r.poolSessions
	}
	cfg := conformance.Config{Agent: target, Cases: cases, Timeout: r.caseTimeout(p), Grace: r.grace, Parallel: r.parallel,
		Settle: r.settle, Repeat: r.repeat, Pool: r.pool == conformance.PoolOn, RerunPooled: r.rerunPooled, Offer: r.offer()}
	if !r.quiet {
		cfg.Progress = progress
	}
	return cfg
}

// offer is what the run's initialize offers (--acp-version, --advertise-plan).
func (r runFlags) offer() driver.Offer {
	return driver.Offer{ACPVersion: r.acpVersion, PlanOps: r.advertisePlan}
}
