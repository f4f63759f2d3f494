package explore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/internal/buildinfo"
	"github.com/todoharness/todoharness/internal/safefile"
	"github.com/todoharness/todoharness/mockmodel"
)

// ResultFile is the name of an exploration's report under Config.Out.
const ResultFile = "explore.json"

// FailuresDir is the folder under Config.Out that holds the shrunk cases,
// one folder each: `todoharness conform --cases OUT/explore-failures` runs
// them.
const FailuresDir = "explore-failures"

// Config is an exploration.
type Config struct {
	// Run is the run every batch of scenarios is: the agent under test,
	// timeouts, settle, parallelism, dialect, policy, baseline, strict.
	// Its Cases, Progress and Repeat are ignored.
	Run conformance.Config
	// Seed draws the scenarios; N is how many (of the whole run, over
	// every shard), For a time budget (either may be 0, not both).
	Seed uint64
	N    int
	For  time.Duration
	// Shard (0-based) of Shards runs the scenarios whose index is Shard
	// modulo Shards (Shards 0 or 1: all).
	Shard, Shards int
	// Out receives the shrunk cases (FailuresDir) and the report
	// (ResultFile); "" writes nothing.
	Out string
	// Batch is how many scenarios one run drives at once (0: twice
	// Run.Parallel, at least 16). Run.Parallel 0 is inProcessParallel for
	// an agent in process, the number of CPUs for a process.
	Batch int
	// ShrinkBatch is how many candidates one shrink run tries at once
	// (0: Run.Parallel): the first in order that still fails is kept, so
	// a batch wider than the agent's parallel slots only waits longer.
	ShrinkBatch int
	// ShrinkRuns bounds the runs one shrink makes (0: enough for 960
	// candidates, at least 60).
	ShrinkRuns int
	// ShrinkFor bounds the time all the shrinks take together (0: no
	// bound but ShrinkRuns): each failure's shrink gets an even share of
	// what is left when it starts, and stops, keeping the smallest case
	// found so far, after the run that spends it.
	ShrinkFor time.Duration
	// Confirm is how many times each shrunk case is run again, at once,
	// after its shrink (0: 2; -1: never): against a flaky agent a
	// candidate may have failed by chance, and the report says how many
	// of the re-runs failed the same check.
	Confirm int
	// Progress receives a progress line, rewritten in place (give it only
	// a terminal), or, with ProgressEvery, whole lines.
	Progress io.Writer
	// ProgressEvery, when positive, makes Progress a log (a CI job's, a
	// file): a whole line at most once per this interval, and one as each
	// shrink starts, instead of one line rewritten in place.
	ProgressEvery time.Duration
	// StopAtFailure stops drawing scenarios after the batch that found
	// the first failure.
	StopAtFailure bool
	// ShrinkIf says which failures to shrink (nil: all); the others keep
	// their first scenario as it was drawn.
	ShrinkIf func(check string) bool
	// Now is the clock (nil: time.Now).
	Now func() time.Time
	// Reproduce is the flags of `todoharness conform` that run the agent
	// and judge as this exploration does (--preset, --agent, --env,
	// --file, --policy, ...): each shrunk case's header says to run it
	// with them, shell-quoted (nil: it says to add the run's agent flags).
	Reproduce []string
}

// Failure is one distinct failure: a check that failed on generated
// scenarios in one way, its signature.
type Failure struct {
	Check string `json:"check"`
	// Signature is what failed, "op/step" (see signature): the kind of
	// call the check's reason points at (a list, an empty list, a
	// replacing list, a call breaking a rule, ...) and the kind of step
	// (a prompt, a prompt after session/load, the load, ...). Two bugs
	// that fail one check on different kinds of calls or steps are two
	// failures, each shrunk.
	Signature string `json:"signature,omitempty"`
	// Hits is how many scenarios failed it so, each in a process of its
	// own or run again alone in a fresh one after it failed pooled (but
	// ACP-ISOLATION-1, which only sessions of a pooled process fail; a
	// scenario counts for the signature of the first failure the check
	// reports on it); Seed and Index name the first (the lowest index),
	// which `--explore` regenerates.
	Hits  int    `json:"hits"`
	Seed  uint64 `json:"seed"`
	Index int    `json:"index"`
	// PooledHits is how many more scenarios failed it so as sessions of
	// a pooled process once it was confirmed alone, and were not run
	// again alone (Result.PooledKnown): seen pooled, not confirmed each.
	PooledHits int `json:"pooledHits,omitempty"`
	// Reason is what the check said on that scenario.
	Reason string `json:"reason"`
	// Case is the shrunk case's file, CaseYAML its text; Steps and Turns
	// its size, ShrunkReason what the check said on it, ShrinkRuns the
	// runs the shrink took.
	Case         string `json:"case,omitempty"`
	CaseYAML     string `json:"caseYaml"`
	Steps        int    `json:"steps"`
	Requests     int    `json:"requests"`
	Turns        int    `json:"turns"`
	ShrunkReason string `json:"shrunkReason,omitempty"`
	ShrinkRuns   int    `json:"shrinkRuns"`
	// ShrinkError says why the shrink stopped early ("" when it did not).
	ShrinkError string `json:"shrinkError,omitempty"`
	// ShrinkRunsShared is how many of the ShrinkRuns started no agent:
	// every candidate they tried had been run as it is already (by an
	// earlier failure's shrink, or this one's), and those judged runs were
	// reused.
	ShrinkRunsShared int `json:"shrinkRunsShared,omitempty"`
	// Reruns is how many times the shrunk case was run again after the
	// shrink (Config.Confirm), Reproduced how many of them failed the
	// same check the same way. RerunsOf, when set, names the failure
	// ("check signature") whose shrunk case is this one's too: these are
	// its re-runs, judged for this failure, not runs of their own.
	Reruns     int    `json:"reruns,omitempty"`
	Reproduced int    `json:"reproduced,omitempty"`
	RerunsOf   string `json:"rerunsOf,omitempty"`
}

// sharedRuns says how many of f's shrink runs reused runs already made
// ("" when none did).
func (f *Failure) sharedRuns() string {
	if f.ShrinkRunsShared == 0 {
		return ""
	}
	return fmt.Sprintf(" (%d of them reused runs of the same candidates)", f.ShrinkRunsShared)
}

