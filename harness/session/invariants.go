package session

import (
	"encoding/json"
	"fmt"
	"strconv"
)

// InvariantError is a violation of the session log invariants. Line is the
// 1-based line in the log file when the event came from a file (0 otherwise).
type InvariantError struct {
	// ID names the invariant (see Invariants).
	ID   string
	Seq  int
	Line int
	Type string
	Msg  string
}

func (e *InvariantError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("line %d: event seq %d (%s): %s", e.Line, e.Seq, e.Type, e.Msg)
	}
	return fmt.Sprintf("event seq %d (%s): %s", e.Seq, e.Type, e.Msg)
}

// Checker validates events one at a time against the log invariants:
// seq strictly increasing; every known event inside an open turn; step-scoped
// events name the open turn and step; a tool/result follows its tool/call;
// surface metadata only on surface types. It never looks at how many todos
// are in_progress, so a log written under the parallel policy always replays.
// Unknown event types are passed through (only seq is checked).
//
// The zero Checker is ready for the first event of a log.
type Checker struct {
	started  bool
	lastSeq  int
	turn     int // open turn number, 0 when none
	turnOpen bool
	step     int
	stepOpen bool
	calls    map[string]bool // tool calls seen and not yet answered
	pending  []string        // the same ids, in call order
}

// PendingCalls returns the ids of the open turn's tool calls that have no
// tool/result yet, in call order.
func (c *Checker) PendingCalls() []string {
	if !c.turnOpen {
		return nil
	}
	return append([]string(nil), c.pending...)
}

// State reports the open turn and step (0 when none).
func (c *Checker) State() (turn, step int) {
	t, s := 0, 0
	if c.turnOpen {
		t = c.turn
	}
	if c.stepOpen {
		s = c.step
	}
	return t, s
}

// LastTurn is the number of the most recent turn started (open or closed).
func (c *Checker) LastTurn() int { return c.turn }

// Check validates e against everything seen so far and, when it is valid,
// records it. A rejected event leaves the checker unchanged.
func (c *Checker) Check(e Event) error { return c.check(e, false) }

// check is Check; validData says e.Data is known to be valid JSON (the
// log's own encoding of an appended event), so it is not validated again.
func (c *Checker) check(e Event, validData bool) error {
	fail := func(id, format string, args ...any) error {
		return &InvariantError{ID: id, Seq: e.Seq, Type: e.Type, Msg: fmt.Sprintf(format, args...)}
	}
	if e.Seq < 0 {
		return fail("LOG-SEQ", "seq %d is negative", e.Seq)
	}
	if c.started && e.Seq <= c.lastSeq {
		return fail("LOG-SEQ", "seq %d is not greater than the previous seq %d", e.Seq, c.lastSeq)
	}
	if e.Type == "" {
		return fail("LOG-TYPE", "missing event type")
	}
	known := knownTypes[e.Type]
	if known {
		if surfaceTypes[e.Type] {
			if e.SurfaceOp == "" {
				return fail("LOG-SURFACE", "surface event without surfaceOp")
			}
			for _, src := range e.SourceEventSeqs {
				if src < 0 || src >= e.Seq {
					return fail("LOG-SURFACE", "sourceEventSeqs names seq %d, which is not an earlier event", src)
				}
			}
		} else if e.SurfaceOp != "" || e.SourceEventSeqs != nil {
			return fail("LOG-SURFACE", "surface metadata (surfaceOp/sourceEventSeqs) on a non-surface event")
		}
		if err := c.checkStructure(e, validData, fail); err != nil {
			return err
		}
	}
	c.started = true
	c.lastSeq = e.Seq
	return nil
}

// failFunc makes the *InvariantError of the event being checked.
type failFunc func(id, format string, args ...any) error

// checkStructure checks e's place in the turns, steps and tool calls.
func (c *Checker) checkStructure(e Event, validData bool, fail failFunc) error {
	sc := scope{Turn: noNum, Step: noNum}
	if len(e.Data) > 0 {
		if err := decodeScope(e.Data, validData, &sc); err != nil {
			return fail("LOG-DATA", "data is not a JSON object: %v", err)
		}
	}
	switch e.Type {
	case TypeTurnStart:
		return c.turnStart(sc, fail)
	case TypeTurnEnd:
		return c.turnEnd(sc, fail)
	}
	if !c.turnOpen {
		return fail("LOG-TURN", "event outside an open turn")
	}
	switch e.Type {
	case TypeStepStart:
		return c.stepStart(sc, fail)
	case TypeStepEnd:
		return c.stepEnd(sc, fail)
	}
	if stepScoped[e.Type] {
		if !c.stepOpen {
			return fail("LOG-STEP", "step-scoped event outside an open step")
		}
		if sc.Turn != c.turn || sc.Step != c.step {
			return fail("LOG-STEP", "names turn %s step %s but turn %d step %d is open", fmtNum(sc.Turn), fmtNum(sc.Step), c.turn, c.step)
		}
	}
	switch e.Type {
	case TypeToolCall:
		return c.toolCall(sc, fail)
	case TypeToolResult:
		return c.toolResult(e, sc, fail)
	}
	return nil
}

