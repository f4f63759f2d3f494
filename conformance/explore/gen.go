package explore

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/harness/todolist"
	"github.com/todoharness/todoharness/mockmodel"
)

// OtherTool is the name of the tool call a scenario makes beside
// todo_write: a tool no agent offers, so every agent answers it with an
// error result and nothing runs on the machine.
const OtherTool = "explore_lookup"

// Generator draws scenarios: a scenario is an ordinary conformance case
// (steps, the mock model's script), a pure function of the seed and its
// index, so any scenario is regenerated from the two numbers alone and a
// shard draws exactly the scenarios the whole run would. Sizes grow with
// the index: the first scenarios are small, later ones carry lists of up
// to hundreds of items and items of up to kilobytes.
type Generator struct {
	Seed uint64
	// Policy is the in_progress policy the scenarios are marked under
	// (conformance.PolicySingle or PolicyParallel).
	Policy string
}

// faultRules are the rules a scenario may break: one per scenario (its
// invalid calls all break the same rule), so that a failed TW-VALID check
// names the rule it is about. "" is a scenario of valid calls only.
var faultRules = []string{"", "", "", RuleEmpty, RuleBlank, RuleDuplicate, RuleTwoActive, RuleStatus, RuleNotArray, RuleShape}

// limits are the largest list and the longest item the scenario at index
// may draw (from index 1022 on the largest: index*4 is never computed
// where it could overflow).
func limits(index int) (items, runes int) {
	if index >= (4096-8)/4 {
		return 300, 4096
	}
	return min(3+index/3, 300), 8 + index*4
}

// maxCallBytes bounds one call's list (items times item length), so that
// a scenario's model requests stay well under the mock's body limit.
const maxCallBytes = 48 << 10

// Scenario draws scenario index.
func (g Generator) Scenario(index int) *conformance.Case {
	r := rand.New(rand.NewPCG(g.Seed, uint64(index)))
	maxItems, maxRunes := limits(index)
	s := &scenario{r: r, maxItems: maxItems, maxRunes: maxRunes, rule: faultRules[r.IntN(len(faultRules))], parallel: g.Policy == conformance.PolicyParallel}
	c := &conformance.Case{
		ID:    fmt.Sprintf("explore-%d", index),
		Title: fmt.Sprintf("generated scenario %d of seed %d", index, g.Seed),
		Steps: []driver.Step{{Op: driver.OpInitialize}, {Op: driver.OpNewSession}},
	}
	prompt := func() {
		c.Steps = append(c.Steps, driver.Step{Op: driver.OpPrompt, Text: promptTexts[r.IntN(len(promptTexts))]})
		c.Script = append(c.Script, s.promptTurns()...)
	}
	for range 1 + r.IntN(3) {
		prompt()
	}
	// Whether the first session ends on a cancelled prompt comes from a
	// stream of its own: the scenarios without one are drawn exactly as
	// before cancels were.
	if rand.New(rand.NewPCG(g.Seed^cancelStream, uint64(index))).IntN(cancelOneIn) == 0 {
		s.cancelledPrompt(c)
		s.makeSafe(c)
		return c
	}
	switch x := r.IntN(10); {
	case x < 3: // an editor closes the agent and loads the session again
		c.Steps = append(c.Steps, driver.Step{Op: driver.OpRestart}, driver.Step{Op: driver.OpInitialize}, driver.Step{Op: driver.OpLoadSession})
		for range r.IntN(3) {
			prompt()
		}
	case x < 4: // a second session in the same process
		c.Steps = append(c.Steps, driver.Step{Op: driver.OpNewSession})
		s.list = nil
		for range 1 + r.IntN(2) {
			prompt()
		}
	}
	s.makeSafe(c)
	return c
}

// scenario is the state of one draw: the list the model last wrote
// validly, which the next write usually changes.
type scenario struct {
	r                  *rand.Rand
	maxItems, maxRunes int
	rule               string
	parallel           bool
	list               []map[string]any
}