// Result is an exploration's report.
type Result struct {
	Seed    uint64 `json:"seed"`
	N       int    `json:"n,omitempty"`
	Shard   int    `json:"shard"`
	Shards  int    `json:"shards"`
	Agent   string `json:"agent"`
	Policy  string `json:"policy"`
	Dialect string `json:"dialect,omitempty"`
	// Scenarios is how many scenarios were run and judged; Indexes says
	// which (per shard: Shard, Shard+Shards, ...; the first Scenarios of
	// them).
	Scenarios int `json:"scenarios"`
	// NotJudged counts scenarios that were interrupted or not run.
	NotJudged int `json:"notJudged,omitempty"`
	// Interrupted says why the exploration was stopped before it
	// finished (the context was cancelled: Ctrl-C, SIGTERM): scenarios
	// were left undrawn or unjudged, or shrinks cut short ("" when it ran
	// to its end).
	Interrupted string    `json:"interrupted,omitempty"`
	Failures    []Failure `json:"failures"`
	// DurationMs is the wall time, the shrinks included.
	DurationMs int64 `json:"durationMs"`
	// ScenariosMs is the wall time of the scenarios (drawn, run and
	// judged; the shrinks after them not included), ScenariosPerMinute
	// the rate it gives. CPUMs is the CPU time (user and system) used in
	// that time by this process and by the processes it started that
	// ended in it (the agents' processes, and those they waited for),
	// CPUPerScenarioMs its share of a scenario: on a shared machine the
	// rate depends on the load, the CPU much less. Both CPU figures are
	// left out where the CPU time is not read (not on Unix).
	ScenariosMs        int64   `json:"scenariosMs"`
	ScenariosPerMinute float64 `json:"scenariosPerMinute"`
	CPUMs              int64   `json:"cpuMs,omitempty"`
	CPUPerScenarioMs   float64 `json:"cpuPerScenarioMs,omitempty"`
	// Floor is what one scenario cost a warm pooled process (the median
	// over the batches' pooled sessions after their process's first), and
	// the CPU a scenario next to it (cpuToFloor); floorNote says why there
	// is none. A merge of shards keeps it only from a single shard: medians
	// do not add up.
	conformance.Floor
	// ToolVersion and CatalogueVersion are the todoharness version and
	// the catalogue version that explored: Merge joins only shards that
	// agree on both (a report of an older version has neither).
	ToolVersion      string `json:"toolVersion,omitempty"`
	CatalogueVersion int    `json:"catalogueVersion,omitempty"`
	// Pool is conformance.PoolOn when the scenarios that need no fresh
	// process ran as sessions of pooled agent processes (Config.Run.Pool),
	// PoolOff when every scenario had a process of its own ("" in a
	// report of a version before pooling). Shrinks and their re-runs use
	// a process per case either way.
	Pool string `json:"pool,omitempty"`
	// Protocol is the ACP protocol version the scenarios spoke, as the
	// first run's report says it (conformance.Protocol; "" in a report of
	// an older version).
	Protocol string `json:"protocol,omitempty"`
	// With the pool on: PooledScenarios is how many scenarios were judged
	// from their session of a pooled process (every batch leases the
	// processes of one pool), PoolRanAlone how many failed there and were
	// judged from a run again alone in a fresh process. PooledKnown, of
	// the PooledScenarios, is how many failed there with only the
	// signatures of failures already confirmed alone (an earlier scenario
	// failed so in a fresh process): not run again, each is counted in
	// those failures' PooledHits, never in their Hits.
	PooledScenarios int `json:"pooledScenarios,omitempty"`
	PoolRanAlone    int `json:"poolRanAlone,omitempty"`
	PooledKnown     int `json:"pooledKnown,omitempty"`

	// from is the file ReadResult read the report from, for errors.
	from string
}

// OK reports whether no scenario failed.
func (r *Result) OK() bool { return len(r.Failures) == 0 }

// Verdict is the exploration's verdict, worded as the catalogue's
// (conformance.Verdict*): INTERRUPTED when it was stopped before its end,
// FAIL when a scenario failed, INCOMPLETE when a scenario was not judged,
// else PASS.
func (r *Result) Verdict() string {
	switch {
	case r.Interrupted != "":
		return conformance.VerdictInterrupted
	case !r.OK():
		return conformance.VerdictFail
	case r.NotJudged > 0:
		return conformance.VerdictIncomplete
	}
	return conformance.VerdictPass
}

