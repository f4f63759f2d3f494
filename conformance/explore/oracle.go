package explore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/todo"
	"github.com/todoharness/todoharness/harness/todolist"
	"github.com/todoharness/todoharness/harness/tools"
)

// Rules a todo_write call can break, as the oracle names them. Each but
// RuleShape is what one TW-VALID check judges (see ruleChecks).
const (
	RuleEmpty     = "empty"      // content "" (TW-VALID-EMPTY)
	RuleBlank     = "whitespace" // content only whitespace (TW-VALID-WS)
	RuleDuplicate = "duplicate"  // two items with the same trimmed content (TW-VALID-DUP)
	RuleTwoActive = "two-active" // more than one in_progress (TW-VALID-TWOACTIVE; accepted under --policy parallel)
	RuleStatus    = "status"     // a status outside the enum (TW-VALID-BADSTATUS)
	RuleNotArray  = "not-array"  // todos is not an array (TW-VALID-NOTARRAY)
	RuleShape     = "shape"      // another schema rule: a missing field, a wrong type (no TW-VALID check; TW-PLAN-1 sees an accepted one)
)

// ruleChecks ties a rule to the catalogue check that judges a call
// breaking it.
var ruleChecks = map[string]string{
	RuleEmpty: conformance.TWValidEmpty, RuleBlank: conformance.TWValidWS, RuleDuplicate: conformance.TWValidDup,
	RuleTwoActive: conformance.TWValidTwoActive, RuleStatus: conformance.TWValidBadStatus, RuleNotArray: conformance.TWValidNotArray,
}

// validPrefix marks the checks that judge rejections: a case lists only
// those of the rules its calls break, so that a failure names its rule.
const validPrefix = "TW-VALID-"

// cancelChecks are the checks a case with a cancelled prompt feeds (the
// Always checks aside): what a client must see after session/cancel. The
// contract (the todo_write RFC) says nothing of a cancel, so the oracle
// expects no more than the catalogue's own cancel case does
// (fixtures/conformance/cancel-after-write): each accepted write shows
// its plan, the client ends the turn on the last one, a load replays it,
// and the plans are well formed. What the model reads next (counts,
// history) and the rejections (TW-VALID) are not judged on such a case: a
// cancelled turn's later requests may never come.
func cancelChecks() []string {
	return []string{conformance.TWPlan1, conformance.TWFinal1, conformance.TWLoad1, conformance.TWLoad2, conformance.TWPlanPriority1, conformance.TWPlanNonNull1}
}

// Decision is the oracle's word on one todo_write call.
type Decision struct {
	// Accept: the contract requires the agent to accept the call (and
	// show its list); else to refuse it.
	Accept bool
	// Rule is the rule the call breaks ("" for none); a call with two in
	// progress under --policy parallel is accepted with Rule RuleTwoActive.
	Rule string
	// Why is the reference tool's own refusal ("" when accepted).
	Why string
}

// Oracle decides every todo_write call with the reference harness's own
// rules: the tool's JSON schema (todo.Schema, validated by the tool
// registry exactly as the harness does) and then todolist.Validate under
// the policy. Calls are decided in canonical form; the runner
// translates them into the agent's dialect, as it does for the built-in
// cases.
type Oracle struct {
	policy string
	reg    *tools.Registry
}

// NewOracle returns the oracle for a policy: conformance.PolicySingle or
// conformance.PolicyParallel ("" is single).
func NewOracle(policy string) (*Oracle, error) {
	switch policy {
	case "", conformance.PolicySingle:
		policy = conformance.PolicySingle
	case conformance.PolicyParallel:
	default:
		return nil, fmt.Errorf("explore: oracle: policy %q: want %s or %s (resolve auto first)", policy, conformance.PolicySingle, conformance.PolicyParallel)
	}
	reg := tools.NewRegistry()
	_, err := reg.Register(tools.Tool{
		Name: todo.ToolName, Parameters: todo.Schema(),
		Execute: func(_ context.Context, _ tools.Exec, raw json.RawMessage) (tools.Result, error) {
			var a struct {
				Todos []session.TodoItem `json:"todos"`
			}
			if err := json.Unmarshal(raw, &a); err != nil {
				return tools.Result{}, err
			}
			if _, err := todolist.Validate(a.Todos, todolist.Policy(policy)); err != nil {
				return tools.Result{}, err
			}
			return tools.TextResult("accepted"), nil
		},
	})
	if err != nil {
		return nil, fmt.Errorf("explore: oracle: %w", err)
	}
	return &Oracle{policy: policy, reg: reg}, nil
}

