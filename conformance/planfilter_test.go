package conformance

import (
	"fmt"
	"testing"

	"github.com/todoharness/todoharness/driver"
)

// planFilterSeeds are session/update lines the filter of findPlans must
// let through (a kind it reads, however spelled) or may skip.
var planFilterSeeds = []string{
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"hi"}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"plan","entries":[]}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"pl\u0061n","entries":[]}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"\u0070\u006c\u0061\u006e_update","plan":{"type":"items","items":[]}}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool\u005fcall","toolCallId":"c"}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"s","update":{"sessionUpdate":"tool_call_update","toolCallId":"c"}}}`,
	`{"jsonrpc":"2.0","method":"session/update","PARAMS":{"UPDATE":{"sessionUpdate":"plan","entries":[]}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"SessionUpdate":"agent_message_chunk","sessionUpdate":"plan"}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"plan","SessionUpdate":"agent_message_chunk"}}}`,
	`{"jsonrpc":"2.0","method":"session/update","params":{"update":{"sessionUpdate":"current_mode_update","currentModeId":"a"}}}`,
	`not json`,
}

// planFilterSound fails t when findPlans' filter (mayBePlanOrCall) would
// skip a line whose update findPlans reads: a plan or a tool call.
func planFilterSound(t *testing.T, line string) (skipped bool) {
	t.Helper()
	_, kind, _ := planUpdate(line)
	read := kind == "plan" || kind == "plan_update" || kind == "tool_call" || kind == "tool_call_update"
	if read && !mayBePlanOrCall(line) {
		t.Fatalf("the filter skips a %s update: %q", kind, line)
	}
	return !mayBePlanOrCall(line)
}

// findPlans skips without decoding only the session/update lines that
// carry none of the kinds it reads (most are text chunks): over every
// saved run's wire and lines that spell a kind with escapes or hide it
// behind a key another case of letters shadows, no plan or tool call is
// skipped, and the filter does skip the chunks.
func TestThePlanFilterSkipsNoPlanOrCall(t *testing.T) {
	t.Parallel()
	lines := 0
	skipped := 0
	for _, s := range planFilterSeeds {
		if planFilterSound(t, s) {
			skipped++
		}
	}
	for _, name := range savedRunNames(t) {
		for _, ev := range savedRun(t, name) {
			for _, m := range ev.Wire {
				if m.Method == "session/update" {
					lines++
					if planFilterSound(t, m.Line) {
						skipped++
					}
				}
			}
		}
	}
	if lines < 1000 || skipped == 0 {
		t.Fatalf("%d session/update lines saved, %d skipped: the corpus moved, or the filter skips nothing", lines, skipped)
	}
	t.Logf("%d of %d saved session/update lines and seeds skipped", skipped, lines+len(planFilterSeeds))
}

func FuzzPlanFilter(f *testing.F) {
	for _, s := range planFilterSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) { planFilterSound(t, line) })
}

// A text chunk costs findPlans no decoding: the plans of a case with 200
// more chunks allocate as many times as without them (each was decoded
// whole before, a map and its members).
func TestFindPlansDecodesNoTextChunk(t *testing.T) {
	e := savedCase(t, "reference", "plan-basic")
	chunk := -1
	for i, m := range e.Wire {
		if m.Dir == driver.Received && m.UpdateKind() == "agent_message_chunk" && !mayBePlanOrCall(m.Line) {
			chunk = i
		}
	}
	if chunk < 0 {
		t.Fatal("the case has no text chunk: the test sees nothing")
	}
	allocs := func(extra int) float64 {
		c := *e
		c.Wire = append([]driver.WireMsg(nil), e.Wire...)
		for i := range extra {
			m := e.Wire[chunk]
			m.Seq = 100_000 + i
			c.Wire = append(c.Wire, m)
		}
		c.memo = &judgeMemo{}
		c.updateSessions() // found once, as the judge does
		if got, want := fmt.Sprint(c.findPlans()), fmt.Sprint(e.findPlans()); got != want {
			t.Fatalf("with %d more chunks the plans are %s, want %s", extra, got, want)
		}
		return testing.AllocsPerRun(10, func() { c.findPlans() })
	}
	if base, more := allocs(0), allocs(200); more-base > 20 {
		t.Errorf("findPlans: %g allocations, %g with 200 more text chunks: want about the same (a chunk is not decoded)", base, more)
	}
}
