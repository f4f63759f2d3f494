package unit

import (
	"encoding/json"

	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/tools"
	"github.com/todoharness/todoharness/internal/testutil"

	. "github.com/onsi/ginkgo/v2"
)

// fixedClock makes event times deterministic.
func fixedClock() int64 { return 1000 }

// newLog is an in-memory, invariant-checked log with a fixed clock.
func newLog(opts ...session.Option) *session.Log {
	return session.New("s-1", "/work", append([]session.Option{session.WithClock(fixedClock)}, opts...)...)
}

// mustAppend appends and fails the spec on error.
func mustAppend(l *session.Log, typ string, data any, opts ...session.AppendOption) session.Event {
	GinkgoHelper()
	e, err := l.Append(typ, data, opts...)
	Expect(err).NotTo(HaveOccurred())
	return e
}

// openTurn starts turn (and step 1 of it) on l.
func openTurn(l *session.Log, turn int) {
	GinkgoHelper()
	mustAppend(l, session.TypeTurnStart, session.TurnStart{Turn: turn, Trigger: session.Trigger{Kind: "message"}})
	mustAppend(l, session.TypeStepStart, session.Step{Turn: turn, Step: 1})
}

// closeTurn ends step 1 and the turn.
func closeTurn(l *session.Log, turn int) {
	GinkgoHelper()
	mustAppend(l, session.TypeStepEnd, session.Step{Turn: turn, Step: 1})
	mustAppend(l, session.TypeTurnEnd, session.TurnEnd{Turn: turn, Reason: session.TurnEndReason{Kind: session.TurnCompleted}})
}

// testAgent is the smallest tools.Agent: it owns one log.
type testAgent struct{ log *session.Log }

func (a *testAgent) Session() *session.Log { return a.log }

// newAgent returns an agent whose log has turn 1 step 1 open, as it is while
// the agent loop executes a tool call.
func newAgent() *testAgent {
	GinkgoHelper()
	l := newLog()
	openTurn(l, 1)
	return &testAgent{log: l}
}

var _ tools.Agent = (*testAgent)(nil)

// todoWrites returns the data of every todo/write event of l.
func todoWrites(l *session.Log) []session.TodoWrite {
	GinkgoHelper()
	var out []session.TodoWrite
	for _, e := range l.Events() {
		if e.Type == session.TypeTodoWrite {
			var d session.TodoWrite
			Expect(e.Decode(&d)).To(Succeed())
			out = append(out, d)
		}
	}
	return out
}

// rawJSON marshals v (a test input) to a string.
func rawJSON(v any) string {
	GinkgoHelper()
	b, err := json.Marshal(v)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}

// golden compares actual with golden/unit/<name>.golden.
func golden(name string, actual []byte) {
	GinkgoHelper()
	testutil.AssertGolden(GinkgoTB(), "unit", name, actual)
}