// Policy is the policy the oracle decides under.
func (o *Oracle) Policy() string { return o.policy }

// Decide says whether the contract accepts a call with these canonical
// arguments, and which rule it breaks.
func (o *Oracle) Decide(args any) Decision {
	raw, err := json.Marshal(args)
	if err != nil {
		return Decision{Rule: RuleShape, Why: err.Error()}
	}
	res := o.reg.Execute(context.Background(), tools.Exec{}, todo.ToolName, string(raw))
	d := Decision{Accept: !res.IsError, Rule: classify(args)}
	if res.IsError {
		d.Why = res.Text()
		if d.Rule == "" {
			d.Rule = RuleShape
		}
	} else if d.Rule != RuleTwoActive {
		d.Rule = ""
	}
	return d
}

// classify names the first rule the arguments break, in the order the
// harness applies them: the schema (todos an array, each item an object
// with string content and status in the enum), then the value rules item
// by item (blank content, duplicate content), then the in_progress count.
func classify(args any) string {
	m, ok := args.(map[string]any)
	if !ok {
		return RuleShape
	}
	v, present := m["todos"]
	if !present {
		return RuleShape
	}
	list, ok := v.([]any)
	if !ok {
		return RuleNotArray
	}
	status := false
	for _, it := range list {
		im, ok := it.(map[string]any)
		if !ok {
			return RuleShape
		}
		_, ok1 := im["content"].(string)
		s, ok2 := im["status"].(string)
		if !ok1 || !ok2 {
			return RuleShape
		}
		status = status || !todolist.KnownStatus(s)
	}
	if status {
		return RuleStatus
	}
	seen := map[string]bool{}
	active := 0
	for _, it := range list {
		im := it.(map[string]any)
		c := im["content"].(string)
		t := todolist.Trim(c)
		switch {
		case c == "":
			return RuleEmpty
		case t == "":
			return RuleBlank
		case seen[t]:
			return RuleDuplicate
		}
		seen[t] = true
		if im["status"] == todolist.StatusInProgress {
			active++
		}
	}
	if active > 1 {
		return RuleTwoActive
	}
	return ""
}

// Mark applies the oracle to a case: every todo_write call gets reject set
// to the oracle's refusal, and the case feeds every check of the catalogue
// a scenario can give evidence for: all but the Always ones (they judge
// every case anyway) and, of the TW-VALID checks, those of the rules its
// calls break; a case with a cancelled prompt feeds only cancelChecks.
// It returns the rules broken, sorted.
func (o *Oracle) Mark(c *conformance.Case, cat []conformance.Check) []string {
	rules := map[string]bool{}
	for i := range c.Script {
		for j := range c.Script[i].ToolCalls {
			tc := &c.Script[i].ToolCalls[j]
			if tc.Name != driver.DialectTodoWrite {
				continue
			}
			d := o.Decide(tc.Arguments)
			tc.Reject = !d.Accept
			if d.Rule != "" {
				rules[d.Rule] = true
			}
		}
	}
	feeds := map[string]bool{}
	for r := range rules {
		if id, ok := ruleChecks[r]; ok {
			feeds[id] = true
		}
	}
	var only []string // nil: no cancel, every check
	if slices.ContainsFunc(c.Steps, func(st driver.Step) bool { return st.Cancel }) {
		only = cancelChecks()
	}
	c.Checks = c.Checks[:0]
	for _, ch := range cat {
		if ch.Always || (strings.HasPrefix(ch.ID, validPrefix) && !feeds[ch.ID]) {
			continue
		}
		if only != nil && !slices.Contains(only, ch.ID) {
			continue
		}
		c.Checks = append(c.Checks, ch.ID)
	}
	out := make([]string, 0, len(rules))
	for r := range rules {
		out = append(out, r)
	}
	sort.Strings(out)
	return out
}
