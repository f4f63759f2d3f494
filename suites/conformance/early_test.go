package conformance

import (
	"fmt"
	"os"
	"runtime/debug"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/conformance"
)

// early runs the suite's work in the background from the start of the
// suite. The works that wait (a hanging agent's case timeout) all start at
// once, first; the others start earlyAtOnce at a time, the works whose
// agents are processes spread evenly among those whose agents run in this
// process (see earlyKind). The waits then overlap the work, and the runs
// overlap each other's settle windows and file system waits, instead of
// adding up: the cores stay busy. A spec declares its work when the tree
// is built (earlyWork) and gets the result when it runs, waiting for it if
// need be; such specs have SpecPriority(-1) (Ginkgo orders the top-level
// containers by their highest priority: those whose specs all wait run
// after those with specs that do their own work). When the suite runs
// filtered (--ginkgo.focus, label filters, ...), nothing starts in the
// background at its start: each work starts when a spec first asks for it
// (with the other works of its group, earlyGroupWork).
//
// The work runs outside any spec, so it must not use Expect: it returns
// an error instead, which the spec that asks for it fails on.
var early = &earlyQueue{}

// earlyAtOnce bounds the works that compute at once (most run a catalogue,
// its cases at once: an in-process run keeps about half a core busy, the
// rest of its time it waits out settle windows and the file system); the
// works that wait run beside them, unbounded.
const earlyAtOnce = 6

// earlyKind is what a work spends its time on, which decides when it
// starts.
type earlyKind int

const (
	// inProcess work runs agents in this process: its CPU is this
	// process's, and it waits on the file system (each case's folders,
	// the agents' fsynced sessions).
	inProcess earlyKind = iota
	// processes work starts agent processes (the example agent in
	// Python, this test binary): its CPU is theirs. Spread among the
	// inProcess work, it keeps the cores busy while that waits.
	processes
	// waits work mostly waits out case timeouts: it starts at once.
	waits
)

// earlyQueue is the declared background work.
type earlyQueue struct {
	mu   sync.Mutex
	jobs []*earlyJob
	// all says every job has been started (the suite runs unfiltered);
	// started names the groups whose jobs have been (startGroup).
	all     bool
	started map[string]bool
	// tmp is the folder the works make their folders in (earlyTempDir),
	// removed after the suite.
	tmp string
}

// earlyJob is one background work and its result.
type earlyJob struct {
	name string
	// group names the works a container's specs judge together ("" for
	// none; see earlyGroupWork).
	group string
	kind  earlyKind
	fn    func() (any, error)
	once  sync.Once
	done  chan struct{}
	val   any
	err   error
}

// earlyWork declares fn, work of that kind, as background work and
// returns the getter a spec calls for its result (it fails the spec when
// fn failed).
func earlyWork[T any](name string, kind earlyKind, fn func() (T, error)) func() T {
	return earlyGroupWork("", name, kind, fn)
}

// earlyGroupWork is earlyWork for one of the works of group, which a
// container's specs judge together: when the suite runs filtered, the first
// of them a spec asks for starts them all, as the unfiltered suite starts
// every work, instead of one after another as the specs ask.
func earlyGroupWork[T any](group, name string, kind earlyKind, fn func() (T, error)) func() T {
	j := &earlyJob{name: name, group: group, kind: kind, done: make(chan struct{}), fn: func() (any, error) { return fn() }}
	early.mu.Lock()
	early.jobs = append(early.jobs, j)
	early.mu.Unlock()
	return func() T {
		if group != "" {
			early.startGroup(group)
		}
		j.start()
		<-j.done
		Expect(j.err).NotTo(HaveOccurred(), "background work %q", j.name)
		v, _ := j.val.(T)
		return v
	}
}

// earlyRun declares a catalogue run (runE) of the in-process agent that
// target builds when the run starts (the programs under test are known
// from BeforeSuite on) as background work of group ("" for none).
func earlyRun(group, name string, target func() conformance.Target, mod func(*conformance.Config)) func() *conformance.Report {
	return earlyGroupWork(group, name, inProcess, func() (*conformance.Report, error) { return runE(target(), mod) })
}

// start runs the job once (a panic is its error).
func (j *earlyJob) start() {
	j.once.Do(func() {
		defer close(j.done)
		defer func() {
			if r := recover(); r != nil {
				j.err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
			}
		}()
		j.val, j.err = j.fn()
	})
}

// startAll keeps tmp as the works' folder and starts every declared job,
// unless the suite runs filtered.
func (q *earlyQueue) startAll(tmp string) {
	cfg, _ := GinkgoConfiguration()
	filtered := len(cfg.FocusStrings)+len(cfg.SkipStrings)+len(cfg.FocusFiles)+len(cfg.SkipFiles) > 0 || cfg.LabelFilter != ""
	q.mu.Lock()
	q.tmp = tmp
	q.all = !filtered
	jobs := append([]*earlyJob(nil), q.jobs...)
	q.mu.Unlock()
	if !filtered {
		startJobs(jobs)
	}
}

// startGroup starts the jobs of group, once (none when every job has been
// started).
func (q *earlyQueue) startGroup(group string) {
	q.mu.Lock()
	if q.all || q.started[group] {
		q.mu.Unlock()
		return
	}
	if q.started == nil {
		q.started = map[string]bool{}
	}
	q.started[group] = true
	var jobs []*earlyJob
	for _, j := range q.jobs {
		if j.group == group {
			jobs = append(jobs, j)
		}
	}
	q.mu.Unlock()
	startJobs(jobs)
}

// startJobs starts the jobs in the background: the waiting ones at once,
// the others earlyAtOnce at a time in computeOrder.
func startJobs(jobs []*earlyJob) {
	for _, j := range jobs {
		if j.kind == waits {
			go j.start()
		}
	}
	sem := make(chan struct{}, earlyAtOnce)
	go func() {
		for _, j := range computeOrder(jobs) {
			sem <- struct{}{}
			go func() {
				defer func() { <-sem }()
				j.start()
			}()
		}
	}()
}

// computeOrder is the order the jobs that compute start in: the inProcess
// ones in the order declared, with the processes ones (in the order
// declared) spread evenly among them, so that both kinds run side by side
// from the first to the last.
func computeOrder(jobs []*earlyJob) []*earlyJob {
	var in, procs []*earlyJob
	for _, j := range jobs {
		switch j.kind {
		case inProcess:
			in = append(in, j)
		case processes:
			procs = append(procs, j)
		}
	}
	n, p := len(in)+len(procs), len(procs)
	out := make([]*earlyJob, 0, n)
	for i := range n {
		// A processes job when fewer than their share of the first i+1
		// have been taken.
		if len(procs) > 0 && (len(in) == 0 || (p-len(procs))*n < (i+1)*p) {
			out, procs = append(out, procs[0]), procs[1:]
		} else {
			out, in = append(out, in[0]), in[1:]
		}
	}
	return out
}

// earlyTempDir makes a folder for a work's files (a spec's GinkgoT().TempDir
// is not there yet when the work runs); it is removed after the suite.
func earlyTempDir() (string, error) {
	early.mu.Lock()
	tmp := early.tmp
	early.mu.Unlock()
	dir, err := os.MkdirTemp(tmp, "work-")
	if err != nil {
		return "", fmt.Errorf("background work folder: %w", err)
	}
	return dir, nil
}
