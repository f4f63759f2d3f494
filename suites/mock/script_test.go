package mock

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/internal/testutil"
	"github.com/todoharness/todoharness/internal/yamlx"
	"github.com/todoharness/todoharness/mockmodel"
)

// writeScript writes a YAML script into a temp dir and returns its path.
func writeScript(name, body string) string {
	path := filepath.Join(GinkgoT().TempDir(), name)
	Expect(os.WriteFile(path, []byte(body), 0o644)).To(Succeed())
	return path
}

const planScript = `name: todo-plan
turns:
  - reasoning: Plan first.
    toolCalls:
      - name: todo_write
        arguments:
          todos:
            - {status: in_progress, content: read the code}
            - {content: "write <the> fix", status: pending}
    usage: {inputTokens: 100, outputTokens: 20, cacheReadTokens: 64, reasoningTokens: 3}
  - expect:
      lastMessage: tool
      lastIsError: false
      lastContains: "Updated todo list"
      toolsInclude: [todo_write]
    toolCalls:
      - name: todo_write
        id: my-id
        arguments: {todos: []}
      - name: todo_write
        arguments: {todos: [{content: x, status: completed}], n: 1.5, ok: true, none: null}
  - text: DONE
`

var _ = Describe("Script loading", func() {
	It("loads the YAML format: key order kept, ids call_N across the script, finish defaults", func() {
		s, err := mockmodel.LoadScript(writeScript("plan.yaml", planScript))
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Name).To(Equal("todo-plan"))
		Expect(s.Turns).To(HaveLen(3))

		t0 := s.Turns[0]
		Expect(t0.Reasoning).To(Equal("Plan first."))
		Expect(t0.Line).To(Equal(3))
		Expect(*t0.Usage).To(Equal(llm.Usage{InputTokens: 100, OutputTokens: 20, CacheReadTokens: 64, ReasoningTokens: 3}))
		Expect(t0.ToolCalls[0].Arguments).To(BeEquivalentTo(
			`{"todos":[{"status":"in_progress","content":"read the code"},{"content":"write <the> fix","status":"pending"}]}`))

		e := s.Turns[1].Expect
		Expect(e).NotTo(BeNil())
		Expect(e.LastMessage).To(Equal("tool"))
		Expect(e.LastIsError).To(HaveValue(BeFalse()))
		Expect(e.LastContains).To(Equal("Updated todo list"))
		Expect(e.ToolsInclude).To(Equal([]string{"todo_write"}))
		Expect(s.Turns[1].ToolCalls[1].Arguments).To(BeEquivalentTo(
			`{"todos":[{"content":"x","status":"completed"}],"n":1.5,"ok":true,"none":null}`))

		// ids and finish show in what the model answers
		m := mockmodel.NewModel(s)
		r1, err := m.Stream(ctx(), llm.Request{}, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r1.Finish.Kind).To(Equal(llm.FinishToolCalls))
		Expect(r1.ToolCalls()[0].ID).To(Equal("call_1"))
		r2, err := m.Stream(ctx(), toolResultRequest("call_1", "Updated todo list: 1 pending.", false), nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r2.ToolCalls()[0].ID).To(Equal("my-id"))
		Expect(r2.ToolCalls()[1].ID).To(Equal("call_3"), "the N of call_N is the call's position in the script")
		r3, err := m.Stream(ctx(), llm.Request{}, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r3.Finish.Kind).To(Equal(llm.FinishStop))
		Expect(r3.Content).To(Equal([]llm.Part{{Type: llm.PartText, Text: "DONE"}}))
	})

	It("accepts a bare list of turns", func() {
		s, err := mockmodel.ParseScript([]byte("- text: hi\n- text: bye\n  finish: length\n"), "bare.yaml")
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Path).To(Equal("bare.yaml"))
		Expect(s.Turns).To(HaveLen(2))
		Expect(s.Turns[1].Finish).To(Equal("length"))
	})

	DescribeTable("rejects bad scripts naming file, line, turn and field",
		func(body, want string) {
			path := writeScript("bad.yaml", body)
			_, err := mockmodel.LoadScript(path)
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(Equal(path + want))
			var se *mockmodel.ScriptError
			Expect(errors.As(err, &se)).To(BeTrue())
		},
		Entry("a field read through its Go type, of the wrong type",
			"- text: ab\n  textDeltas: [a, [b]]\n",
			`:2: turn 1: textDeltas: must be a list of strings, got a list`),
		Entry("a field read through its Go type, failing the script's checks",
			"- text: ab\n  textDeltas: [a, c]\n",
			`:2: turn 1: textDeltas: the deltas join to "ac", not to "ab"`),
		Entry("an unknown tool call field",
			"- toolCalls:\n    - {name: a, args: {}}\n",
			`:2: turn 1: toolCalls[0].args: unknown field (known: id, name, arguments, rawArguments, reject, argumentDeltas)`),
		Entry("reject not a boolean",
			"- toolCalls:\n    - {name: a, reject: maybe}\n",
			`:2: turn 1: toolCalls[0].reject: must be true or false, got string "maybe"`),
		Entry("unknown turn field",
			"turns:\n  - text: a\n  - txt: b\n",
			":3: turn 2: txt: unknown field (known: text, reasoning, toolCalls, finish, usage, expect, chunkSize, fault, reasoningDeltas, textDeltas)"),
		Entry("arguments not a mapping",
			"- text: a\n- text: b\n- toolCalls:\n    - name: todo_write\n      arguments: [1, 2]\n",
			":5: turn 3: toolCalls[0].arguments: must be a mapping (the JSON object of arguments), got a list"),
		Entry("tool call without a name",
			"- toolCalls:\n    - arguments: {a: 1}\n",
			":2: turn 1: toolCalls[0].name: missing tool name"),
		Entry("unknown finish",
			"- text: a\n  finish: done\n",
			`:2: turn 1: finish: unknown finish "done" (want stop, tool-calls, length or content-filter)`),
		Entry("unknown fault",
			"- text: a\n  fault: explode\n",
			`:2: turn 1: fault: unknown fault "explode" (want close-mid-stream, http-500 or hang)`),
		Entry("chunkSize not an integer",
			"- text: a\n  chunkSize: big\n",
			`:2: turn 1: chunkSize: must be an integer, got string "big"`),
		Entry("negative chunkSize",
			"- text: a\n  chunkSize: -1\n",
			`:2: turn 1: chunkSize: must be positive, got -1`),
		Entry("lastIsError not a boolean",
			"- text: a\n  expect:\n    lastIsError: yes\n",
			`:3: turn 1: expect.lastIsError: must be true or false, got string "yes"`),
		Entry("unknown expect field",
			"- text: a\n  expect:\n    lastRole: tool\n",
			`:3: turn 1: expect.lastRole: unknown field (known: lastMessage, lastIsError, lastContains, toolsInclude)`),
		Entry("unknown lastMessage role",
			"- text: a\n  expect:\n    lastMessage: robot\n",
			`:3: turn 1: expect.lastMessage: unknown role "robot" (want tool, user, assistant or system)`),
		Entry("duplicate tool call id",
			"- toolCalls:\n    - {name: a, id: x}\n- toolCalls:\n    - {name: b, id: x}\n",
			`:4: turn 2: toolCalls[0].id: duplicate tool call id "x" (also turn 1 toolCalls[0])`),
		Entry("usage field of the wrong type",
			"- text: a\n  usage: {inputTokens: many}\n",
			`:2: turn 1: usage.inputTokens: must be an integer, got string "many"`),
		Entry("turn not a mapping",
			"- text: a\n- just text\n",
			`:2: turn 2: a turn must be a mapping, got a scalar`),
		Entry("mapping without turns",
			"name: x\n",
			`:1: turns: missing (a script is a list of turns, or a mapping with name and turns)`),
		Entry("empty file", "", `: empty script: want a list of turns or a mapping with turns`),
		Entry("YAML syntax error", "- text: [a\n", `: yaml: line 1: did not find expected ',' or ']'`),
		Entry("infinite number in arguments",
			"- toolCalls:\n    - name: a\n      arguments: {x: .inf}\n",
			`:3: turn 1: toolCalls[0].arguments.x: .inf has no JSON representation`),
	)

	It("refuses a script whose aliases expand beyond the budget, naming file and line", func() {
		body := "- toolCalls:\n    - name: todo_write\n      arguments:\n" + testutil.AliasBomb("        ") + "- text: done\n"
		Expect(len(body)).To(BeNumerically("<", 700))
		path := writeScript("bomb.yaml", body)
		_, err := mockmodel.LoadScript(path)
		Expect(err).To(MatchError(ContainSubstring(path + ":")))
		Expect(err).To(MatchError(ContainSubstring("excessive aliasing")))
		Expect(errors.Is(err, yamlx.ErrAliasing)).To(BeTrue())
		var se *mockmodel.ScriptError
		Expect(errors.As(err, &se)).To(BeTrue())
		Expect(se.Line).To(BeNumerically(">=", 4), "the line of an alias of the bomb")
	})

	It("accepts anchors and aliases that share a list between turns", func() {
		s, err := mockmodel.ParseScript([]byte(`- toolCalls:
    - name: todo_write
      arguments: &plan {todos: [{content: a, status: pending}]}
- toolCalls:
    - name: todo_write
      arguments: *plan
- text: done
`), "shared.yaml")
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Turns[1].ToolCalls[0].Arguments).To(BeEquivalentTo(`{"todos":[{"content":"a","status":"pending"}]}`))
	})

	It("reads every field of the turn type, the ones without special reading through their Go type", func() {
		s, err := mockmodel.ParseScript([]byte("- text: DONE\n  textDeltas: [D, ONE]\n  toolCalls:\n    - {name: t, rawArguments: '{}', argumentDeltas: ['{', '}']}\n"), "deltas.yaml")
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Turns[0].TextDeltas).To(Equal([]string{"D", "ONE"}))
		Expect(s.Turns[0].ToolCalls[0].ArgumentDeltas).To(Equal([]string{"{", "}"}))
	})

	It("reads a reject annotation and ignores it when answering", func() {
		s, err := mockmodel.ParseScript([]byte("- toolCalls:\n    - {name: todo_write, arguments: {todos: []}, reject: true}\n- text: done\n"), "reject.yaml")
		Expect(err).NotTo(HaveOccurred())
		Expect(s.Turns[0].ToolCalls[0].Reject).To(BeTrue())
		r, err := mockmodel.NewModel(s).Stream(ctx(), llm.Request{}, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.ToolCalls()).To(HaveLen(1))
		Expect(r.ToolCalls()[0].Arguments).To(Equal(`{"todos":[]}`))
	})

	It("names the missing file", func() {
		_, err := mockmodel.LoadScript("/nonexistent/script.yaml")
		Expect(err).To(MatchError(ContainSubstring("/nonexistent/script.yaml")))
		Expect(errors.Is(err, os.ErrNotExist)).To(BeTrue())
	})

	It("validates scripts built from Go values", func() {
		s := &mockmodel.Script{Name: "go", Turns: []mockmodel.Turn{
			{Text: "ok"},
			{ToolCalls: []mockmodel.ToolCall{{Name: "t", Arguments: []int{1}}}},
		}}
		Expect(s.Validate()).To(MatchError(`script go: turn 2: toolCalls[0].arguments: must be a JSON object, got [1]`))

		s.Turns[1].ToolCalls[0].Arguments = map[string]any{"a": "<b>"}
		Expect(s.Validate()).To(Succeed())
		r, err := mockmodel.NewModel(s).Stream(ctx(), llm.Request{}, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Content).To(Equal([]llm.Part{{Type: llm.PartText, Text: "ok"}}))
		r, err = mockmodel.NewModel(&mockmodel.Script{Turns: s.Turns[1:]}).Stream(ctx(), llm.Request{}, nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.ToolCalls()[0].Arguments).To(Equal(`{"a":"<b>"}`), "no HTML escaping")
		Expect(json.Valid([]byte(r.ToolCalls()[0].Arguments))).To(BeTrue())
	})

	It("makes every request fail when the script is invalid", func() {
		m := mockmodel.NewModel(&mockmodel.Script{Turns: []mockmodel.Turn{{Finish: "nope"}}})
		_, err := m.Stream(ctx(), llm.Request{}, nil)
		Expect(err).To(MatchError(ContainSubstring(`invalid script: <script>: turn 1: finish: unknown finish "nope"`)))
		Expect(m.Journal().Entries()).To(HaveLen(1))
		Expect(m.Journal().Entries()[0].Status).To(Equal(500))
	})
})
