package mock

import (
	"context"
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/mockmodel"
)

const vocabScript = `- reasoning: Plan it now.
  text: On it.
  chunkSize: 5
  toolCalls:
    - name: todo_write
      arguments: {todos: []}
  usage: {inputTokens: 1, outputTokens: 2, cacheReadTokens: 3, reasoningTokens: 4}
`

// vocabChunks is what vocabScript's turn streams, in the original harness's
// chunk vocabulary.
var vocabChunks = []string{
	`{"type":"block-start","index":0,"blockType":"reasoning"}`,
	`{"type":"reasoning-delta","index":0,"text":"Plan"}`,
	`{"type":"reasoning-delta","index":0,"text":" it"}`,
	`{"type":"reasoning-delta","index":0,"text":" now."}`,
	`{"type":"block-start","index":1,"blockType":"text"}`,
	`{"type":"text-delta","index":1,"text":"On"}`,
	`{"type":"text-delta","index":1,"text":" it."}`,
	`{"type":"block-start","index":2,"blockType":"tool-call"}`,
	`{"type":"tool-call-delta","index":2,"id":"call_1","name":"todo_write","argumentsDelta":""}`,
	`{"type":"tool-call-delta","index":2,"id":"call_1","name":"todo_write","argumentsDelta":"{\"tod"}`,
	`{"type":"tool-call-delta","index":2,"id":"call_1","name":"todo_write","argumentsDelta":"os\":["}`,
	`{"type":"tool-call-delta","index":2,"id":"call_1","name":"todo_write","argumentsDelta":"]}"}`,
	`{"type":"block-end","index":0,"block":{"type":"reasoning","text":"Plan it now."}}`,
	`{"type":"block-end","index":1,"block":{"type":"text","text":"On it."}}`,
	`{"type":"block-end","index":2,"block":{"type":"tool-call","id":"call_1","name":"todo_write","arguments":"{\"todos\":[]}"}}`,
	`{"type":"usage","usage":{"inputTokens":1,"outputTokens":2,"cacheReadTokens":3,"reasoningTokens":4}}`,
	`{"type":"finish","reason":{"kind":"tool-calls"}}`,
}

func mustParse(body, name string) *mockmodel.Script {
	s, err := mockmodel.ParseScript([]byte(body), name)
	Expect(err).NotTo(HaveOccurred())
	return s
}

