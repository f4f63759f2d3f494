package session

import (
	"context"
	"errors"
	"io"

	"github.com/todoharness/todoharness/harness/todolist"
)

// CheckHooks receive what Check finds as it finds it; nil hooks are skipped.
type CheckHooks struct {
	// Unknown is called on the first event of each type this package does
	// not model (such events are kept and only their seq is checked).
	Unknown func(typ string, line int)
	// Finding is called for each way a todo/write breaks the contract.
	Finding func(e Event, line int, f todolist.Finding)
}

// CheckSummary is what Check read.
type CheckSummary struct {
	Header   Header
	Format   string
	Events   int
	Findings int
	// OpenTurn and OpenStep are the turn and step the log ends inside (0
	// when it ends between turns).
	OpenTurn, OpenStep int
}

// Check streams a log from rd to its end: every line against the reading
// rules, every event against the invariants (the first violation stops it:
// an *InvariantError with its Line, or a *LineError), and every todo/write
// against the todo_write contract under p (findings are counted and
// reported through hooks, and do not stop it). It holds one event at a
// time, and stops when ctx is done.
func Check(ctx context.Context, rd *Reader, p todolist.Policy, hooks CheckHooks) (CheckSummary, error) {
	var sum CheckSummary
	h, err := rd.Header(ctx)
	if err != nil {
		return sum, err
	}
	sum.Header = h
	var c Checker
	var unknown map[string]bool
	for {
		e, err := rd.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return sum, err
		}
		sum.Events++
		if !knownTypes[e.Type] && !unknown[e.Type] {
			if unknown == nil {
				unknown = map[string]bool{}
			}
			unknown[e.Type] = true
			if hooks.Unknown != nil {
				hooks.Unknown(e.Type, rd.Line())
			}
		}
		if err := c.Check(e); err != nil {
			var ie *InvariantError
			if errors.As(err, &ie) {
				ie.Line = rd.Line()
			}
			return sum, err
		}
		if e.Type == TypeTodoWrite {
			for _, f := range todolist.CheckWrite(e.Data, p) {
				sum.Findings++
				if hooks.Finding != nil {
					hooks.Finding(e, rd.Line(), f)
				}
			}
		}
	}
	sum.Format = rd.Format()
	sum.OpenTurn, sum.OpenStep = c.State()
	return sum, nil
}
