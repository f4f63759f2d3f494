package explore

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/driver"
	conformancefixtures "github.com/todoharness/todoharness/fixtures/conformance"
	"github.com/todoharness/todoharness/mockmodel"
)

// The oracle marks the built-in cases exactly as their authors did.
func TestOracleAgreesWithTheBuiltinMarks(t *testing.T) {
	cases := builtinCases(t)
	o, err := NewOracle(conformance.PolicySingle)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, c := range cases {
		for i, turn := range c.Script {
			for j, tc := range turn.ToolCalls {
				if tc.Name != driver.DialectTodoWrite {
					continue
				}
				n++
				if d := o.Decide(tc.Arguments); d.Accept == tc.Reject {
					t.Errorf("%s: script[%d].toolCalls[%d]: the case marks reject=%v, the oracle accept=%v (%s, %s)", c.Source, i, j, tc.Reject, d.Accept, d.Rule, d.Why)
				}
			}
		}
	}
	if n < 10 {
		t.Fatalf("only %d todo_write calls in the built-in cases", n)
	}
}

func TestOracleRules(t *testing.T) {
	item := func(c, s any) map[string]any { return map[string]any{"content": c, "status": s} }
	list := func(items ...any) map[string]any { return map[string]any{"todos": append([]any{}, items...)} }
	for _, tc := range []struct {
		name     string
		args     any
		policy   string
		accept   bool
		rule     string
		feedsTwo bool
	}{
		{"valid", list(item("a", "in_progress"), item("b", "pending")), "", true, "", false},
		{"empty list", list(), "", true, "", false},
		{"extra field", list(map[string]any{"content": "a", "status": "pending", "priority": "high"}), "", true, "", false},
		{"empty content", list(item("", "pending")), "", false, RuleEmpty, false},
		{"blank content", list(item(" \t", "pending")), "", false, RuleBlank, false},
		{"duplicate after trim", list(item("a", "pending"), item(" a ", "completed")), "", false, RuleDuplicate, false},
		{"two active", list(item("a", "in_progress"), item("b", "in_progress")), "", false, RuleTwoActive, true},
		{"two active, parallel", list(item("a", "in_progress"), item("b", "in_progress")), conformance.PolicyParallel, true, RuleTwoActive, true},
		{"status casing", list(item("a", "In_Progress")), "", false, RuleStatus, false},
		{"status empty", list(item("a", "")), "", false, RuleStatus, false},
		{"not an array", map[string]any{"todos": "a"}, "", false, RuleNotArray, false},
		{"null", map[string]any{"todos": nil}, "", false, RuleNotArray, false},
		{"missing todos", map[string]any{}, "", false, RuleShape, false},
		{"missing status", list(map[string]any{"content": "a"}), "", false, RuleShape, false},
		{"content a number", list(item(42, "pending")), "", false, RuleShape, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := NewOracle(tc.policy)
			if err != nil {
				t.Fatal(err)
			}
			d := o.Decide(tc.args)
			if d.Accept != tc.accept || d.Rule != tc.rule {
				t.Errorf("Decide = accept %v rule %q (%s), want accept %v rule %q", d.Accept, d.Rule, d.Why, tc.accept, tc.rule)
			}
		})
	}
}

// Same seed, same scenarios; another seed, others.
func TestGeneratorIsAFunctionOfSeedAndIndex(t *testing.T) {
	a, b, c := Generator{Seed: 7}, Generator{Seed: 7}, Generator{Seed: 8}
	same := 0
	for i := range 50 {
		x, y, z := a.Scenario(i), b.Scenario(i), c.Scenario(i)
		if !reflect.DeepEqual(x, y) {
			t.Fatalf("scenario %d differs between two generators of seed 7", i)
		}
		if reflect.DeepEqual(x.Script, z.Script) {
			same++
		}
	}
	if same > 5 {
		t.Errorf("%d of 50 scenarios are the same for seeds 7 and 8", same)
	}
}

