package mock

import (
	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/mockmodel"
)

var _ = Describe("Given deltas (a recorded answer replayed chunk for chunk)", func() {
	It("streams exactly the given pieces, dropping empty ones", func() {
		s := &mockmodel.Script{Turns: []mockmodel.Turn{{
			Reasoning: "Do it.", ReasoningDeltas: []string{"D", "o it", "."},
			Text: "DONE", TextDeltas: []string{"D", "ONE"},
			ToolCalls: []mockmodel.ToolCall{{ID: "c1", Name: "todo_write", RawArguments: `{"todos":[]}`,
				ArgumentDeltas: []string{"", `{"to`, `dos":[]}`}}},
		}}}
		Expect(s.Validate()).To(Succeed())
		var chunks []llm.Chunk
		_, err := mockmodel.NewModel(s).Stream(ctx(), userRequest("go"), collect(&chunks))
		Expect(err).NotTo(HaveOccurred())
		var deltas []string
		for _, c := range chunks {
			switch c.Type {
			case llm.ChunkReasoningDelta, llm.ChunkTextDelta:
				deltas = append(deltas, c.Type+":"+c.Text)
			case llm.ChunkToolCallDelta:
				deltas = append(deltas, c.Type+":"+*c.ArgumentsDelta)
			}
		}
		Expect(deltas).To(Equal([]string{
			"reasoning-delta:D", "reasoning-delta:o it", "reasoning-delta:.",
			"text-delta:D", "text-delta:ONE",
			"tool-call-delta:", "tool-call-delta:{\"to", "tool-call-delta:dos\":[]}",
		}))
	})

	It("refuses deltas that do not join to the whole, naming the field", func() {
		s := &mockmodel.Script{Name: "x", Turns: []mockmodel.Turn{{Text: "DONE", TextDeltas: []string{"D", "ON"}}}}
		Expect(s.Validate()).To(MatchError(ContainSubstring(`turn 1: textDeltas: the deltas join to "DON", not to "DONE"`)))
		s = &mockmodel.Script{Name: "x", Turns: []mockmodel.Turn{{ToolCalls: []mockmodel.ToolCall{{Name: "t", RawArguments: `{}`, ArgumentDeltas: []string{"{"}}}}}}
		Expect(s.Validate()).To(MatchError(ContainSubstring("toolCalls[0].argumentDeltas: the deltas join to")))
		s = &mockmodel.Script{Name: "x", Turns: []mockmodel.Turn{{Text: "a", ReasoningDeltas: []string{"b"}}}}
		Expect(s.Validate()).To(MatchError(ContainSubstring("reasoningDeltas: set without reasoning")))
	})
})
