package fullloop

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"
	"unicode/utf8"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/stdio"
	"github.com/todoharness/todoharness/internal/testutil"
)

// faultTimeout bounds a turn whose model fails or hangs: the spec fails
// (instead of the suite hanging) if the turn does not end well within it.
const faultTimeout = time.Minute

var _ = Describe("the full loop", func() {
	for _, tg := range targets {
		Describe("via the "+tg.name+" model", Label("target:"+tg.name), func() {
			loopSpecs(tg)
		})
	}
})

// loopSpecs is the body every target runs.
func loopSpecs(tg target) {
	Describe("todo_write through the real loop", func() {
		It("lands exactly one todo/write per call inside the open turn, between the call and its result; the model sees the counts; a second call replaces the list", func() {
			l := newLoop(tg, "replace.yaml", 0)
			l.completes("Please fix the parser.")
			evs := l.events()

			By("one todo/write between each tool/call and its tool/result, in the same step of the open turn")
			spans := callSpans(evs)
			Expect(spans).To(HaveLen(2))
			for _, sp := range spans {
				Expect(sp.call.Name).To(Equal("todo_write"))
				Expect([]int{sp.result.Turn, sp.result.Step}).To(Equal([]int{sp.call.Turn, sp.call.Step}))
				Expect(sp.between).To(HaveLen(1), "events between tool/call %s and its result", sp.call.CallID)
				Expect(sp.between[0].Type).To(Equal(session.TypeTodoWrite))
				Expect(sp.result.IsError).To(BeFalse())
			}
			Expect(ofType(evs, session.TypeTodoWrite)).To(HaveLen(2))
			Expect([]int{spans[0].call.Step, spans[1].call.Step}).To(Equal([]int{1, 2}))
			Expect(evs[0].Type).To(Equal(session.TypeTurnStart))
			Expect(evs[len(evs)-1].Type).To(Equal(session.TypeTurnEnd))

			By("the second list replacing the first")
			first := items("read the code", "in_progress", "write the fix", "pending", "run the tests", "pending")
			second := items("read the code", "completed", "write the fix", "in_progress", "run the tests", "pending")
			Expect(todoLists(evs)).To(Equal([][]session.TodoItem{first, second}))
			current, ok := l.log.CurrentTodos()
			Expect(ok).To(BeTrue())
			Expect(current).To(Equal(second))

			By("the next model request carrying the counts result (journal)")
			j := l.journal.Entries()
			Expect(j).To(HaveLen(3))
			Expect(journalErrors(l.journal)).To(BeEmpty())
			Expect(j[0].System).To(Equal(system))
			for i, want := range map[int]string{
				1: "Updated todo list: 2 pending, 1 in progress, 0 completed.",
				2: "Updated todo list: 1 pending, 1 in progress, 1 completed.",
			} {
				last := lastMessage(j[i])
				Expect(last.Role).To(Equal(llm.RoleTool))
				Expect(last.IsError).To(BeFalse())
				Expect(last.ToolCallID).To(Equal(spans[i-1].call.CallID))
				Expect(last.Text()).To(Equal(want))
			}
			By("the history holding no todo/write: only user, assistant and tool messages")
			Expect(roles(j[2].Messages)).To(Equal([]string{"user", "assistant", "tool", "assistant", "tool"}))

			l.golden("replace")
		})

		It("clears the plan with an empty list", func() {
			l := newLoop(tg, "clear.yaml", 0)
			l.completes("What is left?")
			evs := l.events()
			Expect(todoLists(evs)).To(HaveLen(2))
			current, ok := l.log.CurrentTodos()
			Expect(ok).To(BeTrue())
			Expect(current).To(BeEmpty())
			Expect(current).NotTo(BeNil())
			l.golden("clear")
		})

		DescribeTable("an invalid call gets an isError result the model sees in its next request, and appends no todo/write",
			func(name, errPrefix string) {
				l := newLoop(tg, "invalid-"+name+".yaml", 0)
				l.completes("Plan the work.")
				evs := l.events()

				spans := callSpans(evs)
				Expect(spans).To(HaveLen(2))
				rejected := spans[1]
				Expect(rejected.result.IsError).To(BeTrue())
				Expect(rejected.result.Content).To(HaveLen(1))
				Expect(rejected.result.Content[0].Text).To(HavePrefix(errPrefix))
				Expect(rejected.between).To(BeEmpty(), "events between the rejected call and its result")

				first := items("read the code", "in_progress", "write the fix", "pending")
				Expect(todoLists(evs)).To(Equal([][]session.TodoItem{first}))
				current, _ := l.log.CurrentTodos()
				Expect(current).To(Equal(first))

				By("the model seeing the error as the last message of its next request")
				j := l.journal.Entries()
				Expect(j).To(HaveLen(3))
				last := lastMessage(j[2])
				Expect(last.Role).To(Equal(llm.RoleTool))
				Expect(last.ToolCallID).To(Equal(rejected.call.CallID))
				Expect(last.IsError).To(BeTrue())
				Expect(last.Text()).To(HavePrefix(errPrefix))

				l.golden("invalid-" + name)
			},
			Entry("duplicate content", "duplicate", `Error: invalid todos: duplicate content "read the code"`),
			Entry("two tasks in_progress", "two-in-progress", "Error: invalid todos: at most one task may be in_progress, got 2"),
			Entry("a bad status", "bad-status", "Error: invalid arguments: at /todos/0/status: value must be one of"),
			Entry("whitespace-only content", "empty-content", "Error: invalid todo: `content` must be a non-empty string"),
		)
	})

	Describe("streaming", func() {
		It("reassembles tool-call arguments split over many 3-byte deltas exactly", func() {
			l := newLoop(tg, "chunked.yaml", 0)
			l.completes("Write the plan.")
			evs := l.events()

			var deltas []string
			for _, e := range ofType(evs, session.TypeAssistantChunk) {
				c := decode[session.AssistantChunk](e).Chunk
				if c.Type == llm.ChunkToolCallDelta {
					Expect(c.ArgumentsDelta).NotTo(BeNil())
					deltas = append(deltas, *c.ArgumentsDelta)
				}
			}
			call := decode[session.ToolCall](ofType(evs, session.TypeToolCall)[0])
			Expect(strings.Join(deltas, "")).To(Equal(call.Arguments), "the deltas, joined, are the call's arguments")
			Expect(len(deltas)).To(BeNumerically(">=", len(call.Arguments)/3), "arguments of %d bytes came in %d deltas", len(call.Arguments), len(deltas))
			for _, d := range deltas {
				Expect(len(d)).To(BeNumerically("<=", 3+utf8.UTFMax-1), "delta %q", d)
				Expect(utf8.ValidString(d)).To(BeTrue(), "delta %q splits a UTF-8 sequence", d)
			}

			By("the arguments being the script's, byte for byte, in the log, the todo/write and the next request")
			var args struct {
				Todos []session.TodoItem `json:"todos"`
			}
			Expect(json.Unmarshal([]byte(call.Arguments), &args)).To(Succeed())
			want := items("écrire les tests ✓ — « vite »", "in_progress", `quote "this" and C:\path`, "pending", "日本語のタスク", "completed")
			Expect(args.Todos).To(Equal(want))
			Expect(todoLists(evs)).To(Equal([][]session.TodoItem{want}))
			j := l.journal.Entries()
			Expect(j).To(HaveLen(2))
			sent := j[1].Messages[len(j[1].Messages)-2].ToolCalls()
			Expect(sent).To(HaveLen(1))
			Expect(sent[0].Arguments).To(Equal(call.Arguments))

			l.golden("chunked")
		})

		It("ends the turn with reason error, not a hang or a panic, when the stream breaks off; the chunks already written stay", func() {
			l := newLoop(tg, "close-mid-stream.yaml", 0)
			ctx, cancel := context.WithTimeout(context.Background(), faultTimeout)
			defer cancel()
			reason := l.prompt(ctx, "Plan the work.")
			Expect(ctx.Err()).NotTo(HaveOccurred(), "the turn ended by the test's timeout, not by the broken stream")
			Expect(reason.Kind).To(Equal(session.TurnError))
			Expect(reason.Message).NotTo(BeEmpty())

			evs := l.events()
			chunks := ofType(evs, session.TypeAssistantChunk)
			Expect(chunks).NotTo(BeEmpty())
			var text strings.Builder
			for _, e := range chunks {
				c := decode[session.AssistantChunk](e).Chunk
				Expect(c.Type).NotTo(BeElementOf(llm.ChunkFinish, llm.ChunkBlockEnd), "a chunk of the missing second half")
				if c.Type == llm.ChunkTextDelta {
					text.WriteString(c.Text)
				}
			}
			Expect(text.String()).NotTo(BeEmpty())
			Expect("Let me write the plan for this work now.").To(HavePrefix(text.String()))
			Expect(ofType(evs, session.TypeAssistantMessage)).To(BeEmpty())
			Expect(ofType(evs, session.TypeToolCall)).To(BeEmpty())
			Expect(ofType(evs, session.TypeTodoWrite)).To(BeEmpty())
			Expect(lastTurnEnd(evs).Reason).To(Equal(reason))
			Expect(l.file()).To(ContainSubstring(`"type":"turn/end"`), "the error turn is flushed to disk")

			By("the session going on with the next prompt")
			l.completes("Please try again.")
			j := l.journal.Entries()
			Expect(j).To(HaveLen(2))
			Expect(roles(j[1].Messages)).To(Equal([]string{"user", "user"}))

			l.golden("close-mid-stream." + tg.name)
		})
	})

	Describe("guards", func() {
		It("stops a model that keeps calling tools after MaxSteps steps with reason max-steps", func() {
			l := newLoop(tg, "max-steps.yaml", 2)
			reason := l.prompt(context.Background(), "Keep going.")
			Expect(reason).To(Equal(session.TurnEndReason{Kind: session.TurnMaxSteps, Message: "stopped after 2 steps"}))
			evs := l.events()
			Expect(ofType(evs, session.TypeStepStart)).To(HaveLen(2))
			Expect(ofType(evs, session.TypeToolResult)).To(HaveLen(2))
			Expect(l.journal.Len()).To(Equal(2))
			Expect(journalErrors(l.journal)).To(BeEmpty())
			l.golden("max-steps")
		})

		It("ends a turn cancelled while the model streams with reason cancelled, keeping what arrived", func() {
			l := newLoop(tg, "hang.yaml", 0)
			// The cause of the cancellation says who cancelled: the first
			// streamed delta, or the test's timeout (a failure bound only).
			errFirstDelta, errTimeout := errors.New("the first text delta was logged"), errors.New("the test's timeout")
			ctx, cancel := context.WithCancelCause(context.Background())
			defer cancel(nil)
			unsubscribe := l.log.Subscribe(func(e session.Event) {
				if e.Type == session.TypeAssistantChunk && strings.Contains(string(e.Data), `"text-delta"`) {
					cancel(errFirstDelta)
				}
			})
			timer := time.AfterFunc(faultTimeout, func() { cancel(errTimeout) })
			defer timer.Stop()
			reason := l.prompt(ctx, "Split the work.")
			unsubscribe()
			Expect(context.Cause(ctx)).To(MatchError(errFirstDelta), "cancelled by the streamed delta, not by the test's timeout")
			Expect(reason).To(Equal(session.TurnEndReason{Kind: session.TurnCancelled}))

			evs := l.events()
			var text strings.Builder
			for _, e := range ofType(evs, session.TypeAssistantChunk) {
				if c := decode[session.AssistantChunk](e).Chunk; c.Type == llm.ChunkTextDelta {
					text.WriteString(c.Text)
				}
			}
			Expect(text.String()).To(Equal("Thinking"), "the half the script sent before it stalled")
			Expect(ofType(evs, session.TypeAssistantMessage)).To(BeEmpty())
			Expect(lastTurnEnd(evs).Reason.Kind).To(Equal(session.TurnCancelled))

			By("the session going on with the next prompt")
			l.completes("Once again.")
			l.golden("hang")
		})
	})

	Describe("the stdio chat", func() {
		// chat runs stdio.Chat over piped input and returns its transcript.
		chat := func(l *loop, input string) string {
			GinkgoHelper()
			var out strings.Builder
			in, interactive, err := stdio.NewInput(strings.NewReader(input), &out, "")
			Expect(err).NotTo(HaveOccurred())
			Expect(interactive).To(BeFalse())
			c := &stdio.Chat{Agent: l.agent, Out: &out, Echo: !interactive}
			Expect(c.Run(context.Background(), in)).To(Succeed())
			return out.String()
		}

		It("streams the text and prints the [todos] checklist on every todo/write (same transcript as the binary)", func() {
			l := newLoop(tg, "chat.yaml", 0)
			out := chat(l, chatInput)
			Expect(journalErrors(l.journal)).To(BeEmpty())
			testutil.AssertGolden(GinkgoTB(), "fullloop", "chat", []byte(out))
		})

		It("prints what arrived and an [error] note when the stream breaks off, then goes on", func() {
			l := newLoop(tg, "close-mid-stream.yaml", 0)
			out := chat(l, "plan the work\nplease try again\n")
			Expect(out).To(MatchRegexp(`(?s)^> plan the work\nLet me write the plan for this work now\.\n\[error\] \S.*\n> please try again\nRecovered\.\n$`))
		})
	})
}
