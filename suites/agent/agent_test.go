package agent

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/agent"
	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/tools"
)

var _ = Describe("Agent.Prompt", func() {
	var (
		log   *session.Log
		model *fakeModel
		reg   *tools.Registry
	)
	BeforeEach(func() {
		log = newLog()
		model = &fakeModel{}
		reg = shippedTools()
	})
	newAgent := func(maxSteps int) *agent.Agent {
		return agent.New(log, agent.Config{Model: model, Tools: reg, ModelName: "m", System: "sys", MaxSteps: maxSteps})
	}

	It("writes a turn in order: turn/start, user/message, steps with the model's chunks, message, tool call and result, turn/end completed", func() {
		model.steps = []step{
			answer(llm.FinishToolCalls, call("c1", "todo_write", todos("read", "in_progress"))),
			answer(llm.FinishStop, text("done")),
		}
		reason, err := newAgent(0).Prompt(context.Background(), prompt("go"))
		Expect(err).NotTo(HaveOccurred())
		Expect(reason).To(Equal(session.TurnEndReason{Kind: session.TurnCompleted}))
		Expect(nonChunkTypes(log)).To(Equal([]string{
			"turn/start", "user/message",
			"step/start", "assistant/message", "tool/call", "todo/write", "tool/result", "step/end",
			"step/start", "assistant/message", "step/end",
			"turn/end",
		}))
		Expect(session.CheckEvents(log.Events())).To(Succeed())

		By("sending the system prompt, the model name, the tools and the derived history")
		reqs := model.requests()
		Expect(reqs).To(HaveLen(2))
		Expect(reqs[0].System).To(Equal("sys"))
		Expect(reqs[0].Model).To(Equal("m"))
		Expect(reqs[0].Tools).To(HaveLen(1))
		Expect(reqs[0].Tools[0].Name).To(Equal("todo_write"))
		Expect(reqs[0].Messages).To(HaveLen(1))
		last := reqs[1].Messages[len(reqs[1].Messages)-1]
		Expect(last.Role).To(Equal(llm.RoleTool))
		Expect(last.ToolCallID).To(Equal("c1"))
		Expect(last.Text()).To(Equal("Updated todo list: 0 pending, 1 in progress, 0 completed."))

		By("linking the assistant message to its chunks and the result to its call")
		msg := eventsOf(log, session.TypeAssistantMessage)[0]
		var chunkSeqs []int
		for _, e := range eventsOf(log, session.TypeAssistantChunk) {
			var d session.AssistantChunk
			Expect(e.Decode(&d)).To(Succeed())
			if d.Step == 1 {
				chunkSeqs = append(chunkSeqs, e.Seq)
			}
		}
		Expect(msg.SourceEventSeqs).To(Equal(chunkSeqs))
		Expect(eventsOf(log, session.TypeToolResult)[0].SourceEventSeqs).To(Equal([]int{eventsOf(log, session.TypeToolCall)[0].Seq}))
	})

	It("numbers turns on from the log and keeps the earlier turns in the history", func() {
		model.steps = []step{answer(llm.FinishStop, text("one")), answer(llm.FinishStop, text("two"))}
		a := newAgent(0)
		_, err := a.Prompt(context.Background(), prompt("first"))
		Expect(err).NotTo(HaveOccurred())
		_, err = a.Prompt(context.Background(), prompt("second"))
		Expect(err).NotTo(HaveOccurred())
		var starts []int
		for _, e := range eventsOf(log, session.TypeTurnStart) {
			var d session.TurnStart
			Expect(e.Decode(&d)).To(Succeed())
			starts = append(starts, d.Turn)
		}
		Expect(starts).To(Equal([]int{1, 2}))
		msgs := model.requests()[1].Messages
		Expect(msgs).To(HaveLen(3))
		Expect([]string{msgs[0].Text(), msgs[1].Text(), msgs[2].Text()}).To(Equal([]string{"first", "one", "second"}))
	})

	It("runs tools with the agent as owner, and the call's id, turn and step in exec", func() {
		var got tools.Exec
		_, err := reg.Register(tools.Tool{
			Name: "probe", Parameters: json.RawMessage(`{"type":"object"}`),
			Execute: func(_ context.Context, exec tools.Exec, _ json.RawMessage) (tools.Result, error) {
				got = exec
				return tools.TextResult("ok"), nil
			},
		})
		Expect(err).NotTo(HaveOccurred())
		model.steps = []step{
			answer(llm.FinishToolCalls, call("c9", "probe", map[string]any{})),
			answer(llm.FinishStop, text("done")),
		}
		a := newAgent(0)
		_, err = a.Prompt(context.Background(), prompt("go"))
		Expect(err).NotTo(HaveOccurred())
		Expect(got.Agent).To(BeIdenticalTo(a))
		Expect(got.Agent.Session()).To(BeIdenticalTo(log))
		Expect(got.CallID).To(Equal("c9"))
		Expect([]int{got.Turn, got.Step}).To(Equal([]int{1, 1}))
	})

	It("stops a model that keeps calling tools after MaxSteps steps with reason max-steps", func() {
		for i := 0; i < 3; i++ {
			model.steps = append(model.steps, answer(llm.FinishToolCalls, call("c"+string(rune('1'+i)), "todo_write", todos("x", "pending"))))
		}
		reason, err := newAgent(3).Prompt(context.Background(), prompt("go"))
		Expect(err).NotTo(HaveOccurred())
		Expect(reason.Kind).To(Equal(session.TurnMaxSteps))
		Expect(model.requests()).To(HaveLen(3))
		Expect(eventsOf(log, session.TypeStepStart)).To(HaveLen(3))
		Expect(lastTurnEnd(log).Reason.Kind).To(Equal(session.TurnMaxSteps))
		Expect(session.CheckEvents(log.Events())).To(Succeed())
	})

	It("ends a turn whose context is already cancelled with reason cancelled, without calling the model", func() {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		reason, err := newAgent(0).Prompt(ctx, prompt("go"))
		Expect(err).NotTo(HaveOccurred())
		Expect(reason.Kind).To(Equal(session.TurnCancelled))
		Expect(model.requests()).To(BeEmpty())
		Expect(types(log)).To(Equal([]string{"turn/start", "user/message", "turn/end"}))
	})

	It("ends the turn with reason cancelled when the context is cancelled while the model streams, keeping the chunks", func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		model.steps = []step{func(ctx context.Context, _ llm.Request, emit func(llm.Chunk) error) (llm.Response, error) {
			Expect(emit(llm.Chunk{Type: llm.ChunkBlockStart, Index: llm.IntPtr(0), BlockType: llm.PartText})).To(Succeed())
			Expect(emit(llm.Chunk{Type: llm.ChunkTextDelta, Index: llm.IntPtr(0), Text: "half"})).To(Succeed())
			cancel()
			<-ctx.Done()
			return llm.Response{}, ctx.Err()
		}}
		reason, err := newAgent(0).Prompt(ctx, prompt("go"))
		Expect(err).NotTo(HaveOccurred())
		Expect(reason.Kind).To(Equal(session.TurnCancelled))
		Expect(types(log)).To(Equal([]string{"turn/start", "user/message", "step/start",
			"assistant/chunk", "assistant/chunk", "step/end", "turn/end"}))
	})

	It("answers every tool call of a step cancelled during a tool: the rest get an error result and are not run", func() {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		runs := 0
		_, err := reg.Register(tools.Tool{
			Name: "cancel", Parameters: json.RawMessage(`{"type":"object"}`),
			Execute: func(context.Context, tools.Exec, json.RawMessage) (tools.Result, error) {
				runs++
				cancel()
				return tools.TextResult("ran"), nil
			},
		})
		Expect(err).NotTo(HaveOccurred())
		model.steps = []step{answer(llm.FinishToolCalls,
			call("a", "cancel", map[string]any{}), call("b", "cancel", map[string]any{}))}
		reason, err := newAgent(0).Prompt(ctx, prompt("go"))
		Expect(err).NotTo(HaveOccurred())
		Expect(reason.Kind).To(Equal(session.TurnCancelled))
		Expect(runs).To(Equal(1))
		results := eventsOf(log, session.TypeToolResult)
		Expect(results).To(HaveLen(2))
		var second session.ToolResult
		Expect(results[1].Decode(&second)).To(Succeed())
		Expect(second.IsError).To(BeTrue())
		Expect(second.Content[0].Text).To(Equal("Error: " + agent.CancelledCallText))
		Expect(session.CheckEvents(log.Events())).To(Succeed())
	})

	It("ends the turn with reason error on a model error and keeps every chunk already written", func() {
		model.steps = []step{func(_ context.Context, _ llm.Request, emit func(llm.Chunk) error) (llm.Response, error) {
			Expect(emit(llm.Chunk{Type: llm.ChunkBlockStart, Index: llm.IntPtr(0), BlockType: llm.PartText})).To(Succeed())
			Expect(emit(llm.Chunk{Type: llm.ChunkTextDelta, Index: llm.IntPtr(0), Text: "par"})).To(Succeed())
			return llm.Response{}, errors.New("connection reset")
		}}
		reason, err := newAgent(0).Prompt(context.Background(), prompt("go"))
		Expect(err).NotTo(HaveOccurred())
		Expect(reason).To(Equal(session.TurnEndReason{Kind: session.TurnError, Message: "connection reset"}))
		Expect(types(log)).To(Equal([]string{"turn/start", "user/message", "step/start",
			"assistant/chunk", "assistant/chunk", "step/end", "turn/end"}))
		Expect(lastTurnEnd(log).Reason.Message).To(Equal("connection reset"))
		Expect(session.CheckEvents(log.Events())).To(Succeed())
	})

	It("treats a finish reason of error as a model error", func() {
		model.steps = []step{answer(llm.FinishError, text("cut"))}
		reason, err := newAgent(0).Prompt(context.Background(), prompt("go"))
		Expect(err).NotTo(HaveOccurred())
		Expect(reason.Kind).To(Equal(session.TurnError))
		Expect(eventsOf(log, session.TypeAssistantMessage)).To(BeEmpty())
	})

	It("turns a panicking model into a turn that ends with reason error", func() {
		model.steps = []step{func(context.Context, llm.Request, func(llm.Chunk) error) (llm.Response, error) {
			panic("boom")
		}}
		reason, err := newAgent(0).Prompt(context.Background(), prompt("go"))
		Expect(err).NotTo(HaveOccurred())
		Expect(reason.Kind).To(Equal(session.TurnError))
		Expect(reason.Message).To(ContainSubstring("boom"))
		Expect(session.CheckEvents(log.Events())).To(Succeed())
	})

	It("gives a tool call without an id one, used by its call, its result and the history", func() {
		model.steps = []step{
			answer(llm.FinishToolCalls, call("", "todo_write", todos("x", "pending"))),
			answer(llm.FinishStop, text("ok")),
		}
		_, err := newAgent(0).Prompt(context.Background(), prompt("go"))
		Expect(err).NotTo(HaveOccurred())
		var c session.ToolCall
		Expect(eventsOf(log, session.TypeToolCall)[0].Decode(&c)).To(Succeed())
		Expect(c.CallID).To(Equal("call_1_1_0"))
		msgs := model.requests()[1].Messages
		Expect(msgs[1].ToolCalls()[0].ID).To(Equal("call_1_1_0"))
		Expect(msgs[2].ToolCallID).To(Equal("call_1_1_0"))
	})

	It("returns the log's refusal as an error and still closes the open step and the turn", func() {
		// A tool that answers its own call on the log makes the agent's
		// tool/result a violation (no pending call) while the step is open.
		_, err := reg.Register(tools.Tool{
			Name: "rogue", Parameters: json.RawMessage(`{"type":"object"}`),
			Execute: func(_ context.Context, exec tools.Exec, _ json.RawMessage) (tools.Result, error) {
				_, err := exec.Agent.Session().Append(session.TypeToolResult, session.ToolResult{
					Turn: exec.Turn, Step: exec.Step, CallID: exec.CallID, Content: []llm.Part{text("mine")},
				}, session.WithSourceEventSeqs(0))
				return tools.TextResult("ok"), err
			},
		})
		Expect(err).NotTo(HaveOccurred())
		model.steps = []step{answer(llm.FinishToolCalls, call("r", "rogue", map[string]any{}))}
		reason, err := newAgent(0).Prompt(context.Background(), prompt("go"))
		var ie *session.InvariantError
		Expect(errors.As(err, &ie)).To(BeTrue(), "err = %v", err)
		Expect(reason.Kind).To(Equal(session.TurnError))
		Expect(nonChunkTypes(log)[len(nonChunkTypes(log))-2:]).To(Equal([]string{"step/end", "turn/end"}))
		Expect(session.CheckEvents(log.Events())).To(Succeed())
		t, s, _ := log.OpenTurn()
		Expect([]int{t, s}).To(Equal([]int{0, 0}))
	})

	It("refuses a second prompt while a turn runs", func() {
		started := make(chan struct{})
		release := make(chan struct{})
		model.steps = []step{func(context.Context, llm.Request, func(llm.Chunk) error) (llm.Response, error) {
			close(started)
			<-release
			return answer(llm.FinishStop, text("ok"))(context.Background(), llm.Request{}, func(llm.Chunk) error { return nil })
		}}
		a := newAgent(0)
		done := make(chan error, 1)
		go func() {
			_, err := a.Prompt(context.Background(), prompt("one"))
			done <- err
		}()
		Eventually(started).WithTimeout(time.Minute).Should(BeClosed())
		_, err := a.Prompt(context.Background(), prompt("two"))
		Expect(err).To(MatchError(agent.ErrBusy))
		close(release)
		Eventually(done).WithTimeout(time.Minute).Should(Receive(BeNil()))
	})
})
