package conformance

import (
	"reflect"
	"testing"
)

// The memo keeps the sessions the updates name (updateSessions): once a
// case is warmed, ACP-SESSION-1, the plans and the tool calls' statuses
// read it instead of decoding every session/update again, and it says
// what a case judged without the memo says.
func TestJudgeMemoKeepsTheUpdateSessions(t *testing.T) {
	for _, ev := range savedRun(t, "reference") {
		if ev.Case.ID != "load-after-several" {
			continue
		}
		e := judgeable(ev, sharedValidator(t))
		e.memo = &judgeMemo{}
		e.warmJudgeMemo(sharedValidator(t))
		fresh := judgeable(ev, sharedValidator(t))
		fresh.memo = nil
		want := fresh.updateSessions()
		if want.updates == 0 {
			t.Fatal("the case has no session/update: the test sees nothing")
		}
		if got := e.updateSessions(); !reflect.DeepEqual(got, want) {
			t.Fatalf("memo %+v, without it %+v", got, want)
		}
		if v, w := evalSession(e), evalSession(fresh); !reflect.DeepEqual(v, w) {
			t.Fatalf("ACP-SESSION-1 from the memo %+v, without it %+v", v, w)
		}
		// Reading it decodes nothing: a handful of allocations, where
		// finding it again decodes each of the case's messages.
		if n := testing.AllocsPerRun(20, func() { e.updateSessions() }); n > 2 {
			t.Errorf("updateSessions on a warmed case: %.0f allocations, want none (it is found again)", n)
		}
		// A copy of another size finds it again.
		half := *e
		half.Wire = half.Wire[:len(half.Wire)/2]
		halfFresh := half
		halfFresh.memo = nil
		got, w := half.updateSessions(), halfFresh.updateSessions()
		if got.updates == want.updates || !reflect.DeepEqual(got, w) {
			t.Errorf("half the wire: %d updates from the memo, %d without it, the whole case %d", got.updates, w.updates, want.updates)
		}
		return
	}
	t.Fatal("the saved reference run has no case load-after-several")
}