// promptTurns draws one prompt's turns: zero to three turns of tool calls,
// then a turn of text that ends the prompt.
func (s *scenario) promptTurns() []mockmodel.Turn {
	r := s.r
	var turns []mockmodel.Turn
	for range r.IntN(4) {
		var t mockmodel.Turn
		if r.IntN(4) == 0 {
			t.Reasoning = sentence(r)
		}
		if r.IntN(5) == 0 {
			t.Text = sentence(r)
		}
		if r.IntN(4) == 0 {
			t.ChunkSize = 1 + r.IntN(64)
		}
		for range 1 + r.IntN(3)*r.IntN(2) {
			if r.IntN(6) == 0 {
				t.ToolCalls = append(t.ToolCalls, mockmodel.ToolCall{Name: OtherTool, Arguments: map[string]any{"query": sentence(r)}})
				continue
			}
			t.ToolCalls = append(t.ToolCalls, mockmodel.ToolCall{Name: driver.DialectTodoWrite, Arguments: s.write()})
		}
		t.ChunkSize = streamChunk(t.ToolCalls, t.ChunkSize)
		turns = append(turns, t)
	}
	end := mockmodel.Turn{Text: "DONE"}
	if r.IntN(3) == 0 {
		end.Text = sentence(r) + " DONE"
	}
	return append(turns, end)
}

// maxDeltas bounds how many deltas a turn whose chunk size was not drawn
// streams its largest call in: a call of up to maxDeltas times the mock's
// default chunk streams in default chunks, as a hand-written case's does;
// a larger one in maxDeltas (or a few more) chunks. A list of hundreds of
// items is thus still split mid-item, mid-string and mid-character, but
// not into thousands of deltas, each of which the agent, the mock and the
// runner would handle one by one (docs/performance.md).
const maxDeltas = 16

// maxDrawnDeltas bounds how many deltas a turn whose chunk size was drawn
// (1 to 64 bytes) streams its largest call in: a drawn size stands for a
// model that streams in small pieces, which the deltas of a call up to
// maxDrawnDeltas times that size show in full; a list of kilobytes in
// one-byte pieces would be tens of thousands of deltas, and the exploration
// would spend its time there (docs/performance.md, "Exploration speed").
const maxDrawnDeltas = 128

// streamChunk is the chunk size of a turn whose tool calls are calls and
// whose size drawn was drawn (0: none was). Not drawn: 0 (the mock's
// default) unless its largest call is longer than maxDeltas default chunks.
// Drawn: the drawn size, or more when the largest call would take more
// than maxDrawnDeltas deltas. It draws nothing: the rest of the scenario is
// the same either way.
func streamChunk(calls []mockmodel.ToolCall, drawn int) int {
	longest := 0
	for _, tc := range calls {
		if b, err := json.Marshal(tc.Arguments); err == nil {
			longest = max(longest, len(b))
		}
	}
	switch {
	case drawn > 0:
		return max(drawn, (longest+maxDrawnDeltas-1)/maxDrawnDeltas)
	case longest <= maxDeltas*mockmodel.DefaultChunkSize:
		return 0
	}
	return (longest + maxDeltas - 1) / maxDeltas
}

// write draws one todo_write's arguments: usually the last list changed,
// sometimes a new one or the empty list; in a scenario that breaks a rule,
// about a third of the calls break it.
func (s *scenario) write() map[string]any {
	list := s.nextList()
	if s.rule != "" && s.r.IntN(3) == 0 {
		return s.breakRule(list)
	}
	s.list = list
	return map[string]any{"todos": toAny(list)}
}

// nextList draws the list of a valid write: usually the last list
// changed, sometimes a new one or the empty list.
func (s *scenario) nextList() []map[string]any {
	switch x := s.r.IntN(10); {
	case x == 0:
		return []map[string]any{}
	case x < 4 || s.list == nil:
		return s.newList()
	default:
		return s.change(s.list)
	}
}

// cancelOneIn: one scenario in cancelOneIn ends its first session with a
// cancelled prompt (cancelledPrompt); cancelStream seeds the draw of
// which, beside the scenario's own stream.
const (
	cancelOneIn  = 8
	cancelStream = 0x63616e63656c // "cancel"
)