// A scenario far out (a shard of a huge --explore draws such indexes) is
// drawn with the largest limits, not with an item length that overflowed
// to a negative number (math/rand's IntN panicked on it), and an
// exploration of more scenarios or shards than MaxScenarios is refused
// before anything runs.
func TestHugeIndexesAndSizes(t *testing.T) {
	for seed := range uint64(20) {
		c := Generator{Seed: seed}.Scenario(2_500_000_000_000_000_000)
		if err := c.Validate(conformance.Catalogue()); err != nil {
			t.Errorf("seed %d: %v", seed, err)
		}
	}
	if items, runes := limits(math.MaxInt); items != 300 || runes != 4096 {
		t.Errorf("limits(MaxInt) = %d, %d, want 300, 4096", items, runes)
	}
	for _, cfg := range []Config{{N: 3_000_000_000_000_000_000, Shards: 4}, {N: 10, Shard: 0, Shards: 2_500_000_000_000_000_000}} {
		if _, err := Explore(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "at most") {
			t.Errorf("N %d, %d shards: %v, want a refusal", cfg.N, cfg.Shards, err)
		}
	}
}

// Every generated scenario is a valid case, and its case.yaml loads back
// to the same case.
func TestScenariosRoundTripThroughCaseYAML(t *testing.T) {
	cat := conformance.Catalogue()
	o, _ := NewOracle(conformance.PolicySingle)
	g := Generator{Seed: 1}
	rules := map[string]bool{}
	maxItems := 0
	for i := range 400 {
		c := g.Scenario(i)
		for _, r := range o.Mark(c, cat) {
			rules[r] = true
		}
		if err := c.Validate(cat); err != nil {
			t.Fatalf("scenario %d: %v", i, err)
		}
		if !historySafe(c) {
			t.Fatalf("scenario %d: an item is spelled by the case's texts", i)
		}
		data := CaseYAML(c, []string{"a header"})
		back, err := conformance.LoadCase(data, "case.yaml", c.ID)
		if err != nil {
			t.Fatalf("scenario %d: %v\n%s", i, err, data)
		}
		if !reflect.DeepEqual(back.Steps, c.Steps) || !reflect.DeepEqual(back.Checks, c.Checks) {
			t.Fatalf("scenario %d: steps or checks differ after the round trip", i)
		}
		if len(back.Script) != len(c.Script) {
			t.Fatalf("scenario %d: %d turns back, want %d", i, len(back.Script), len(c.Script))
		}
		for k := range c.Script {
			w, g := c.Script[k], back.Script[k]
			if w.Text != g.Text || w.Reasoning != g.Reasoning || w.ChunkSize != g.ChunkSize || len(w.ToolCalls) != len(g.ToolCalls) {
				t.Fatalf("scenario %d turn %d differs after the round trip:\n%+v\n%+v", i, k, w, g)
			}
			for j := range w.ToolCalls {
				if w.ToolCalls[j].Reject != g.ToolCalls[j].Reject || w.ToolCalls[j].Name != g.ToolCalls[j].Name || jsonOf(t, w.ToolCalls[j].Arguments) != jsonOf(t, g.ToolCalls[j].Arguments) {
					t.Fatalf("scenario %d turn %d call %d differs after the round trip:\n%s\n%s", i, k, j, jsonOf(t, w.ToolCalls[j].Arguments), jsonOf(t, g.ToolCalls[j].Arguments))
				}
				if l, ok := todos(w.ToolCalls[j].Arguments); ok {
					maxItems = max(maxItems, len(l))
				}
			}
		}
	}
	for _, r := range []string{RuleEmpty, RuleBlank, RuleDuplicate, RuleTwoActive, RuleStatus, RuleNotArray, RuleShape} {
		if !rules[r] {
			t.Errorf("no scenario of 400 breaks rule %s", r)
		}
	}
	if maxItems < 50 {
		t.Errorf("the longest list in 400 scenarios has %d items", maxItems)
	}
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// builtinCases are the catalogue's own cases.
func builtinCases(t *testing.T) []*conformance.Case {
	t.Helper()
	cases, err := conformance.LoadCases(conformancefixtures.FS, ".")
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// A shrink keeps the failure it started from: a candidate that fails the
// check only because the agent refused a step the check needed (codex-acp
// refuses to load a session the cut left without a prompt) is not the same
// failure, and is not kept.
func TestShrinkKeepsTheSameFailure(t *testing.T) {
	var base *conformance.Case
	for _, c := range builtinCases(t) {
		if c.ID == "load-replay" {
			base = c
		}
	}
	if base == nil {
		t.Fatal("no case load-replay")
	}
	o, err := NewOracle(conformance.PolicySingle)
	if err != nil {
		t.Fatal(err)
	}
	// A prompt after the load too: in the scenario codex-acp failed, the
	// check failed on that prompt's plans.
	base = copyCase(base)
	base.Steps = append(base.Steps, driver.Step{Op: driver.OpPrompt, Text: "Reply DONE."})
	base.Script = append(base.Script, base.Script[len(base.Script)-1])
	const check = "TW-LOAD-1"
	// hasPrompt: a prompt before the load, a turn for the load to find.
	hasPrompt := func(c *conformance.Case) bool {
		load := slices.IndexFunc(c.Steps, func(s driver.Step) bool { return s.Op == driver.OpLoadSession })
		p := slices.IndexFunc(c.Steps, func(s driver.Step) bool { return s.Op == driver.OpPrompt })
		return p >= 0 && (load < 0 || p < load)
	}
	// The agent under test fails the check on the last prompt, and refuses
	// a load with no prompt before it: the check then fails not judged.
	run := func(_ context.Context, cases []*conformance.Case) (map[string][]string, *conformance.Report, error) {
		fails := map[string][]string{}
		cr := conformance.CheckResult{Check: conformance.Check{ID: check}, Outcome: conformance.Fail}
		for _, c := range cases {
			reason := "session/load replayed no plan"
			switch {
			case !slices.ContainsFunc(c.Steps, func(s driver.Step) bool { return s.Text == "Reply DONE." }):
				continue
			case !hasPrompt(c):
				reason = conformance.NotJudgedPrefix + "step 3 (loadSession) was answered with JSON-RPC error -32002: Resource not found"
			}
			fails[c.ID] = []string{check}
			cr.Cases = append(cr.Cases, conformance.CaseVerdict{Case: c.ID, Outcome: conformance.Fail, Reason: reason})
		}
		return fails, &conformance.Report{Checks: []conformance.CheckResult{cr}}, nil
	}
	s := shrinker{oracle: o, cat: conformance.Catalogue(), run: run, batch: 1, maxRuns: 100}
	o.Mark(base, conformance.Catalogue())
	sig := signature(base, "session/load replayed no plan")
	if sig != OpList+"/"+AtLoad {
		t.Fatalf("signature %s, want %s/%s", sig, OpList, AtLoad)
	}
	sh, err := s.shrink(context.Background(), base, check, sig)
	if err != nil {
		t.Fatal(err)
	}
	if sh.runs < 2 {
		t.Fatalf("shrunk in %d run(s): the spec tried no cut", sh.runs)
	}
	if !hasPrompt(sh.c) {
		t.Errorf("the shrunk case lost its prompt, so its failure is the refused load, not the one found:\n%s", CaseYAML(sh.c, nil))
	}
}

// alwaysFails is a run against an agent that fails check on every case
// (the shrink can cut everything) and counts the runs it was asked for.
func alwaysFails(check string, runs *int, tick func()) runCases {
	return func(_ context.Context, cases []*conformance.Case) (map[string][]string, *conformance.Report, error) {
		*runs++
		tick()
		fails := map[string][]string{}
		cr := conformance.CheckResult{Check: conformance.Check{ID: check}, Outcome: conformance.Fail}
		for _, c := range cases {
			fails[c.ID] = []string{check}
			cr.Cases = append(cr.Cases, conformance.CaseVerdict{Case: c.ID, Outcome: conformance.Fail, Reason: "no plan"})
		}
		return fails, &conformance.Report{Checks: []conformance.CheckResult{cr}}, nil
	}
}

// A shrink with a deadline starts no run after it and keeps the smallest
// case it had found: each run here takes a minute of the fake clock, the
// deadline is 90 s away, so two runs are made, and the case is the one
// the second kept.
func TestShrinkStopsAtItsDeadline(t *testing.T) {
	base := builtinCase(t, "load-after-several")
	o, err := NewOracle(conformance.PolicySingle)
	if err != nil {
		t.Fatal(err)
	}
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	now := func() time.Time { return clock }
	runs := 0
	s := shrinker{oracle: o, cat: conformance.Catalogue(), batch: 1, maxRuns: 100, now: now, deadline: clock.Add(90 * time.Second),
		run: alwaysFails("TW-PLAN-1", &runs, func() { clock = clock.Add(time.Minute) })}
	sh, err := s.shrink(context.Background(), base, "TW-PLAN-1", OpNoCall+"/"+AtCase)
	if err != nil {
		t.Fatal(err)
	}
	if !sh.outOfTime || sh.runs != 2 || runs != 2 {
		t.Errorf("out of time %v after %d run(s) (%d asked), want true after 2", sh.outOfTime, sh.runs, runs)
	}
	if len(sh.c.Steps) >= len(base.Steps) && len(sh.c.Script) >= len(base.Script) {
		t.Errorf("the case was not cut: %d steps, %d turns, as the scenario", len(sh.c.Steps), len(sh.c.Script))
	}
	// Without the deadline the same shrink goes on.
	runs = 0
	s.deadline = time.Time{}
	if sh, err = s.shrink(context.Background(), base, "TW-PLAN-1", OpNoCall+"/"+AtCase); err != nil || sh.outOfTime || sh.runs <= 2 {
		t.Errorf("without a deadline: %d run(s), out of time %v, %v; want more than 2", sh.runs, sh.outOfTime, err)
	}
}

// The re-runs of a shrunk case count the ones that failed the check the
// same way: an agent that fails it only on some runs, or on a re-run in
// another way, is told apart.
func TestConfirmCountsTheRerunsThatFail(t *testing.T) {
	base := builtinCase(t, "plan-basic")
	var asked []string
	run := func(_ context.Context, cases []*conformance.Case) (map[string][]string, *conformance.Report, error) {
		fails := map[string][]string{}
		cr := conformance.CheckResult{Check: conformance.Check{ID: "TW-PLAN-1"}, Outcome: conformance.Fail}
		for _, c := range cases {
			asked = append(asked, c.ID)
			reason := "no plan update shows call_1 ([\"call_2\" pending]) (no plan update of its prompt shows it)"
			switch c.ID {
			case "confirm-1": // passes
				continue
			case "confirm-3": // fails another way: the agent refused the prompt
				reason = conformance.NotJudgedPrefix + "step 3 (prompt) was answered with JSON-RPC error -32603"
			}
			fails[c.ID] = []string{"TW-PLAN-1"}
			cr.Cases = append(cr.Cases, conformance.CaseVerdict{Case: c.ID, Outcome: conformance.Fail, Reason: reason})
		}
		return fails, &conformance.Report{Checks: []conformance.CheckResult{cr}}, nil
	}
	runs, failed, _, err := shrinker{run: run}.confirm(context.Background(), base, "TW-PLAN-1", OpList+"/"+AtPrompt, 4)
	if err != nil {
		t.Fatal(err)
	}
	if runs != 4 || failed != 2 || len(asked) != 4 {
		t.Errorf("confirm: %d of %d failed the same way (%d cases run: %v), want 2 of 4", failed, runs, len(asked), asked)
	}
}

func builtinCase(t *testing.T, id string) *conformance.Case {
	t.Helper()
	for _, c := range builtinCases(t) {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no built-in case %s", id)
	return nil
}

// A kept case's header quotes the agent's words (the reason its check
// failed): what would break the YAML (a control character, a line break
// that ends the comment) or reorder it for a reader (a bidi control) is
// written visibly, and the case still loads.
func TestCaseHeaderShowsTheAgentsWordsAsText(t *testing.T) {
	c := Generator{Seed: 1}.Scenario(0)
	hostile := "On that scenario: plan \"a\x1b[2J\u202eb\"\ntitle: forged\r\x07"
	data := CaseYAML(c, []string{hostile})
	if i := bytes.IndexFunc(data, func(r rune) bool { return r == 0x1b || r == 0x202e || r == '\r' || r == 0x07 }); i >= 0 {
		t.Errorf("the header holds a raw control at byte %d: %q", i, data[:min(len(data), 120)])
	}
	if !bytes.HasPrefix(data, []byte(`# On that scenario: plan "a\x1b[2J\u202eb"\ntitle: forged\r\x07`+"\n")) {
		t.Errorf("the header is not one visible comment line: %q", data[:min(len(data), 120)])
	}
	back, err := conformance.LoadCase(data, "case.yaml", c.ID)
	if err != nil {
		t.Fatalf("the case does not load: %v\n%s", err, data)
	}
	if back.Title != c.Title {
		t.Errorf("title %q, want %q (the header forged a field)", back.Title, c.Title)
	}
}

// Every string of a kept case comes from the agent's side of a run (the
// model script the exploration generated, the names and arguments it
// sent): CaseYAML writes each so the file shows it visibly and loads back
// to the same string. Controls, bidi and zero-width marks are escapes,
// never raw bytes; ": ", " #", a leading "-" or "[" stay inside quotes (no
// forged field, comment or list); bytes that are not UTF-8 become U+FFFD.
func TestCaseYAMLEscapesHostileStrings(t *testing.T) {
	const bad = "\xff\xfe"
	hostile := []string{
		"a\x1b[2Jb\x07\x00c\x7f\u0085",         // terminal controls, NUL, DEL, NEL
		"left\u202eright\u2066iso\u2069\u200e", // bidi overrides, isolates, marks
		"zero\u200bwidth\u2060joiner\ufeffbom\u00adsoft\u3000space",
		"key: value # comment",
		"- a list item",
		"[1, 2]",
		"{a: b}",
		"&anchor *alias !tag %directive @at `tick",
		"'single' \"double\" back\\slash",
		"line\nbreak\r\ntab\tend",
		"yes",
		"",
		"bad" + bad + "utf8",
	}
	want := func(s string) string { return string([]rune(s)) } // each byte that is not UTF-8 as U+FFFD
	c := Generator{Seed: 1}.Scenario(0)
	p := slices.IndexFunc(c.Steps, func(s driver.Step) bool { return s.Op == driver.OpPrompt })
	if p < 0 || len(c.Script) == 0 {
		t.Fatalf("scenario 0 has no prompt or no script: %+v", c)
	}
	for i, h := range hostile {
		c.Title = h
		c.Steps[p].Text = h + "x" // a prompt's text is never empty
		c.Script = []mockmodel.Turn{{Text: h, Reasoning: h, ToolCalls: []mockmodel.ToolCall{{Name: "n" + h, ID: "id" + h, Arguments: map[string]any{
			"k" + h: h, "list": []any{h, map[string]any{h + "k": []any{h}}}, "n": json.Number("1.5"), "b": true, "z": nil}}}}, {Text: h}}
		data := CaseYAML(c, nil)
		if !utf8.Valid(data) {
			t.Errorf("string %d: the case.yaml is not UTF-8: %q", i, data)
		}
		if j := bytes.IndexFunc(data, func(r rune) bool {
			return r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.IsSpace(r) && r != ' ' || r == utf8.RuneError)
		}); j >= 0 {
			t.Errorf("string %d: a raw invisible character at byte %d: %q", i, j, data[max(0, j-20):min(len(data), j+20)])
		}
		back, err := conformance.LoadCase(data, "case.yaml", c.ID)
		if err != nil {
			t.Fatalf("string %d: the case does not load: %v\n%s", i, err, data)
		}
		w := want(h)
		if back.Title != w || back.Steps[p].Text != w+"x" || back.Script[0].Text != w || back.Script[0].Reasoning != w || back.Script[1].Text != w {
			t.Errorf("string %d: title %q, prompt %q, texts %q %q, reasoning %q; want %q", i, back.Title, back.Steps[p].Text, back.Script[0].Text, back.Script[1].Text, back.Script[0].Reasoning, w)
		}
		tc := back.Script[0].ToolCalls[0]
		wantArgs := jsonOf(t, map[string]any{"k" + w: w, "list": []any{w, map[string]any{w + "k": []any{w}}}, "n": 1.5, "b": true, "z": nil})
		if tc.Name != "n"+w || tc.ID != "id"+w || jsonOf(t, tc.Arguments) != wantArgs {
			t.Errorf("string %d: call %q %q %s; want %q %q %s", i, tc.Name, tc.ID, jsonOf(t, tc.Arguments), "n"+w, "id"+w, wantArgs)
		}
	}
}

// Two shrinks that want the same case at once run it once: the second
// waits for the first's run and judges its result; a case whose run
// failed is not kept, and runs again when asked next.
func TestRunSharedRunsACaseOnce(t *testing.T) {
	base := builtinCase(t, "plan-basic")
	var mu sync.Mutex
	var asked []string
	started, release := make(chan struct{}, 4), make(chan struct{})
	var failNext atomic.Bool
	run := func(_ context.Context, cases []*conformance.Case) (map[string][]string, *conformance.Report, error) {
		mu.Lock()
		for _, c := range cases {
			asked = append(asked, c.ID)
		}
		mu.Unlock()
		if failNext.Swap(false) {
			return nil, nil, errors.New("agent gone")
		}
		started <- struct{}{}
		<-release
		return alwaysFails("TW-PLAN-1", new(int), func() {})(context.Background(), cases)
	}
	s := shrinker{run: run, memo: &runMemo{m: map[string]*memoEntry{}}}
	ask := func(who, id string, c *conformance.Case) ([]sharedRuns, error) {
		s := s
		s.failure = who
		c = copyCase(c)
		c.ID = id
		return s.runShared(context.Background(), "shrink", [][]*conformance.Case{{c}})
	}
	type answer struct {
		got []sharedRuns
		err error
	}
	a, b := make(chan answer), make(chan answer)
	go func() { got, err := ask("A", "shrink-0-0", base); a <- answer{got, err} }()
	<-started // A's run is under way
	go func() { got, err := ask("B", "shrink-3-1", base); b <- answer{got, err} }()
	close(release)
	ga, gb := <-a, <-b
	if ga.err != nil || gb.err != nil {
		t.Fatal(ga.err, gb.err)
	}
	if len(asked) != 1 || ga.got[0].reused || !gb.got[0].reused || gb.got[0].owner != "A" {
		t.Errorf("asked %v; A reused %v, B reused %v of %q: want one run, A's, reused by B", asked, ga.got[0].reused, gb.got[0].reused, gb.got[0].owner)
	}
	if !gb.got[0].outs[0].fails("TW-PLAN-1", OpNoCall+"/"+AtCase, base) {
		t.Errorf("B's reused run %+v: want A's TW-PLAN-1 failure", gb.got[0].outs[0])
	}
	// Another case: its run fails, is not kept, and runs again.
	other := copyCase(base)
	other.Script = other.Script[:1]
	failNext.Store(true)
	if _, err := ask("C", "shrink-0-0", other); err == nil {
		t.Fatal("a run that failed gave no error")
	}
	if got, err := ask("D", "shrink-0-0", other); err != nil || len(asked) != 3 || got[0].reused {
		t.Errorf("after a run that failed: %v, asked %v; want the case run again", err, asked)
	}
}
