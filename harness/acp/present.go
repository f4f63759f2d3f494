package acp

import (
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/tools"
)

// presenter is how the bridge shows a session's events to the client: the
// mapping of one stream of events to updates, and the sending of one
// prompt turn's updates. The correct agent's (plainPresenter) maps with a
// Mapper and sends each update at once; the fault layer (faults.go) wraps
// both.
type presenter interface {
	// mapper returns the mapping of one stream of events for the
	// connection's surface; replay selects session/load's flavour.
	mapper(replay bool, s surface) eventMapper
	// turnSender returns the sender of one prompt turn's updates, each
	// sent through send.
	turnSender(send func(Update) error) turnSender
	// idle returns v2's updates that end a turn's foreground work: the
	// idle state_update with its stop reason (stateUpdate's arguments).
	idle(stopReason, errText string) []Update
}

// eventMapper turns one event into its updates (Mapper.Map).
type eventMapper interface {
	Map(e session.Event) ([]Update, error)
}

// turnSender sends the updates of a prompt turn's events. Not safe for
// concurrent use (the turn's subscriber holds its lock).
type turnSender interface {
	// event sends (or holds) the updates ups of one event of type typ.
	event(typ string, ups []Update) error
	// flush sends whatever is held, at the end of the turn.
	flush() error
}

// plainPresenter is the correct agent's presenter.
type plainPresenter struct {
	tools *tools.Registry
}

func (p plainPresenter) mapper(replay bool, s surface) eventMapper {
	return newMapper(p.tools, replay, s)
}

func (plainPresenter) idle(stopReason, errText string) []Update {
	return []Update{stateUpdate("idle", stopReason, errText)}
}

func (p plainPresenter) turnSender(send func(Update) error) turnSender { return directSender(send) }

// directSender sends every update at once, in order.
type directSender func(Update) error

func (send directSender) event(_ string, ups []Update) error { return sendAll(send, ups) }

func (directSender) flush() error { return nil }

// sendAll sends every update, returning the first error.
func sendAll(send func(Update) error, ups []Update) error {
	var first error
	for _, u := range ups {
		if err := send(u); err != nil && first == nil {
			first = err
		}
	}
	return first
}