// cancelledPrompt appends a prompt the client cancels (session/cancel,
// sent by the runner once the turn shows a plan), shaped as the
// catalogue's cancel-after-write case: one turn with one valid todo_write,
// then the text that would end the turn (the model may never be asked for
// it). A cancelled prompt leaves script turns unasked, so no prompt can
// follow it: the scenario ends there, or with an editor's restart and
// session/load, whose replay must show the write.
func (s *scenario) cancelledPrompt(c *conformance.Case) {
	r := s.r
	c.Steps = append(c.Steps, driver.Step{Op: driver.OpPrompt, Text: promptTexts[r.IntN(len(promptTexts))], Cancel: true})
	s.list = s.nextList()
	t := mockmodel.Turn{ToolCalls: []mockmodel.ToolCall{{Name: driver.DialectTodoWrite, Arguments: map[string]any{"todos": toAny(s.list)}}}}
	if r.IntN(4) == 0 {
		t.Reasoning = sentence(r)
	}
	drawn := 0
	if r.IntN(4) == 0 {
		drawn = 1 + r.IntN(64)
	}
	t.ChunkSize = streamChunk(t.ToolCalls, drawn)
	c.Script = append(c.Script, t, mockmodel.Turn{Text: "DONE"})
	if r.IntN(2) == 0 {
		c.Steps = append(c.Steps, driver.Step{Op: driver.OpRestart}, driver.Step{Op: driver.OpInitialize}, driver.Step{Op: driver.OpLoadSession})
	}
}

// size draws a length up to max, mostly small.
func (s *scenario) size(max int) int {
	u := s.r.Float64()
	return int(float64(max+1) * u * u * u)
}

func (s *scenario) newList() []map[string]any {
	n := s.size(s.maxItems)
	runes := 1 + s.size(s.maxRunes)
	if n > 0 && n*runes*3 > maxCallBytes {
		n = max(1, maxCallBytes/(runes*3))
	}
	seen := map[string]bool{}
	list := make([]map[string]any, 0, n)
	for len(list) < n {
		c := content(s.r, 1+s.r.IntN(runes))
		// Keyed by TrimAny: no two items are duplicates under any
		// common trim function (todolist.EdgeSpaces), so no list is
		// valid or not by the trim function alone.
		t := todolist.TrimAny(c)
		if seen[t] {
			c = fmt.Sprintf("%s #%d", c, len(list))
			t = todolist.TrimAny(c)
			if seen[t] {
				continue
			}
		}
		seen[t] = true
		list = append(list, map[string]any{"content": c, "status": "pending"})
	}
	s.statuses(list)
	return list
}

// statuses sets a valid mix: a prefix completed, at most one in_progress.
func (s *scenario) statuses(list []map[string]any) {
	if len(list) == 0 {
		return
	}
	done := s.r.IntN(len(list) + 1)
	for i, it := range list {
		switch {
		case i < done:
			it["status"] = "completed"
		case i == done && s.r.IntN(4) != 0:
			it["status"] = "in_progress"
		default:
			it["status"] = "pending"
		}
	}
}

// change is the next list: the same items with the work moved on, some
// dropped, some added, or reordered.
func (s *scenario) change(prev []map[string]any) []map[string]any {
	list := make([]map[string]any, 0, len(prev)+2)
	for _, it := range prev {
		if s.r.IntN(8) == 0 {
			continue // dropped
		}
		list = append(list, map[string]any{"content": it["content"], "status": it["status"]})
	}
	if s.r.IntN(3) == 0 && len(list) < s.maxItems {
		extra := s.newList()
		seen := map[string]bool{}
		for _, it := range list {
			seen[todolist.TrimAny(it["content"].(string))] = true
		}
		for _, it := range extra {
			if !seen[todolist.TrimAny(it["content"].(string))] {
				list = append(list, it)
			}
		}
	}
	if s.r.IntN(5) == 0 {
		s.r.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
	}
	s.statuses(list)
	return list
}

var badStatuses = []string{"done", "complete", "In_Progress", "PENDING", "Completed", "in-progress", "in progress", "", "cancelled", "todo", " pending", "pending "}