// Explore generates scenarios from the seed, runs them against the agent
// exactly as cases are run, judges each with the catalogue as the oracle
// marked it, and shrinks the first scenario of each distinct failure. When
// part of Out could not be written it returns the result and the error.
func Explore(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.withDefaults(); err != nil {
		return nil, err
	}
	start := cfg.Now()
	policy, err := resolvePolicy(ctx, cfg.Run)
	if err != nil {
		return nil, err
	}
	cfg.Run.Policy = policy
	oracle, err := NewOracle(policy)
	if err != nil {
		return nil, err
	}
	// One compile cache and one prepared home for every batch, shrink and
	// re-run.
	var dropHome, dropCache func()
	cfg.Run.Agent, dropCache = conformance.NodeCompileCache(cfg.Run)
	defer dropCache()
	cfg.Run.Agent, dropHome = conformance.PrepareHome(ctx, cfg.Run)
	defer dropHome()
	// One pool for every batch: a batch leases the processes the earlier
	// ones started, instead of starting (and ending) its own.
	// One knowledge of how the agent exits, too: once a process of a
	// batch did not exit within the grace, the later batches' processes
	// are signalled at once, as a run's are (the shrinks wait every grace).
	if !cfg.Run.WaitEveryGrace && cfg.Run.Exits == nil {
		cfg.Run.Exits = driver.NewExitWatch()
	}
	var pool *driver.Pool
	if cfg.Run.Pool {
		pool = conformance.NewPool(cfg.Run, cfg.Run.Exits)
		defer pool.Close()
		cfg.Run.Pooled = pool
	}
	res := &Result{Seed: cfg.Seed, N: cfg.N, Shard: cfg.Shard, Shards: cfg.Shards, Agent: cfg.Run.Agent.String(), Policy: policy,
		ToolVersion: buildinfo.Version(), CatalogueVersion: conformance.CatalogueVersion}
	run := func(ctx context.Context, cases []*conformance.Case) (map[string][]string, *conformance.Report, error) {
		rc := cfg.Run
		rc.Cases = cases
		rep, err := conformance.Run(ctx, rc)
		if err != nil {
			return nil, nil, err
		}
		if res.Dialect == "" {
			res.Dialect, res.Protocol = rep.Dialect, rep.Protocol.String()
		}
		if res.Pool == "" {
			res.Pool = rep.Pool // the batches' mode (the shrinks' is off)
		}
		// The later runs detect the dialect from the first one's probe
		// instead of running one each: against a slow agent a probe
		// costs a start-up that every case of the run waits out.
		if cfg.Run.Dialect == "" && cfg.Run.ProbeTools == nil {
			cfg.Run.ProbeTools = rep.ProbeTools()
		}
		return failuresByCase(rep), rep, nil
	}
	e := exploration{cfg: cfg, res: res, gen: Generator{Seed: cfg.Seed, Policy: policy}, oracle: oracle,
		byKey: map[string]*Failure{}, first: map[string]*conformance.Case{}, next: cfg.Shard, total: -1}
	// A pooled failure of a kind a fresh process confirmed already is not
	// run again alone (e.confirmed; the batches run one after another, and
	// e.byKey changes only between them), unless every pooled failure is
	// to run again alone (--rerun-pooled every).
	if cfg.Run.RerunPooled != conformance.RerunEvery {
		cfg.Run.Confirmed, cfg.Run.ConfirmedAlone, cfg.Run.FailureKind = e.confirmed, e.confirmAlone, failureKindOf
	}
	var deadline time.Time
	if cfg.For > 0 {
		deadline = start.Add(cfg.For)
	}
	if cfg.N > 0 {
		e.total = (cfg.N - cfg.Shard + cfg.Shards - 1) / cfg.Shards
	}
	cpu0, cpuOK := conformance.ProcessCPU()
	prog := progress{w: cfg.Progress, every: cfg.ProgressEvery, start: start, now: cfg.Now, total: e.total, deadline: deadline}
	if cpuOK {
		prog.cpu = func() time.Duration { d, _ := conformance.ProcessCPU(); return d - cpu0 }
	}
	var floor conformance.FloorSamples
	for ctx.Err() == nil && (e.total < 0 || res.Scenarios+res.NotJudged < e.total) && (deadline.IsZero() || cfg.Now().Before(deadline)) {
		batch, index := e.draw()
		e.index, e.batch = index, map[string]int{}
		fails, rep, err := run(ctx, batch)
		if err != nil {
			return nil, err
		}
		floor.Add(rep)
		e.tally(rep, batch, index, fails)
		prog.update(res.Scenarios, len(e.byKey))
		if cfg.StopAtFailure && len(e.byKey) > 0 {
			break
		}
	}
	prog.end()
	if pool != nil {
		// Ended before the CPU is read: a process's CPU is counted once it
		// has ended.
		pool.Close()
	}
	var cpuMs int64
	if prog.cpu != nil {
		cpuMs = prog.cpu().Milliseconds()
	}
	res.cost(cfg.Now().Sub(start).Milliseconds(), cpuMs, prog.cpu != nil)
	if pool != nil {
		floor.AddPool(pool.CPU())
	}
	res.Floor = floor.Floor()
	if !cfg.Run.Pool {
		res.FloorNote = "pool off: every scenario had a process of its own"
	}
	res.SetRatio(res.CPUPerScenarioMs)
	// Shrinks and their confirming re-runs use a fresh process a case
	// (Config.Pool is for the batches): a failure is cut down, and
	// confirmed, where nothing else shares its process. Each process is
	// given its whole exit grace: a candidate shows an ACP-EXIT-1
	// failure on its own, not only the first of a run to shut down.
	cfg.Run.Pool, cfg.Run.Pooled, cfg.Run.Confirmed, cfg.Run.WaitEveryGrace, cfg.Run.Exits = false, nil, nil, true, nil
	cfg.Run.ConfirmedAlone, cfg.Run.FailureKind = nil, nil
	// One memo for every shrink and confirmation: two failures found on
	// one scenario mostly try the same candidates, and often end with the
	// same case, whose runs are judged once for each.
	s := shrinker{oracle: oracle, cat: cfg.Run.Checks, run: run, batch: cfg.ShrinkBatch, maxRuns: cfg.ShrinkRuns, now: cfg.Now, progress: &prog,
		memo: &runMemo{m: map[string]*memoEntry{}}}
	// A shrunk case that could not be written under Out (a full disk)
	// does not lose the exploration: the report still has every failure
	// (a case's text is in it), and the error says what was not written.
	werr := writeFailures(ctx, cfg, s, e.byKey, e.first)
	prog.end()
	if ctx.Err() != nil && res.Interrupted == "" {
		res.Interrupted = driver.Interrupted(ctx)
	}
	for _, f := range e.byKey {
		res.Failures = append(res.Failures, *f)
	}
	sortFailures(res.Failures)
	res.DurationMs = cfg.Now().Sub(start).Milliseconds()
	if cfg.Out != "" {
		if err := WriteResult(filepath.Join(cfg.Out, ResultFile), res); err != nil {
			werr = errors.Join(werr, err)
		}
	}
	return res, werr
}

// cost records what the scenarios took: wall time elMs and, when cpuOK,
// CPU time cpuMs, both in milliseconds.
func (r *Result) cost(elMs, cpuMs int64, cpuOK bool) {
	r.ScenariosMs, r.ScenariosPerMinute, r.CPUMs, r.CPUPerScenarioMs = elMs, 0, 0, 0
	if elMs > 0 {
		r.ScenariosPerMinute = math.Round(float64(r.Scenarios)*60000/float64(elMs)*10) / 10
	}
	if !cpuOK {
		return
	}
	r.CPUMs = cpuMs
	if r.Scenarios > 0 {
		r.CPUPerScenarioMs = math.Round(float64(cpuMs)/float64(r.Scenarios)*1000) / 1000
	}
}

// maxCostMs bounds the times a report may give (a thousand years): the
// sums of Merge stay inside an int64.
const maxCostMs = 1000 * 366 * 24 * 3600 * 1000

// MaxScenarios bounds the scenarios of an exploration and its shard
// count: a scenario's index, the next index a shard draws and a shard's
// share of N then stay far inside an int (a trillion scenarios are some
// three hundred years at a hundred a second).
const MaxScenarios = 1_000_000_000_000

// CheckSize refuses a number of scenarios or shards beyond MaxScenarios,
// whose indexes would overflow.
func CheckSize(n, shards int) error {
	if n > MaxScenarios {
		return fmt.Errorf("explore: %d scenarios: at most %d (use a time budget for an open-ended run)", n, MaxScenarios)
	}
	if shards > MaxScenarios {
		return fmt.Errorf("explore: %d shards: at most %d", shards, MaxScenarios)
	}
	return nil
}

