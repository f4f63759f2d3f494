package conformance

import (
	"fmt"
	"runtime/debug"
	"sync"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// early runs the suite's long work in the background from the start of
// the suite, several at once, in the order it was declared: the waits of
// one (a hanging agent's case timeout, a slow interpreter) then overlap
// the work of the others and of the specs that run meanwhile, instead of
// adding up. A spec declares its work when the tree is built (earlyWork)
// and gets the result when it runs, waiting for it if need be. When the
// suite runs filtered (--ginkgo.focus, label filters, ...), nothing starts
// in the background: each work starts when a spec first asks for it.
//
// The work runs outside any spec, so it must not use Expect: it returns
// an error instead, which the spec that asks for it fails on.
var early = &earlyQueue{}

// earlyAtOnce bounds the works running at once (each starts a catalogue's
// cases at once).
const earlyAtOnce = 2

type earlyQueue struct {
	mu   sync.Mutex
	jobs []*earlyJob
}

type earlyJob struct {
	name string
	fn   func() (any, error)
	once sync.Once
	done chan struct{}
	val  any
	err  error
}

// earlyWork declares fn as background work and returns the getter a spec
// calls for its result (it fails the spec when fn failed). Work that
// mostly waits (a case timeout) is declared waits: it starts before the
// rest.
func earlyWork[T any](name string, waits bool, fn func() (T, error)) func() T {
	j := &earlyJob{name: name, done: make(chan struct{}), fn: func() (any, error) { return fn() }}
	early.mu.Lock()
	if waits {
		early.jobs = append([]*earlyJob{j}, early.jobs...)
	} else {
		early.jobs = append(early.jobs, j)
	}
	early.mu.Unlock()
	return func() T {
		j.start()
		<-j.done
		Expect(j.err).NotTo(HaveOccurred(), "background work %q", j.name)
		v, _ := j.val.(T)
		return v
	}
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

// startAll starts every declared job in the background, earlyAtOnce at a
// time in the order declared, unless the suite runs filtered.
func (q *earlyQueue) startAll() {
	cfg, _ := GinkgoConfiguration()
	if len(cfg.FocusStrings)+len(cfg.SkipStrings)+len(cfg.FocusFiles)+len(cfg.SkipFiles) > 0 || cfg.LabelFilter != "" {
		return
	}
	q.mu.Lock()
	jobs := append([]*earlyJob(nil), q.jobs...)
	q.mu.Unlock()
	sem := make(chan struct{}, earlyAtOnce)
	go func() {
		for _, j := range jobs {
			sem <- struct{}{}
			go func() {
				defer func() { <-sem }()
				j.start()
			}()
		}
	}()
}
