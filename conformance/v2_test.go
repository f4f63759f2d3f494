package conformance

import (
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/driver"
)

// offerV2 has a run offer protocol version 2.
func offerV2(c *Config) { c.Offer = driver.Offer{ACPVersion: driver.ACPv2} }

// A fake agent that speaks v2 correctly passes every check judged on the
// v2 surface; the v1 plan fallback rule does not apply there, and says
// so (not a pass).
func TestRunV2FakeAgentPasses(t *testing.T) {
	t.Parallel()
	rep := runFake(t, "ok,v2", offerV2)
	if !rep.OK || len(rep.FailedIDs()) > 0 {
		dumpFailures(t, rep)
		t.Fatalf("failed: %v", rep.FailedIDs())
	}
	if rep.Protocol.Offered != driver.ACPv2 || rep.Protocol.Negotiated != driver.ACPv2 {
		t.Errorf("protocol %+v, want offered and negotiated 2", rep.Protocol)
	}
	if s := rep.Protocol.String(); !strings.HasPrefix(s, "2 (offered 2") {
		t.Errorf("protocol line %q", s)
	}
	for _, c := range rep.Checks {
		switch {
		case c.ID == ACPPlanFallback1:
			if c.Outcome != NA || !strings.Contains(c.Reason, "protocol version 2 has no plan capability") {
				t.Errorf("%s: %s %q, want n/a saying v2 has no plan capability", c.ID, c.Outcome, c.Reason)
			}
		case c.Shared && rep.Pool == PoolOff:
			if c.Outcome != NA {
				t.Errorf("%s: %s %q, want n/a (a process per case)", c.ID, c.Outcome, c.Reason)
			}
		case c.Outcome != Pass:
			t.Errorf("%s: %s %s", c.ID, c.Outcome, c.Reason)
		}
	}
	// What a pass saw is said in v2's words.
	for id, want := range map[string]string{
		ACPInit1:   "protocolVersion 2",
		ACPTurn1:   "ended by an idle state_update with its stopReason",
		TWLoad1:    "session/resumes replayed",
		TWLoadCap1: "with capabilities.session (session/resume)",
		TWFinal1:   "session/resumes, each ending on the last accepted list",
	} {
		c, _ := rep.Check(id)
		if seen := rep.PassSeen(c); !strings.Contains(seen, want) {
			t.Errorf("%s passed, saying %q: want it to say %q", id, seen, want)
		}
	}
	// The plans judged were plan_updates, the turns ended at idle, the
	// load was a resume from the start.
	var plans, idles, resumes int
	for _, cr := range rep.Cases {
		ev := cr.Evidence()
		for _, m := range ev.Wire {
			switch {
			case m.UpdateKind() == "plan":
				t.Errorf("case %s: a v1 plan on the wire of a v2 run (#%d)", cr.ID, m.Seq)
			case m.Method == "session/load":
				t.Errorf("case %s: session/load sent on v2 (#%d)", cr.ID, m.Seq)
			case m.Method == "session/resume" && m.Dir == driver.Sent:
				if !strings.Contains(m.Line, `"replayFrom":{"type":"start"}`) {
					t.Errorf("case %s: resume without replayFrom start: %s", cr.ID, m.Line)
				}
				resumes++
			}
		}
		plans += len(ev.plans())
		for _, s := range ev.Steps {
			if s.Op == driver.OpPrompt && s.IdleSeq > 0 {
				idles++
			}
		}
	}
	if plans == 0 || idles == 0 || resumes == 0 {
		t.Errorf("%d plans, %d turns ended at idle, %d resumes: the v2 surface was not exercised", plans, idles, resumes)
	}
	// Its evidence, written and read back (--out, then --judge), keeps
	// what was offered and negotiated, and is judged the same.
	var back []*Evidence
	for _, cr := range rep.Cases {
		b, err := MarshalEvidence(cr.Evidence())
		if err != nil {
			t.Fatalf("case %s: %v", cr.ID, err)
		}
		ev, err := UnmarshalEvidence(b, cr.ID)
		if err != nil {
			t.Fatalf("case %s: %v", cr.ID, err)
		}
		back = append(back, ev)
	}
	again, err := Judge(back, JudgeConfig{Validator: sharedValidator(t)})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(again.Protocol, rep.Protocol) || !again.OK {
		dumpFailures(t, again)
		t.Errorf("judged again from its evidence: protocol %+v, ok %v; the run said %+v", again.Protocol, again.OK, rep.Protocol)
	}
}