var _ = Describe("In-process model", func() {
	It("streams the chunk vocabulary and returns the assembled response", func() {
		m := mockmodel.NewModel(mustParse(vocabScript, "vocab.yaml"))
		var chunks []llm.Chunk
		r, err := m.Stream(ctx(), userRequest("go"), collect(&chunks))
		Expect(err).NotTo(HaveOccurred())
		Expect(chunkJSON(chunks)).To(Equal(vocabChunks))
		Expect(r).To(Equal(llm.Response{
			Content: []llm.Part{
				{Type: llm.PartReasoning, Text: "Plan it now."},
				{Type: llm.PartText, Text: "On it."},
				{Type: llm.PartToolCall, ID: "call_1", Name: "todo_write", Arguments: `{"todos":[]}`},
			},
			Usage:  &llm.Usage{InputTokens: 1, OutputTokens: 2, CacheReadTokens: 3, ReasoningTokens: 4},
			Finish: llm.FinishReason{Kind: llm.FinishToolCalls},
		}))
		Expect(m.Remaining()).To(Equal(0))
	})

	It("numbers text and tool-call blocks from 1 when there is no reasoning, and splits arguments into many deltas", func() {
		m := mockmodel.NewModel(mustParse(`
- toolCalls:
    - name: todo_write
      arguments: {todos: [{content: "read the code ünïcödé", status: in_progress}, {content: write the fix, status: pending}]}
    - name: other
`, "s.yaml"))
		var chunks []llm.Chunk
		r, err := m.Stream(ctx(), userRequest("go"), collect(&chunks))
		Expect(err).NotTo(HaveOccurred())
		args := `{"todos":[{"content":"read the code ünïcödé","status":"in_progress"},{"content":"write the fix","status":"pending"}]}`
		Expect(r.ToolCalls()).To(Equal([]llm.Part{
			{Type: llm.PartToolCall, ID: "call_1", Name: "todo_write", Arguments: args},
			{Type: llm.PartToolCall, ID: "call_2", Name: "other", Arguments: "{}"},
		}))
		var deltas int
		rebuilt := ""
		for _, c := range chunks {
			if c.Type == llm.ChunkToolCallDelta && *c.Index == 1 {
				deltas++
				rebuilt += *c.ArgumentsDelta
				Expect(len(*c.ArgumentsDelta)).To(BeNumerically("<=", mockmodel.DefaultChunkSize+3))
			}
		}
		Expect(rebuilt).To(Equal(args))
		Expect(deltas).To(BeNumerically(">", len(args)/mockmodel.DefaultChunkSize))
		Expect(chunks[0]).To(Equal(llm.Chunk{Type: llm.ChunkBlockStart, Index: llm.IntPtr(1), BlockType: llm.PartToolCall}))
	})

	It("checks expect and says what differed, naming file and turn; the journal records it", func() {
		m := mockmodel.NewModel(mustParse(`
- toolCalls: [{name: todo_write, arguments: {todos: []}}]
- expect: {lastMessage: tool, lastIsError: true, lastContains: "duplicate", toolsInclude: [todo_write, shell]}
  text: never
`, "expect.yaml"))
		_, err := m.Stream(ctx(), userRequest("go"), nil)
		Expect(err).NotTo(HaveOccurred())
		var chunks []llm.Chunk
		_, err = m.Stream(ctx(), toolResultRequest("call_1", "Updated todo list: 0 pending, 0 in progress, 0 completed.", false), collect(&chunks))
		Expect(chunks).To(BeEmpty())
		var re *mockmodel.RequestError
		Expect(errors.As(err, &re)).To(BeTrue())
		Expect(re.Code).To(Equal(mockmodel.CodeExpectFailed))
		Expect(re.Status).To(Equal(422))
		Expect(re.Turn).To(Equal(1))
		Expect(err.Error()).To(Equal(`mock model: expect.yaml: turn 2 of 2 (line 3): expect failed: ` +
			`expect.lastIsError: want true, got false (tool result for call_1 (isError=false) "Updated todo list: 0 pending, 0 in progress, 0 completed."); ` +
			`expect.lastContains: want text containing "duplicate", got tool result for call_1 (isError=false) "Updated todo list: 0 pending, 0 in progress, 0 completed."; ` +
			`expect.toolsInclude: tool "shell" not offered (offered: [todo_write])`))

		entries := m.Journal().Entries()
		Expect(entries).To(HaveLen(2))
		Expect(entries[0].Error).To(BeEmpty())
		Expect(entries[0].TurnIndex).To(Equal(0))
		Expect(entries[0].Status).To(Equal(200))
		Expect(entries[1].Error).To(Equal(re.Message))
		Expect(entries[1].TurnIndex).To(Equal(1))
		Expect(entries[1].Status).To(Equal(422))
		Expect(entries[1].System).To(Equal("You are a test."))
		Expect(entries[1].Messages).To(HaveLen(3))
		Expect(entries[1].Tools).To(Equal([]llm.ToolSpec{todoTool}))
		Expect(m.Journal().Errors()).To(HaveLen(1))
	})

	It("passes a matching expect", func() {
		m := mockmodel.NewModel(mustParse(`
- expect: {lastMessage: tool, lastIsError: true, lastContains: "duplicate", toolsInclude: [todo_write]}
  text: fixed
`, "ok.yaml"))
		r, err := m.Stream(ctx(), toolResultRequest("call_9", `Error: invalid todos: duplicate content "a"`, true), nil)
		Expect(err).NotTo(HaveOccurred())
		Expect(r.Content[0].Text).To(Equal("fixed"))
	})

	It("fails lastMessage with the role it got", func() {
		m := mockmodel.NewModel(mustParse("- expect: {lastMessage: tool}\n  text: x\n", "role.yaml"))
		_, err := m.Stream(ctx(), userRequest("hello"), nil)
		Expect(err).To(MatchError(`mock model: role.yaml: turn 1 of 1 (line 1): expect failed: expect.lastMessage: want tool, got user message "hello"`))
	})

	It("refuses a request past the end of the script, and journals it", func() {
		m := mockmodel.NewModel(mustParse("- text: only\n", "short.yaml"))
		_, err := m.Stream(ctx(), userRequest("one"), nil)
		Expect(err).NotTo(HaveOccurred())
		_, err = m.Stream(ctx(), userRequest("two"), nil)
		Expect(err).To(MatchError(`mock model: short.yaml: no turn left for request 2: the script has 1 turn(s); last message: user message "two"`))
		var re *mockmodel.RequestError
		Expect(errors.As(err, &re)).To(BeTrue())
		Expect(re.Code).To(Equal(mockmodel.CodeExhausted))
		last, ok := m.Journal().Last()
		Expect(ok).To(BeTrue())
		Expect(last.TurnIndex).To(Equal(-1))
		Expect(last.Error).To(ContainSubstring("no turn left"))
		Expect(last.Messages[0].Text()).To(Equal("two"))
	})

	It("returns the error of onChunk and stops streaming", func() {
		m := mockmodel.NewModel(mustParse(vocabScript, "vocab.yaml"))
		boom := errors.New("boom")
		n := 0
		_, err := m.Stream(ctx(), userRequest("go"), func(llm.Chunk) error {
			n++
			if n == 3 {
				return boom
			}
			return nil
		})
		Expect(err).To(MatchError(boom))
		Expect(n).To(Equal(3))
	})

	It("honours a cancelled context", func() {
		m := mockmodel.NewModel(mustParse(vocabScript, "vocab.yaml"))
		c, cancel := context.WithCancel(ctx())
		cancel()
		_, err := m.Stream(c, userRequest("go"), nil)
		Expect(errors.Is(err, context.Canceled)).To(BeTrue())
		Expect(m.Remaining()).To(Equal(1), "a cancelled call consumes no turn")
	})

	Describe("faults", func() {
		It("close-mid-stream sends half of the chunks, then fails", func() {
			m := mockmodel.NewModel(mustParse(vocabScript+"  fault: close-mid-stream\n", "fault.yaml"))
			var chunks []llm.Chunk
			_, err := m.Stream(ctx(), userRequest("go"), collect(&chunks))
			Expect(err).To(MatchError(ContainSubstring("fault.yaml: turn 1 of 1 (line 1): injected fault close-mid-stream")))
			Expect(chunkJSON(chunks)).To(Equal(vocabChunks[:6]), "4 of 9 deltas, with their block starts")
			Expect(m.Journal().Entries()[0].Error).To(ContainSubstring("injected fault close-mid-stream"))
		})

		It("http-500 fails before any chunk", func() {
			m := mockmodel.NewModel(mustParse("- text: x\n  fault: http-500\n", "f.yaml"))
			var chunks []llm.Chunk
			_, err := m.Stream(ctx(), userRequest("go"), collect(&chunks))
			var re *mockmodel.RequestError
			Expect(errors.As(err, &re)).To(BeTrue())
			Expect(re.Status).To(Equal(500))
			Expect(chunks).To(BeEmpty())
		})

		It("hang waits for the context", func() {
			m := mockmodel.NewModel(mustParse("- text: one two three four\n  fault: hang\n", "hang.yaml"))
			c, cancel := context.WithTimeout(ctx(), 100*time.Millisecond)
			defer cancel()
			var chunks []llm.Chunk
			_, err := m.Stream(c, userRequest("go"), collect(&chunks))
			// It returned because its context ended, with that reason.
			Expect(errors.Is(err, context.DeadlineExceeded)).To(BeTrue())
			Expect(c.Err()).To(MatchError(context.DeadlineExceeded))
			Expect(chunks).To(HaveLen(3)) // block-start + 2 of 4 deltas
		})
	})
})
