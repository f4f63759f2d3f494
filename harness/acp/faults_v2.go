package acp

import (
	"fmt"
	"slices"

	"github.com/todoharness/todoharness/harness/session"
)

// The faults of the protocol surfaces beyond v1's plan: each breaks one
// promise of ACP version 2 (Draft) or of v1's unstable plan operations.
const (
	// FaultNoIdle never sends v2's idle state_update: a turn's foreground
	// work never ends (the prompt is still acknowledged).
	FaultNoIdle Fault = "no-idle"
	// FaultIdleWithoutStopReason sends v2's idle state_update at the end
	// of a turn without its stopReason.
	FaultIdleWithoutStopReason Fault = "idle-without-stopreason"
	// FaultNewPlanIDEachWrite sends each write of the todo list as
	// plan_update under a planId of its own (the write's event seq), so a
	// client keeps every write as another plan.
	FaultNewPlanIDEachWrite Fault = "new-planid-each-write"
	// FaultPlanOnV2 sends v1's plan update on a v2 connection, which has
	// no such update (v2 replaced it with plan_update).
	FaultPlanOnV2 Fault = "plan-on-v2"
	// FaultPlanUpdateUnadvertised sends plan_update to a v1 client that
	// did not advertise the plan capability (it MUST get plan).
	FaultPlanUpdateUnadvertised Fault = "plan-update-unadvertised"
)

// SurfaceFaults lists the faults of v2 and of v1's plan operations,
// sorted; KnownFaults has them too (conformance/breakage has a row for
// each, judged on a run that offers the version the fault breaks).
func SurfaceFaults() []Fault {
	out := []Fault{FaultIdleWithoutStopReason, FaultNewPlanIDEachWrite, FaultNoIdle, FaultPlanOnV2, FaultPlanUpdateUnadvertised}
	slices.Sort(out)
	return out
}

// idle is v2's end of a turn under the idle faults: none (no-idle), or
// idle without its stop reason (idle-without-stopreason).
func (p faultyPresenter) idle(stopReason, errText string) []Update {
	switch {
	case p.faults.Has(FaultNoIdle):
		return nil
	case p.faults.Has(FaultIdleWithoutStopReason):
		return p.plain.idle("", errText)
	}
	return p.plain.idle(stopReason, errText)
}

// surfacePlan is the plan update of a todo/write under the surface faults,
// and whether one applies on m's surface: v1's plan on v2 (plan-on-v2), a
// planId per write (new-planid-each-write, wherever plan_update is sent),
// plan_update to a v1 client that did not advertise plan
// (plan-update-unadvertised).
func (m *faultyMapper) surfacePlan(e session.Event) ([]Update, bool, error) {
	var fault Fault
	switch {
	case m.surface == surfaceV2 && m.faults.Has(FaultPlanOnV2):
		fault = FaultPlanOnV2
	case m.surface != surfaceV1 && m.faults.Has(FaultNewPlanIDEachWrite):
		fault = FaultNewPlanIDEachWrite
	case m.surface == surfaceV1 && m.faults.Has(FaultPlanUpdateUnadvertised):
		fault = FaultPlanUpdateUnadvertised
	default:
		return nil, false, nil
	}
	var d session.TodoWrite
	if err := e.Decode(&d); err != nil {
		return nil, true, err
	}
	switch fault {
	case FaultPlanOnV2:
		return []Update{{SDK: PlanUpdate(d.Todos)}}, true, nil
	case FaultNewPlanIDEachWrite:
		return []Update{PlanItemsUpdate(fmt.Sprintf("%s-%d", PlanID, e.Seq), d.Todos)}, true, nil
	}
	return []Update{PlanItemsUpdate(PlanID, d.Todos)}, true, nil
}
