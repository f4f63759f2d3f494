package wire

import (
	"encoding/json"
	"strconv"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/mockmodel"
)

var cases = []wireCase{chatCase, responsesCase, anthropicCase, geminiCase}

func newDriver(wc wireCase, srv *mockmodel.Server) driver {
	d, err := wc.newDriver(srv)
	Expect(err).NotTo(HaveOccurred())
	return d
}

var _ = Describe("the mock model through each API's official SDK", func() {
	for _, wc := range cases {
		Describe(wc.name, func() {
			for _, stream := range []bool{false, true} {
				mode := map[bool]string{false: "non-streaming", true: "streaming"}[stream]

				It("answers the scripted turn: reasoning, text, the tool call with its arguments intact, usage ("+mode+")", func() {
					srv := startServer()
					r, err := newDriver(wc, srv).send(ctx(), stream, nil, false)
					Expect(err).NotTo(HaveOccurred())

					Expect(r.reasoning).To(Equal("The user wants two todos."))
					Expect(r.text).To(Equal("Recording the plan."))
					Expect(r.calls).To(HaveLen(1))
					Expect(r.calls[0].id).To(Equal("call_1"))
					Expect(r.calls[0].name).To(Equal(toolName))
					Expect(r.calls[0].args).To(MatchJSON(wantArgs))
					if wc.wire != mockmodel.WireGemini { // Gemini args are a map in the SDK: key order is its own
						Expect(r.calls[0].args).To(Equal(wantArgs), "the argument string byte for byte")
					}
					Expect(r.usage).To(Equal(wc.usage))
					Expect(r.stop).To(Equal(wc.stop[0]))

					if stream {
						Expect(r.textDeltas).To(Equal(3), `"Recording", " the", " plan."`)
						if wc.streamsArgs {
							// 111 bytes of arguments in 5-byte pieces (a
							// piece never splits the ✓).
							Expect(r.argDeltas).To(Equal(23), "a multi-chunk tool call")
						} else {
							Expect(r.argDeltas).To(BeZero())
							Expect(r.callEvents).To(Equal(1), "the call arrives whole, in one event")
						}
						Expect(r.events).To(BeNumerically(">", r.textDeltas+r.argDeltas))
					}

					entries := srv.Journal().Entries()
					Expect(entries).To(HaveLen(1))
					e := entries[0]
					Expect(e.Error).To(BeEmpty())
					Expect(e.Wire).To(Equal(wc.wire))
					Expect(e.Stream).To(Equal(stream))
					Expect(e.System).To(Equal(systemPrompt))
					Expect(e.Messages).To(Equal([]llm.Message{{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartText, Text: userPrompt}}}}))
					Expect(e.Tools).To(HaveLen(1))
					Expect(e.Tools[0].Name).To(Equal(toolName))
					Expect(e.Tools[0].Description).To(Equal(toolDesc))
					Expect(e.Tools[0].Parameters).To(MatchJSON(todoSchemaJSON), "the schema as offered")
				})

				It("round-trips a tool result; the journal's canonical entry carries it with its error flag ("+mode+")", func() {
					srv := startServer()
					d := newDriver(wc, srv)
					r1, err := d.send(ctx(), stream, nil, false)
					Expect(err).NotTo(HaveOccurred())
					r2, err := d.send(ctx(), stream, &r1, true)
					Expect(err).NotTo(HaveOccurred(), "the second request meets turn 2's expect (last message a tool error containing %q)", "duplicate content")
					Expect(r2.text).To(Equal("DONE"))
					Expect(r2.calls).To(BeEmpty())
					Expect(r2.reasoning).To(BeEmpty())
					Expect(r2.stop).To(Equal(wc.stop[1]))

					entries := srv.Journal().Entries()
					Expect(entries).To(HaveLen(2))
					for i, e := range entries {
						Expect(e.Error).To(BeEmpty())
						Expect(e.TurnIndex).To(Equal(i))
						Expect(e.Wire).To(Equal(wc.wire))
						Expect(e.ToolErrors).To(Equal(wc.toolErrors))
						Expect(e.Stream).To(Equal(stream))
						Expect(e.Path).To(Equal(wc.pathFor(stream)))
						Expect(e.Model).NotTo(BeEmpty())
					}
					e := entries[1]
					Expect(e.System).To(Equal(systemPrompt))
					Expect(e.Messages).To(HaveLen(3))
					Expect(e.Messages[0]).To(Equal(llm.Message{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartText, Text: userPrompt}}}))

					asst := e.Messages[1]
					Expect(asst.Role).To(Equal(llm.RoleAssistant))
					Expect(asst.Text()).To(Equal("Recording the plan."))
					Expect(asst.ToolCalls()).To(HaveLen(1))
					tc := asst.ToolCalls()[0]
					Expect(tc.ID).To(Equal("call_1"))
					Expect(tc.Name).To(Equal(toolName))
					Expect(tc.Arguments).To(MatchJSON(wantArgs))
					if wc.sendsReasoningBack {
						Expect(asst.Content[0]).To(Equal(llm.Part{Type: llm.PartReasoning, Text: "The user wants two todos."}))
					}

					Expect(e.Messages[2]).To(Equal(llm.Message{
						Role: llm.RoleTool, ToolCallID: "call_1", IsError: true,
						Content: []llm.Part{{Type: llm.PartText, Text: wc.errorText}},
					}))
					Expect(e.Tools).To(HaveLen(1))
					Expect(e.Tools[0].Parameters).To(MatchJSON(todoSchemaJSON))
					Expect(json.Valid(e.Raw)).To(BeTrue())
					Expect(string(e.Raw)).To(ContainSubstring("duplicate content"), "the raw body is kept")
					Expect(srv.Remaining()).To(BeZero())
				})

				It("refuses requests the script does not expect, in the API's own error shape, and the SDK surfaces the message ("+mode+")", func() {
					srv := startServer()
					d := newDriver(wc, srv)
					r1, err := d.send(ctx(), stream, nil, false)
					Expect(err).NotTo(HaveOccurred())

					// The tool result is not an error: turn 2's expect fails.
					_, err = d.send(ctx(), stream, &r1, false)
					Expect(err).To(HaveOccurred())
					ae, ok := d.apiError(err)
					Expect(ok).To(BeTrue(), "the SDK's typed API error, got %T: %v", err, err)
					Expect(ae.status).To(Equal(422))
					Expect(ae.kind).To(Equal(wc.kinds[0]))
					Expect(ae.message).To(HavePrefix(scriptFile + `: turn 2 of 2 (line 14): expect failed: ` +
						`expect.lastIsError: want true, got false (tool result for call_1 (isError=false) "` + okResult + `"); ` +
						`expect.lastContains: want text containing "duplicate content"`))
					Expect(ae.code).To(Equal(mockmodel.CodeExpectFailed))
					if wc.printsMessage {
						Expect(err.Error()).To(ContainSubstring("expect.lastIsError: want true, got false"), "the SDK's error text carries the message")
					}
					expectMsg := ae.message

					// Nothing is left of the script.
					_, err = d.send(ctx(), stream, &r1, true)
					ae, ok = d.apiError(err)
					Expect(ok).To(BeTrue(), "the SDK's typed API error, got %T: %v", err, err)
					Expect(ae.status).To(Equal(410))
					Expect(ae.kind).To(Equal(wc.kinds[1]))
					Expect(ae.code).To(Equal(mockmodel.CodeExhausted))
					Expect(ae.message).To(Equal(scriptFile + `: no turn left for request 3: the script has 2 turn(s); ` +
						`last message: tool result for call_1 (isError=true) ` + strconv.Quote(wc.errorText)))

					entries := srv.Journal().Entries()
					Expect(entries).To(HaveLen(3))
					Expect(entries[1].Status).To(Equal(422))
					Expect(entries[1].Error).To(Equal(expectMsg))
					Expect(entries[2].Status).To(Equal(410))
					Expect(entries[2].Error).To(Equal(ae.message))
					Expect(entries[2].Wire).To(Equal(wc.wire))
				})
			}
		})
	}
})