// breakRule makes a call that breaks the scenario's rule (and only it).
func (s *scenario) breakRule(list []map[string]any) map[string]any {
	r := s.r
	list = clone(list)
	if len(list) == 0 {
		list = []map[string]any{{"content": content(r, 1+r.IntN(12)), "status": "pending"}}
	}
	k := r.IntN(len(list))
	switch s.rule {
	case RuleEmpty:
		list[k]["content"] = ""
	case RuleBlank:
		list[k]["content"] = []string{" ", "\t", "\n", "  \r\n ", "\u00a0", "\u3000", " \t "}[r.IntN(7)]
	case RuleDuplicate:
		c := list[k]["content"].(string)
		if r.IntN(2) == 0 {
			c = "  " + c + "\t"
		}
		dup := map[string]any{"content": c, "status": "pending"}
		at := r.IntN(len(list) + 1)
		list = append(list[:at], append([]map[string]any{dup}, list[at:]...)...)
	case RuleTwoActive:
		for len(list) < 2 {
			list = append(list, map[string]any{"content": fmt.Sprintf("%s %d", content(r, 4), len(list)), "status": "pending"})
		}
		j := (k + 1 + r.IntN(len(list)-1)) % len(list)
		list[k]["status"], list[j]["status"] = "in_progress", "in_progress"
	case RuleStatus:
		list[k]["status"] = badStatuses[r.IntN(len(badStatuses))]
	case RuleNotArray:
		return map[string]any{"todos": []any{"a plain string", map[string]any{"content": "x", "status": "pending"}, nil, 3, true}[r.IntN(5)]}
	case RuleShape:
		switch r.IntN(6) {
		case 0:
			delete(list[k], "content")
		case 1:
			delete(list[k], "status")
		case 2:
			list[k]["content"] = 42
		case 3:
			list[k]["status"] = true
		case 4:
			return map[string]any{"items": toAny(list)}
		default:
			out := toAny(list)
			out[k] = "not an object"
			return map[string]any{"todos": out}
		}
	}
	return map[string]any{"todos": toAny(list)}
}

func clone(list []map[string]any) []map[string]any {
	out := make([]map[string]any, len(list))
	for i, it := range list {
		out[i] = map[string]any{}
		for k, v := range it {
			out[i][k] = v
		}
	}
	return out
}

func toAny(list []map[string]any) []any {
	out := make([]any, len(list))
	for i, it := range list {
		out[i] = it
	}
	return out
}

// makeSafe rewrites the items that the case's own texts (or the texts an
// agent adds) happen to spell, which TW-HISTORY-1 would take for a leak.
func (s *scenario) makeSafe(c *conformance.Case) {
	texts := caseTexts(c)
	for i := range c.Script {
		for j := range c.Script[i].ToolCalls {
			forItems(c.Script[i].ToolCalls[j].Arguments, func(it map[string]any) {
				if ct, ok := it["content"].(string); ok && spelled(ct, texts) {
					it["content"] = "§" + ct
				}
			})
		}
	}
}

// forItems calls fn on every item object of a call's todos.
func forItems(args any, fn func(map[string]any)) {
	m, _ := args.(map[string]any)
	list, _ := m["todos"].([]any)
	for _, it := range list {
		if im, ok := it.(map[string]any); ok {
			fn(im)
		}
	}
}

// caseTexts are the texts of a case the model is sent besides the calls.
func caseTexts(c *conformance.Case) []string {
	out := append([]string(nil), knownTexts...)
	for _, st := range c.Steps {
		out = append(out, st.Text)
	}
	for _, t := range c.Script {
		out = append(out, t.Text, t.Reasoning)
	}
	return out
}

// spelled reports whether an item's trimmed text, long enough for
// TW-HISTORY-1 to look for it, occurs in one of texts.
func spelled(content string, texts []string) bool {
	t := todolist.Trim(content)
	if len(t) < 6 {
		return false
	}
	for _, x := range texts {
		if strings.Contains(x, t) {
			return true
		}
	}
	return false
}

// historySafe reports whether no item of c is spelled by its texts.
func historySafe(c *conformance.Case) bool {
	texts := caseTexts(c)
	ok := true
	for _, t := range c.Script {
		for _, tc := range t.ToolCalls {
			forItems(tc.Arguments, func(it map[string]any) {
				if ct, isStr := it["content"].(string); isStr && spelled(ct, texts) {
					ok = false
				}
			})
		}
	}
	return ok
}
