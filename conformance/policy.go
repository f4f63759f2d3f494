package conformance

import (
	"fmt"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/harness/todolist"
)

// Policies: how many tasks may be in_progress at once. The contract's rule
// is single (at most one); the original implementation's current default
// composition sets allowParallelInProgress, and its tool description then
// tells the model to mark several tasks in progress when work runs in
// parallel. Under PolicyParallel, TW-VALID-TWOACTIVE is judged the other
// way: the two-active call must be accepted and shown in the plan.
const (
	PolicySingle   = string(todolist.Single)
	PolicyParallel = string(todolist.Parallel)
	// PolicyAuto reads the policy from the description of the todo tool
	// the agent offers the model (see DetectPolicy).
	PolicyAuto = "auto"
)

// ParsePolicy checks a --policy value; "" is PolicySingle.
func ParsePolicy(s string) (string, error) {
	switch s {
	case "":
		return PolicySingle, nil
	case PolicySingle, PolicyParallel, PolicyAuto:
		return s, nil
	}
	return "", fmt.Errorf("conformance: unknown policy %q (want %s, %s or %s)", s, PolicySingle, PolicyParallel, PolicyAuto)
}

// DetectPolicy reads the in_progress policy from a todo tool's description:
// parallel when it says several tasks may be in progress (in parallel, at
// once) and nothing limits them to one, single otherwise. why quotes what
// decided it. (The rules are todolist.DetectPolicy's, shared with `log
// check --policy auto`.)
func DetectPolicy(description string) (policy, why string) {
	p, why := todolist.DetectPolicy(description)
	return string(p), why
}

// policy is the policy the case is judged under, and where it comes from:
// the configured one, or under PolicyAuto the one the tool description of
// the agent's todo tool states (the first model request of the case that
// offers it).
func (ev *Evidence) policy() (policy, source string) {
	switch ev.Policy {
	case "", PolicySingle:
		return PolicySingle, "--policy single, the default"
	case PolicyParallel:
		return PolicyParallel, "--policy parallel"
	}
	for _, e := range ev.Journal {
		for _, t := range e.Tools {
			if t.Name == ev.Dialect.Tool {
				p, why := DetectPolicy(t.Description)
				return p, "--policy auto: " + why
			}
		}
	}
	return PolicySingle, "--policy auto: the agent offered no " + ev.Dialect.Tool + " tool to read a policy from"
}

// twoActive reports whether a scripted write's only fault is having more
// than one task in_progress: the write the policy decides.
func twoActive(w Write) bool {
	if !w.Shaped {
		return false
	}
	n := 0
	seen := map[string]bool{}
	for _, t := range w.Todos {
		if !todolist.KnownStatus(t.Status) {
			return false
		}
		if t.Status == todolist.StatusInProgress {
			n++
		}
		if todolist.Blank(t.Content) || seen[t.Content] {
			return false
		}
		seen[t.Content] = true
	}
	return n > 1
}

// evalTwoActive judges TW-VALID-TWOACTIVE under the case's policy: single
// as the other TW-VALID checks (rejected, the model sees an error, no
// plan); parallel the other way (accepted, and a plan shows the list).
// Either way the reason names the policy.
func evalTwoActive(ev *Evidence) verdict {
	pol, src := ev.policy()
	why := "policy " + pol + " (" + src + ")"
	if pol != PolicyParallel {
		v := evalRejected(ev)
		if v.Reason == "" {
			v.Reason = why
			return v
		}
		return v.suffixed("; " + why)
	}
	m := ev.match()
	n := 0
	for i, w := range m.writes {
		if !twoActive(w.Write) {
			continue
		}
		n++
		switch {
		case !w.Result.Found:
			return failf("%s: the model never saw a result for the two-active call %s (no later model request carries it)", why, w.CallID)
		case w.Result.IsError:
			return failf("%s: the two-active call %s was rejected: %q", why, w.CallID, driver.Truncate(w.Result.Text, 120))
		case m.planOf[i] < 0:
			return failf("%s: the two-active call %s was accepted but no plan shows its list %s%s", why, w.CallID, todosString(w.Todos), shownAfter(m, i))
		}
	}
	if n == 0 {
		return skipf("%s: the case has no call with two tasks in_progress", why)
	}
	return verdict{Outcome: Pass, Reason: why + ": judged the other way: two tasks in_progress were accepted and shown in the plan"}
}

// twoActiveCheck makes a TW-VALID check policy-aware.
func twoActiveCheck(c Check) Check {
	c.eval, c.seen = evalTwoActive, seenRule{seenTwoActive, sayTwoActive}
	return c
}

// runPolicy is the policy of the run for the report: the one the first
// case with a model request was judged under, and why.
func runPolicy(evs []*Evidence) (string, string) {
	for _, ev := range evs {
		if len(ev.Journal) > 0 {
			return ev.policy()
		}
	}
	if len(evs) > 0 {
		return evs[0].policy()
	}
	return PolicySingle, "--policy single, the default"
}