// withDefaults checks c and fills in what it leaves unset; a run of the
// exploration writes no evidence and runs every scenario once.
func (c *Config) withDefaults() error {
	if c.N <= 0 && c.For <= 0 {
		return errors.New("explore: give a number of scenarios or a time budget")
	}
	if err := CheckSize(c.N, c.Shards); err != nil {
		return err
	}
	if c.Shards <= 0 {
		c.Shards = 1
	}
	if c.Shard < 0 || c.Shard >= c.Shards {
		return fmt.Errorf("explore: shard %d of %d", c.Shard+1, c.Shards)
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.Run.Checks == nil {
		c.Run.Checks = conformance.Catalogue()
	}
	if c.Run.Parallel <= 0 {
		c.Run.Parallel = defaultParallel(c.Run.Agent)
	}
	if c.Run.Validator == nil {
		// One schema compilation for every batch, shrink and re-run.
		c.Run.Validator = sync.OnceValues(driver.NewSchemaValidator)
	}
	if c.Batch <= 0 {
		c.Batch = max(16, 2*c.Run.Parallel)
	}
	if c.ShrinkBatch <= 0 {
		c.ShrinkBatch = c.Run.Parallel
	}
	if c.ShrinkRuns <= 0 {
		c.ShrinkRuns = max(60, (960+c.ShrinkBatch-1)/c.ShrinkBatch)
	}
	if c.Confirm == 0 {
		c.Confirm = 2
	}
	c.Run.Progress, c.Run.Repeat, c.Run.Only = nil, 1, nil
	return nil
}

// inProcessParallel is how many scenarios run at once against an agent in
// process by default: it starts no process, and its scenarios spend most of
// their time in the settles after their prompts, not on the CPUs.
const inProcessParallel = 64

// defaultParallel is Run.Parallel's default for target t.
func defaultParallel(t driver.Target) int {
	if t.InProcess != nil {
		return inProcessParallel
	}
	return runtime.NumCPU()
}

// exploration is the state of one Explore: the scenarios drawn so far
// (next is the index this shard draws next, total its share of N, -1
// until the deadline) and each distinct failure with its first scenario,
// by failureKey.
type exploration struct {
	cfg         Config
	res         *Result
	gen         Generator
	oracle      *Oracle
	byKey       map[string]*Failure
	first       map[string]*conformance.Case
	next, total int
	// index is the batch being run's scenarios' indexes, by case ID
	// (draw); batch, under mu, each failure (failureKey) a scenario of it
	// confirmed alone in a fresh process as it ended, with its index
	// (confirmAlone): the batch's runs again alone confirm the failures
	// of the scenarios run again after them (e.confirmed), before tally
	// notes them in byKey.
	index map[string]int
	mu    sync.Mutex
	batch map[string]int
}

// draw generates the next batch of this shard's scenarios, marked by the
// oracle; index is each one's index, by case ID.
func (e *exploration) draw() (batch []*conformance.Case, index map[string]int) {
	index = map[string]int{}
	for len(batch) < e.cfg.Batch && (e.total < 0 || e.res.Scenarios+e.res.NotJudged+len(batch) < e.total) {
		c := e.gen.Scenario(e.next)
		e.oracle.Mark(c, e.cfg.Run.Checks)
		index[c.ID] = e.next
		batch = append(batch, c)
		e.next += e.cfg.Shards
	}
	return batch, index
}

// tally counts a batch's scenarios and notes each distinct failure: a
// check and the signature of what it said on the scenario.
func (e *exploration) tally(rep *conformance.Report, batch []*conformance.Case, index map[string]int, fails map[string][]string) {
	reasons := reasonsByCase(rep)
	// In the scenarios' order: a failure's first scenario is the lowest
	// that showed it, whichever of them a fresh process confirmed it on
	// (a scenario of this batch run again alone after a lower one may
	// have confirmed the lower one's failures), so that the same seed
	// names the same first scenario, and shrinks it, however the batch's
	// sessions met in the pool (and sharded or not).
	for _, cr := range rep.Cases {
		i, ok := index[cr.ID]
		if !ok {
			continue // the probe
		}
		if ev := cr.Evidence(); ev != nil && (ev.Interrupted != "" || ev.NotRun != "") {
			e.res.NotJudged++
			if e.res.Interrupted == "" {
				e.res.Interrupted = ev.Interrupted
			}
			continue
		}
		e.res.Scenarios++
		ev := cr.Evidence()
		switch {
		case ev == nil:
		case ev.PooledFailure != nil:
			e.res.PoolRanAlone++
		case len(ev.Procs) > 0 && ev.Procs[0].Pooled != "":
			e.res.PooledScenarios++
		}
		// Not run again alone (confirmed): its failures of kinds already
		// confirmed count as seen pooled, not as confirmed hits.
		unconfirmed := ev != nil && ev.NotRunAgain != ""
		known := false
		c := caseByID(batch, cr.ID)
		for _, id := range fails[cr.ID] {
			reason := reasons[cr.ID+"\x00"+id]
			sig := signature(c, reason)
			key := failureKey(id, sig)
			f := e.byKey[key]
			if f == nil {
				f = &Failure{Check: id, Signature: sig, Seed: e.cfg.Seed, Index: i, Reason: reason}
				e.byKey[key] = f
				e.first[key] = c
			}
			if unconfirmed {
				f.PooledHits++
				known = true
				continue
			}
			f.Hits++
		}
		if known {
			e.res.PooledKnown++
		}
	}
}

// confirmAlone is the exploration's conformance.Config.ConfirmedAlone:
// the failures a scenario of the batch confirmed alone in a fresh process
// as it ended (of the checks that fail a run), for e.confirmed.
func (e *exploration) confirmAlone(c *conformance.Case, failed map[string]string) {
	i, ok := e.index[c.ID]
	if !ok {
		return // the probe
	}
	required := (&conformance.Report{Strict: e.cfg.Run.Strict}).Required
	e.mu.Lock()
	defer e.mu.Unlock()
	for id, reason := range failed {
		k := slices.IndexFunc(e.cfg.Run.Checks, func(ch conformance.Check) bool { return ch.ID == id })
		if k < 0 || !required(e.cfg.Run.Checks[k]) {
			continue
		}
		if key := failureKey(id, signature(c, reason)); e.batch[key] == 0 {
			e.batch[key] = i + 1
		}
	}
}

// failureKindOf is the exploration's conformance.Config.FailureKind: the
// signature of a failure, what e.confirmed matches.
func failureKindOf(c *conformance.Case, _, reason string) string { return signature(c, reason) }

// confirmed is the exploration's conformance.Config.Confirmed: a scenario
// that failed as a session of a pooled process is not run again alone
// when every check it failed there that fails a run failed with the
// signature of a failure an earlier scenario confirmed in a fresh process
// (every failure of e.byKey was: run alone, or run again alone after it
// failed pooled). A failure of a new kind runs again alone, as it would
// without this: the failures an exploration reports are each confirmed
// alone, and shrunk, in fresh processes.
func (e *exploration) confirmed(c *conformance.Case, failed map[string]string) string {
	var known []string
	required := (&conformance.Report{Strict: e.cfg.Run.Strict}).Required
	for _, id := range slices.Sorted(maps.Keys(failed)) {
		k := slices.IndexFunc(e.cfg.Run.Checks, func(ch conformance.Check) bool { return ch.ID == id })
		if k < 0 || !required(e.cfg.Run.Checks[k]) {
			continue // no failure of an exploration (failuresByCase)
		}
		sig := signature(c, failed[id])
		at := -1
		if f := e.byKey[failureKey(id, sig)]; f != nil {
			at = f.Index
		} else {
			e.mu.Lock()
			at = e.batch[failureKey(id, sig)] - 1
			e.mu.Unlock()
		}
		if at < 0 {
			return ""
		}
		known = append(known, fmt.Sprintf("%s %s (confirmed alone on scenario %d)", id, sig, at))
	}
	if len(known) == 0 {
		return ""
	}
	return fmt.Sprintf("failed as a session of a pooled process with the signatures of failures already confirmed alone in a fresh process: %s; not run again alone", strings.Join(known, ", "))
}

// writeFailures shrinks the first scenario of every failure and writes
// the shrunk case under cfg.Out. After a write fails it writes no more
// (every failure is still shrunk) and returns that error; Failure.Case is
// set for a case written.
func writeFailures(ctx context.Context, cfg Config, s shrinker, byKey map[string]*Failure, first map[string]*conformance.Case) error {
	var werr error
	fs := make([]Failure, 0, len(byKey))
	for _, f := range byKey {
		fs = append(fs, *f)
	}
	sortFailures(fs)
	keys := make([]string, len(fs))
	for k, f := range fs {
		keys[k] = failureKey(f.Check, f.Signature)
	}
	var budgetEnd time.Time
	if cfg.ShrinkFor > 0 {
		budgetEnd = cfg.Now().Add(cfg.ShrinkFor)
	}
	for k, key := range keys {
		f := byKey[key]
		id, sig := f.Check, f.Signature
		sh, err := shrunk{c: copyCase(first[key])}, error(nil)
		if cfg.ShrinkIf == nil || cfg.ShrinkIf(id) {
			s := s
			s.label, s.failure = fmt.Sprintf("%s %s (%d of %d)", id, sig, k+1, len(keys)), id+" "+sig
			if !budgetEnd.IsZero() {
				s.deadline = cfg.Now().Add(budgetEnd.Sub(cfg.Now()) / time.Duration(len(keys)-k))
			}
			sh, err = s.shrink(ctx, first[key], id, sig)
			if err == nil && cfg.Confirm > 0 && ctx.Err() == nil {
				f.Reruns, f.Reproduced, f.RerunsOf, err = s.confirm(ctx, sh.c, id, sig, cfg.Confirm)
			}
		}
		switch {
		case err != nil:
			f.ShrinkError = err.Error()
		case ctx.Err() != nil:
			f.ShrinkError = "interrupted"
		case sh.outOfTime:
			f.ShrinkError = fmt.Sprintf("its share of --shrink-for %s was spent after %d run(s): the case is the smallest found by then", cfg.ShrinkFor, sh.runs)
		}
		f.ShrinkRuns, f.ShrinkRunsShared, f.ShrunkReason = sh.runs, sh.shared, sh.reason
		name := caseDirName(id, sig)
		c := sh.c
		c.ID, c.Title = "", fmt.Sprintf("explored: %s fails, %s (seed %d, scenario %d, shrunk in %d runs)", id, sig, f.Seed, f.Index, f.ShrinkRuns)
		f.Steps, f.Requests, f.Turns = len(c.Steps), acpRequests(c), len(c.Script)
		header := []string{
			fmt.Sprintf("Found by todoharness conform --explore: check %s failed (%s) on scenario %d of seed %d", id, sig, f.Index, f.Seed),
			fmt.Sprintf("and was shrunk in %d run(s)%s. On that scenario: %s", f.ShrinkRuns, f.sharedRuns(), oneLine(f.Reason, 300)),
			reproduceLine(cfg.Reproduce),
		}
		f.CaseYAML = string(CaseYAML(c, header))
		if cfg.Out == "" || werr != nil {
			continue
		}
		// Never through a link under --out: each folder is made (or
		// must be) a real folder, and the file replaces what is there.
		if werr = writeCase(cfg.Out, name, f.CaseYAML); werr == nil {
			f.Case = filepath.Join(cfg.Out, FailuresDir, name, conformance.CaseFile)
		}
	}
	return werr
}

// writeCase writes out/FailuresDir/name/case.yaml, never through a link:
// each folder is made, or must be, a real folder, and the file replaces
// what is there.
func writeCase(out, name, text string) error {
	failures, err := safefile.MkdirInside(out, FailuresDir)
	if err != nil {
		return fmt.Errorf("explore: %w", err)
	}
	dir, err := safefile.MkdirInside(failures, name)
	if err != nil {
		return fmt.Errorf("explore: %w", err)
	}
	if err := safefile.WriteFile(filepath.Join(dir, conformance.CaseFile), []byte(text), 0o644); err != nil {
		return fmt.Errorf("explore: %w", err)
	}
	return nil
}

// reproduceLine is the header line that says how to run a shrunk case
// again: against the agent of the exploration, judging only the checks
// the case feeds (--fed-only: a kept case passes when it passes).
func reproduceLine(flags []string) string {
	if flags == nil {
		return "Reproduce: todoharness conform --no-builtin --fed-only --cases <this folder> (and the agent flags of the run that found it)."
	}
	args := make([]string, 0, len(flags))
	for _, f := range flags {
		args = append(args, shellQuote(f))
	}
	return "Reproduce: todoharness conform " + strings.Join(append(args, "--no-builtin --fed-only --cases <this folder>"), " ")
}

// shellQuote quotes s for a POSIX shell, on one line: as it is when it
// needs no quotes, in single quotes when it is printable, else as $'...'
// with escapes for what is invisible (control characters, bidi and
// zero-width marks), so a case file's comment shows the exact argument.
func shellQuote(s string) string {
	plain := func(r rune) bool {
		return r < utf8.RuneSelf && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("@%+=:,./_-", r))
	}
	if s != "" && strings.IndexFunc(s, func(r rune) bool { return !plain(r) }) < 0 {
		return s
	}
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0 {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	var b strings.Builder
	b.WriteString("$'")
	for _, r := range s {
		switch {
		case r == '\\' || r == '\'':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError:
			b.WriteString(`\xEF\xBF\xBD`)
		case !unicode.IsPrint(r) && r < 0x80:
			fmt.Fprintf(&b, `\x%02X`, r)
		case !unicode.IsPrint(r):
			fmt.Fprintf(&b, `\U%08X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// acpRequests counts the ACP requests a case sends past the handshake:
// newSession, prompt and loadSession steps (initialize and restart are
// the process's life, not the conversation).
func acpRequests(c *conformance.Case) int {
	n := 0
	for _, s := range c.Steps {
		switch s.Op {
		case driver.OpNewSession, driver.OpPrompt, driver.OpLoadSession:
			n++
		}
	}
	return n
}

func caseByID(cs []*conformance.Case, id string) *conformance.Case {
	for _, c := range cs {
		if c.ID == id {
			return c
		}
	}
	return nil
}

// failuresByCase lists, by case ID, the checks that failed there and fail
// a run (required, not expected by the baseline).
func failuresByCase(rep *conformance.Report) map[string][]string {
	out := map[string][]string{}
	for _, c := range rep.Checks {
		if !rep.Required(c.Check) {
			continue
		}
		for _, v := range c.Cases {
			if v.Outcome == conformance.Fail {
				out[v.Case] = append(out[v.Case], c.ID)
			}
		}
	}
	return out
}

// reasonsByCase is what each failed check said on each case, keyed case
// ID NUL check ID.
func reasonsByCase(rep *conformance.Report) map[string]string {
	out := map[string]string{}
	for _, c := range rep.Checks {
		for _, v := range c.Cases {
			if v.Outcome == conformance.Fail {
				out[v.Case+"\x00"+c.ID] = v.Reason
			}
		}
	}
	return out
}

// resolvePolicy is the policy the scenarios are marked under: the
// configured one, or under auto the one the agent's tool description
// states (read from one run of a scenario without calls).
func resolvePolicy(ctx context.Context, rc conformance.Config) (string, error) {
	p, err := conformance.ParsePolicy(rc.Policy)
	if err != nil || p != conformance.PolicyAuto {
		return p, err
	}
	rc.Cases = []*conformance.Case{{
		ID: "explore-policy", Title: "the policy the agent's todo tool states", Probe: true,
		Steps:  []driver.Step{{Op: driver.OpInitialize}, {Op: driver.OpNewSession}, {Op: driver.OpPrompt, Text: "Reply with the single word OK."}},
		Script: []mockmodel.Turn{{Text: "OK"}},
	}}
	rep, err := conformance.Run(ctx, rc)
	if err != nil {
		return "", err
	}
	return rep.Policy, nil
}

// WriteResult writes r as indented JSON to path, atomically (a link or
// anything else at path is replaced, never written through): the writer
// of --out/explore.json. A report a user names (conform merge
// --explore-json FILE) is written with EncodeResult through the CLI's
// report writer.
func WriteResult(path string, r *Result) error {
	b, err := EncodeResult(r)
	if err != nil {
		return err
	}
	if err := safefile.WriteFile(path, b, 0o644); err != nil {
		return fmt.Errorf("explore: %w", err)
	}
	return nil
}

// EncodeResult is r as indented JSON (the explore.json format).
func EncodeResult(r *Result) ([]byte, error) {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("explore: %w", err)
	}
	return append(b, '\n'), nil
}

// MaxResultBytes is the largest explore.json ReadResult reads: a report
// holds one failure per check, each with a shrunk case of a few KB.
const MaxResultBytes = 16 << 20

// ReadResult reads a report WriteResult wrote. The file must be a regular
// file (a link to one is followed; a FIFO or a device is refused, never
// waited on or read) of at most MaxResultBytes, and the report consistent
// (ParseResult). Errors name path.
func ReadResult(path string) (*Result, error) {
	b, err := safefile.ReadRegular(path, MaxResultBytes)
	if err != nil {
		return nil, fmt.Errorf("explore: %w", err)
	}
	return ParseResult(b, path)
}

// ParseResult decodes an explore.json (name is used in errors) and checks
// that it is one an exploration can have written: a shard within its
// count, no negative count, each failure's first scenario of the seed and
// of the shard, hit at least once and at most once per scenario judged,
// each failure (check and signature) once.
func ParseResult(data []byte, name string) (*Result, error) {
	var r Result
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("explore: %s: %w", name, err)
	}
	if err := r.validate(); err != nil {
		return nil, fmt.Errorf("explore: %s: %w", name, err)
	}
	r.from = name
	return &r, nil
}

// validate checks what ParseResult promises.
func (r *Result) validate() error {
	switch {
	case r.Shards < 1 || r.Shard < 0 || r.Shard >= r.Shards:
		return fmt.Errorf("shard %d of %d (fields \"shard\", 0-based, and \"shards\"): not a shard of the run", r.Shard, r.Shards)
	case CheckSize(r.N, r.Shards) != nil:
		return CheckSize(r.N, r.Shards)
	case r.N < 0 || r.Scenarios < 0 || r.NotJudged < 0 || r.DurationMs < 0 || r.CatalogueVersion < 0:
		return fmt.Errorf("a negative count (n %d, scenarios %d, notJudged %d, durationMs %d, catalogueVersion %d)", r.N, r.Scenarios, r.NotJudged, r.DurationMs, r.CatalogueVersion)
	case r.PooledScenarios < 0 || r.PoolRanAlone < 0 || r.PooledKnown < 0 || r.PooledKnown > r.PooledScenarios || r.PooledScenarios+r.PoolRanAlone > r.Scenarios:
		return fmt.Errorf("pooledScenarios %d, poolRanAlone %d, pooledKnown %d: want 0 or more, pooledKnown at most pooledScenarios, and the first two at most the %d scenarios judged together",
			r.PooledScenarios, r.PoolRanAlone, r.PooledKnown, r.Scenarios)
	case r.Pool != "" && r.Pool != conformance.PoolOn && r.Pool != conformance.PoolOff:
		return fmt.Errorf("pool %q: want %q or %q", r.Pool, conformance.PoolOn, conformance.PoolOff)
	case r.ScenariosMs < 0 || r.ScenariosMs > maxCostMs || r.CPUMs < 0 || r.CPUMs > maxCostMs || r.ScenariosPerMinute < 0 || r.CPUPerScenarioMs < 0:
		return fmt.Errorf("scenariosMs %d, cpuMs %d (want 0 to %d), scenariosPerMinute %g, cpuPerScenarioMs %g (want 0 or more): not the times of a run", r.ScenariosMs, r.CPUMs, int64(maxCostMs), r.ScenariosPerMinute, r.CPUPerScenarioMs)
	case r.FloorCPUMs < 0 || r.FloorSessions < 0 || r.CPUToFloor < 0 || (r.FloorCPUMs > 0 && r.FloorSessions == 0):
		return fmt.Errorf("floorCpuMs %g, floorSessions %d, cpuToFloor %g: want 0 or more, a floor with the sessions it is the median of", r.FloorCPUMs, r.FloorSessions, r.CPUToFloor)
	case r.PooledCPUMs < 0 || r.PooledCPUMs > maxCostMs || r.PooledToFloor < 0 || (r.PooledToFloor > 0 && (r.PooledCPUMs == 0 || r.FloorCPUMs == 0)):
		return fmt.Errorf("pooledCpuMs %g (want 0 to %d), pooledToFloor %g: want 0 or more, and a ratio only of a pooled scenario's CPU to a floor (floorCpuMs %g)",
			r.PooledCPUMs, int64(maxCostMs), r.PooledToFloor, r.FloorCPUMs)
	case r.PooledCPUMs > 0 && (r.PooledCPUNote != "" || r.Pool == conformance.PoolOff):
		return fmt.Errorf("pooledCpuMs %g with pool %q and pooledCpuNote %q: a pooled scenario's CPU is measured only with the pool on, and then has no note saying why it is not", r.PooledCPUMs, r.Pool, r.PooledCPUNote)
	}
	if r.N > 0 {
		if share := (r.N - r.Shard + r.Shards - 1) / r.Shards; r.Scenarios+r.NotJudged > share {
			return fmt.Errorf("%d scenarios judged and %d not: more than the %d of shard %d/%d of %d", r.Scenarios, r.NotJudged, share, r.Shard+1, r.Shards, r.N)
		}
	}
	seen := map[string]bool{}
	for i, f := range r.Failures {
		where := fmt.Sprintf("failures[%d] (check %q, signature %q)", i, f.Check, f.Signature)
		switch {
		case f.Check == "":
			return fmt.Errorf("failures[%d]: no check", i)
		case seen[failureKey(f.Check, f.Signature)]:
			return fmt.Errorf("%s: the failure comes twice", where)
		case f.Hits < 1 || f.PooledHits < 0 || f.Hits+f.PooledHits > r.Scenarios:
			return fmt.Errorf("%s: %d hits and %d pooled hits, of %d scenarios judged", where, f.Hits, f.PooledHits, r.Scenarios)
		case f.PooledHits > r.PooledKnown:
			return fmt.Errorf("%s: %d pooled hits, of %d scenarios not run again alone (pooledKnown)", where, f.PooledHits, r.PooledKnown)
		case f.Seed != r.Seed:
			return fmt.Errorf("%s: seed %d, the report's is %d", where, f.Seed, r.Seed)
		case f.Index < 0 || f.Index%r.Shards != r.Shard || (r.N > 0 && f.Index >= r.N):
			return fmt.Errorf("%s: scenario %d is not one of shard %d/%d", where, f.Index, r.Shard+1, r.Shards)
		case f.Steps < 0 || f.Requests < 0 || f.Turns < 0 || f.ShrinkRuns < 0 || f.Reruns < 0 || f.Reproduced < 0 || f.Reproduced > f.Reruns:
			return fmt.Errorf("%s: a negative count, or more re-runs reproduced (%d) than made (%d)", where, f.Reproduced, f.Reruns)
		case f.ShrinkRunsShared < 0 || f.ShrinkRunsShared > f.ShrinkRuns:
			return fmt.Errorf("%s: %d shrink runs shared, of %d", where, f.ShrinkRunsShared, f.ShrinkRuns)
		}
		seen[failureKey(f.Check, f.Signature)] = true
	}
	return nil
}

// source names r in errors: its file, when read from one.
func (r *Result) source() string {
	if r.from != "" {
		return " (" + r.from + ")"
	}
	return ""
}

// Merge joins the reports of the shards of one exploration into the
// report the whole run would give: scenarios and hits add up, and each
// failure keeps the first scenario (lowest index) of any shard, with its
// shrunk case. The shards must share the seed, N, the shard count, the
// agent, the policy, the dialect and the tool and catalogue versions,
// each must be consistent (ParseResult), and each shard must come once.
func Merge(rs []*Result) (*Result, error) {
	if len(rs) == 0 {
		return nil, errors.New("explore: merge: no report")
	}
	r0 := rs[0]
	out := &Result{Seed: r0.Seed, N: r0.N, Shards: 1, Agent: r0.Agent, Policy: r0.Policy, Dialect: r0.Dialect,
		ToolVersion: r0.ToolVersion, CatalogueVersion: r0.CatalogueVersion, Pool: r0.Pool, Protocol: r0.Protocol}
	seen := map[int]*Result{}
	byKey := map[string]*Failure{}
	// The shards' scenario times and CPU times add up: the merged rate is
	// that of one machine running every shard in turn.
	var elMs, cpuMs int64
	cpuAll := true
	for _, r := range rs {
		if err := r.validate(); err != nil {
			return nil, fmt.Errorf("explore: merge: shard%s: %w", r.source(), err)
		}
		if r.Seed != out.Seed || r.N != out.N || r.Shards != r0.Shards {
			return nil, fmt.Errorf("explore: merge: shard %d/%d%s (seed %d, n %d) is not of the run of shard %d/%d%s (seed %d, n %d)",
				r.Shard+1, r.Shards, r.source(), r.Seed, r.N, r0.Shard+1, r0.Shards, r0.source(), out.Seed, out.N)
		}
		for _, d := range []struct{ what, a, b string }{
			{"agent", r.Agent, r0.Agent}, {"policy", r.Policy, r0.Policy}, {"dialect", r.Dialect, r0.Dialect}, {"ACP protocol version", r.Protocol, r0.Protocol},
			{"tool version", r.ToolVersion, r0.ToolVersion}, {"pool", r.Pool, r0.Pool},
			{"catalogue version", fmt.Sprint(r.CatalogueVersion), fmt.Sprint(r0.CatalogueVersion)},
		} {
			if d.a != d.b {
				return nil, fmt.Errorf("explore: merge: shard %d/%d%s has %s %q, shard %d/%d%s has %q: not one run",
					r.Shard+1, r.Shards, r.source(), d.what, d.a, r0.Shard+1, r0.Shards, r0.source(), d.b)
			}
		}
		if prev := seen[r.Shard]; prev != nil {
			return nil, fmt.Errorf("explore: merge: shard %d/%d given twice%s%s", r.Shard+1, r.Shards, prev.source(), r.source())
		}
		seen[r.Shard] = r
		out.Scenarios += r.Scenarios
		out.NotJudged += r.NotJudged
		out.PooledScenarios += r.PooledScenarios
		out.PoolRanAlone += r.PoolRanAlone
		out.PooledKnown += r.PooledKnown
		if r.Interrupted != "" && out.Interrupted == "" {
			out.Interrupted = fmt.Sprintf("shard %d/%d: %s", r.Shard+1, r.Shards, r.Interrupted)
		}
		out.DurationMs = max(out.DurationMs, r.DurationMs)
		elMs, cpuMs = min(elMs+r.ScenariosMs, maxCostMs), min(cpuMs+r.CPUMs, maxCostMs)
		cpuAll = cpuAll && r.CPUMs > 0
		for _, f := range r.Failures {
			key := failureKey(f.Check, f.Signature)
			g := byKey[key]
			if g == nil {
				g = new(Failure)
				*g = f
				byKey[key] = g
				continue
			}
			hits, pooled := g.Hits+f.Hits, g.PooledHits+f.PooledHits
			if f.Index < g.Index {
				*g = f
			}
			g.Hits, g.PooledHits = hits, pooled
		}
	}
	if len(seen) != r0.Shards {
		return nil, fmt.Errorf("explore: merge: %d of %d shards given", len(seen), r0.Shards)
	}
	for _, f := range byKey {
		out.Failures = append(out.Failures, *f)
	}
	sortFailures(out.Failures)
	out.cost(elMs, cpuMs, cpuAll)
	if len(rs) == 1 {
		out.Floor = r0.Floor
	} else {
		out.FloorNote = "not merged: each shard's floor is the median of its own sessions (see the shards' reports)"
		if slices.ContainsFunc(rs, func(r *Result) bool { return r.PooledCPUMs > 0 || r.PooledCPUNote != "" }) {
			out.PooledCPUNote = "not merged: each shard's is that of its own pooled processes (see the shards' reports)"
		}
	}
	out.SetRatio(out.CPUPerScenarioMs)
	return out, nil
}

// sortFailures orders failures by check, then signature.
func sortFailures(fs []Failure) {
	sort.Slice(fs, func(i, j int) bool {
		if fs[i].Check != fs[j].Check {
			return fs[i].Check < fs[j].Check
		}
		return fs[i].Signature < fs[j].Signature
	})
}

// WriteSummary writes one line per distinct failure.
func (r *Result) WriteSummary(w io.Writer) error {
	shard := ""
	if r.Shards > 1 {
		shard = fmt.Sprintf(" (shard %d/%d)", r.Shard+1, r.Shards)
	}
	checks := map[string]bool{}
	for _, f := range r.Failures {
		checks[f.Check] = true
	}
	pool := ""
	if r.Pool != "" {
		pool = ", pool " + r.Pool
	}
	if r.Protocol != "" {
		pool += "; ACP protocol version " + r.Protocol
	}
	fmt.Fprintf(w, "explore: seed %d%s: %d scenario(s) judged against %s (policy %s%s), %d distinct failure(s) of %d check(s)\n", r.Seed, shard, r.Scenarios, r.Agent, r.Policy, pool, len(r.Failures), len(checks))
	if r.ScenariosMs > 0 {
		cpu := ""
		if r.CPUMs > 0 {
			cpu = fmt.Sprintf(", %s CPU a scenario (this process and the agent processes that ended)", conformance.RoundCPU(time.Duration(r.CPUPerScenarioMs*float64(time.Millisecond))))
		}
		fmt.Fprintf(w, "explore: the scenarios took %s: %.1f a minute%s\n", (time.Duration(r.ScenariosMs) * time.Millisecond).Round(10*time.Millisecond), r.ScenariosPerMinute, cpu)
	}
	if r.FloorSessions > 0 || r.FloorNote != "" {
		fmt.Fprintf(w, "explore: floor: %s\n", r.Floor.Describe("scenario"))
	}
	if r.PooledScenarios+r.PoolRanAlone > 0 {
		fmt.Fprintf(w, "explore: %d scenario(s) judged as sessions of pooled processes, %d failed there and were judged from a run again alone in a fresh process\n", r.PooledScenarios, r.PoolRanAlone)
	}
	if r.PooledKnown > 0 {
		fmt.Fprintf(w, "explore: %d scenario(s) failed as sessions of pooled processes with the signature of a failure already confirmed alone in a fresh process, and were not run again: counted as \"failed pooled\" under that failure, not as failures of their own\n", r.PooledKnown)
	}
	if r.NotJudged > 0 {
		why := "not run"
		if r.Interrupted != "" {
			why = "interrupted"
		}
		fmt.Fprintf(w, "explore: %d scenario(s) not judged (%s)\n", r.NotJudged, why)
	}
	for _, f := range r.Failures {
		where := f.Case
		if where == "" {
			where = "(not written: no --out)"
		}
		again := ""
		if f.Reruns > 0 {
			again = fmt.Sprintf("; fails %d of %d re-runs", f.Reproduced, f.Reruns)
			if f.RerunsOf != "" {
				again += fmt.Sprintf(" (%s's: the same case)", oneLine(f.RerunsOf, 80))
			}
		}
		pooled := ""
		if f.PooledHits > 0 {
			pooled = fmt.Sprintf(" (and %d failed pooled with its signature, already confirmed alone; not run again)", f.PooledHits)
		}
		fmt.Fprintf(w, "  FAIL %-20s %-28s %d scenario(s)%s, first: seed %d index %d; shrunk to %d step(s), %d turn(s)%s: %s\n       %s\n",
			f.Check, f.Signature, f.Hits, pooled, f.Seed, f.Index, f.Steps, f.Turns, again, where, oneLine(firstNonEmpty(f.ShrunkReason, f.Reason), 200))
		if f.ShrinkError != "" {
			fmt.Fprintf(w, "       shrink stopped early: %s\n", f.ShrinkError)
		}
	}
	if r.Interrupted != "" {
		fmt.Fprintf(w, "explore: INTERRUPTED: %s; what was not run is not judged\n", oneLine(r.Interrupted, 200))
	}
	_, err := fmt.Fprintln(w)
	return err
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}

// progress is the live line on a terminal, or whole lines in a log (every).
type progress struct {
	w        io.Writer
	every    time.Duration // > 0: whole lines, at most one per interval
	start    time.Time
	now      func() time.Time
	total    int
	deadline time.Time
	wrote    bool
	last     time.Time // when the last whole line was written
	shrink   string    // the label of the shrink the last line was about
	// cpu is the CPU time used since the start (conformance.ProcessCPU; nil: not
	// read).
	cpu func() time.Duration
}

// line writes s in place on a terminal, else as a whole line.
func (p *progress) line(s string) {
	if p.every > 0 {
		fmt.Fprintln(p.w, strings.TrimRight(s, " "))
		p.last = p.now()
		return
	}
	fmt.Fprint(p.w, "\r"+s)
	p.wrote = true
}

func (p *progress) update(done, failures int) {
	if p.w == nil {
		return
	}
	if p.every > 0 && !p.last.IsZero() && p.now().Sub(p.last) < p.every && done != p.total {
		return
	}
	el := p.now().Sub(p.start)
	rate := float64(done) / max(el.Seconds(), 1e-3)
	left := "?"
	switch {
	case p.total >= 0 && rate > 0:
		left = (time.Duration(float64(p.total-done)/rate) * time.Second).Round(time.Second).String()
	case !p.deadline.IsZero():
		left = p.deadline.Sub(p.now()).Round(time.Second).String()
	}
	of := ""
	if p.total >= 0 {
		of = fmt.Sprintf("/%d", p.total)
	}
	cpu := ""
	if p.cpu != nil && done > 0 {
		cpu = fmt.Sprintf(", %s CPU a scenario", conformance.RoundCPU(p.cpu()/time.Duration(done)))
	}
	p.line(fmt.Sprintf("explore: %d%s scenarios, %d failure(s), %.1f/s (%.0f a minute)%s, %s left   ", done, of, failures, rate, 60*rate, cpu, left))
}

// shrinking is the live line while a failure is shrunk.
func (p *progress) shrinking(label string, run, steps, turns int, deadline time.Time) {
	if p.w == nil {
		return
	}
	if p.every > 0 && label == p.shrink && p.now().Sub(p.last) < p.every {
		return
	}
	p.shrink = label
	left := ""
	if !deadline.IsZero() {
		left = fmt.Sprintf(", %s of its time left", max(0, deadline.Sub(p.now())).Round(time.Second))
	}
	p.line(fmt.Sprintf("explore: shrinking %s: run %d, %d step(s), %d turn(s)%s   ", label, run, steps, turns, left))
}

func (p *progress) end() {
	if p.wrote {
		fmt.Fprintln(p.w)
		p.wrote = false
	}
}