func (c *Checker) turnStart(sc scope, fail failFunc) error {
	if c.turnOpen {
		return fail("LOG-TURN", "turn/start while turn %d is still open", c.turn)
	}
	if sc.Turn == noNum {
		return fail("LOG-TURN", "turn/start without data.turn")
	}
	if sc.Turn <= c.turn {
		return fail("LOG-TURN", "turn %d does not follow turn %d", sc.Turn, c.turn)
	}
	c.turn, c.turnOpen, c.stepOpen = sc.Turn, true, false
	c.calls = map[string]bool{}
	c.pending = c.pending[:0]
	return nil
}

func (c *Checker) turnEnd(sc scope, fail failFunc) error {
	if !c.turnOpen {
		return fail("LOG-TURN", "turn/end with no open turn")
	}
	if sc.Turn != c.turn {
		return fail("LOG-TURN", "turn/end names turn %s but turn %d is open", fmtNum(sc.Turn), c.turn)
	}
	if c.stepOpen {
		return fail("LOG-STEP", "turn/end while step %d is still open", c.step)
	}
	c.turnOpen = false
	return nil
}

func (c *Checker) stepStart(sc scope, fail failFunc) error {
	if c.stepOpen {
		return fail("LOG-STEP", "step/start while step %d is still open", c.step)
	}
	if sc.Turn != c.turn {
		return fail("LOG-STEP", "step/start names turn %s but turn %d is open", fmtNum(sc.Turn), c.turn)
	}
	if sc.Step == noNum {
		return fail("LOG-STEP", "step/start without data.step")
	}
	c.step, c.stepOpen = sc.Step, true
	return nil
}

func (c *Checker) stepEnd(sc scope, fail failFunc) error {
	if !c.stepOpen {
		return fail("LOG-STEP", "step/end with no open step")
	}
	if sc.Turn != c.turn || sc.Step != c.step {
		return fail("LOG-STEP", "step/end names turn %s step %s but turn %d step %d is open", fmtNum(sc.Turn), fmtNum(sc.Step), c.turn, c.step)
	}
	c.stepOpen = false
	return nil
}

func (c *Checker) toolCall(sc scope, fail failFunc) error {
	if sc.CallID == "" {
		return fail("LOG-TOOL", "tool/call without callId")
	}
	if !c.calls[sc.CallID] {
		c.pending = append(c.pending, sc.CallID)
	}
	c.calls[sc.CallID] = true
	return nil
}

func (c *Checker) toolResult(e Event, sc scope, fail failFunc) error {
	if sc.CallID == "" {
		sc.CallID = toolResultCallID(e.Data)
	}
	if !c.calls[sc.CallID] {
		return fail("LOG-TOOL", "tool/result for callId %q does not follow a tool/call with that id", sc.CallID)
	}
	delete(c.calls, sc.CallID)
	for i, id := range c.pending {
		if id == sc.CallID {
			c.pending = append(c.pending[:i:i], c.pending[i+1:]...)
			break
		}
	}
	return nil
}

// toolResultCallID finds the call id of a tool/result in the original's
// current shape, where it is not at the top of data but in the message:
// data.message.source.callId, or the toolCallId of its tool-result part.
func toolResultCallID(data []byte) string {
	var d struct {
		Message struct {
			Source struct {
				CallID string `json:"callId"`
			} `json:"source"`
			Content []struct {
				ToolCallID string `json:"toolCallId"`
			} `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(data, &d) != nil {
		return ""
	}
	if d.Message.Source.CallID != "" {
		return d.Message.Source.CallID
	}
	for _, p := range d.Message.Content {
		if p.ToolCallID != "" {
			return p.ToolCallID
		}
	}
	return ""
}

func fmtNum(n int) string {
	if n == noNum {
		return "<none>"
	}
	return strconv.Itoa(n)
}

// CheckEvents validates a whole event list from a fresh checker.
func CheckEvents(events []Event) error {
	var c Checker
	for _, e := range events {
		if err := c.Check(e); err != nil {
			return err
		}
	}
	return nil
}