// An agent offered 2 that answers 1 runs the v1 catalogue, passes it, and
// the report says so.
func TestRunV1AgentOfferedV2(t *testing.T) {
	t.Parallel()
	rep := runFake(t, "ok", offerV2)
	if !rep.OK {
		dumpFailures(t, rep)
		t.Fatalf("a v1 agent offered 2 failed: %v", rep.FailedIDs())
	}
	if rep.Protocol.Offered != driver.ACPv2 || rep.Protocol.Negotiated != driver.ACPv1 {
		t.Errorf("protocol %+v, want offered 2, negotiated 1", rep.Protocol)
	}
	if s := rep.Protocol.String(); !strings.Contains(s, "the agent answered 1, so the v1 catalogue ran") {
		t.Errorf("protocol line %q does not say the v1 catalogue ran", s)
	}
}

// Each v2 fault of the fake, and the v1 plan operations sent without the
// client's capability, fail exactly these checks.
func TestRunV2FakeAgentFaults(t *testing.T) {
	t.Parallel()
	plain := func(c *Config) {}
	advertise := func(c *Config) { c.Offer = driver.Offer{PlanOps: true} }
	// An agent that never reports idle keeps every turn waiting until the
	// wires are quiet for 10 settle windows (at least 5 s): one case.
	oneCase := func(c *Config) {
		offerV2(c)
		c.Dialect = driver.DialectTodoWrite
		c.Cases = slices.DeleteFunc(c.Cases, func(k *Case) bool { return k.ID != "plan-basic" })
	}
	for _, tc := range []struct {
		mode  string
		offer func(*Config)
		fails []string
		says  map[string]string // check -> a part of its reason
	}{
		{"v2,v2-no-idle", oneCase, []string{ACPTurn1}, map[string]string{ACPTurn1: "no idle state_update ended the turn"}},
		{"v2,v2-idle-no-reason", offerV2, []string{ACPTurn1}, map[string]string{ACPTurn1: "has no stopReason"}},
		{"v2,v2-no-cancel", offerV2, []string{ACPTurn1}, map[string]string{ACPTurn1: `a cancelled turn MUST end idle with stopReason "cancelled"`}},
		{"v2,v2-new-planid", offerV2, []string{TWPlan1}, map[string]string{TWPlan1: "the contract expects one plan, its planId kept across writes"}},
		{"v2,v2-plan-removed", offerV2, []string{TWEmpty1, TWFinal1, TWPlan1}, map[string]string{TWPlan1: "the contract never removes the todo list"}},
		{"v2,v2-plan-v1", offerV2, []string{TWEmpty1, TWFinal1, TWLoad1, TWLoad2, TWPlan1, TWReplace1}, map[string]string{TWPlan1: "v1 `plan` update on a protocol version 2 connection"}},
		{"plan-ops-always", plain, []string{ACPPlanFallback1, ACPSchema2, TWEmpty1, TWFinal1, TWLoad1, TWLoad2, TWPlan1, TWReplace1}, map[string]string{ACPPlanFallback1: "did not advertise clientCapabilities.plan"}},
		// Sent only to a client that advertised plan: plan_update is v1's
		// draft (ACP-SCHEMA-2, INFO, lists it), and the plans pass.
		{"plan-ops", plain, nil, nil},
		{"plan-ops", advertise, []string{ACPSchema2}, map[string]string{ACPSchema2: "plan_update"}},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			t.Parallel()
			rep := runFake(t, tc.mode, tc.offer)
			if got := rep.FailedIDs(); !reflect.DeepEqual(got, tc.fails) {
				dumpFailures(t, rep)
				t.Fatalf("failed %v, want %v", got, tc.fails)
			}
			for id, want := range tc.says {
				c, _ := rep.Check(id)
				var all []string
				for _, cv := range c.Cases {
					for _, f := range cv.Failures {
						all = append(all, f.Reason)
					}
				}
				if !strings.Contains(strings.Join(all, "\n"), want) {
					t.Errorf("%s: no failure says %q:\n%s", id, want, strings.Join(all, "\n"))
				}
			}
		})
	}
}
