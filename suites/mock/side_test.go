package mock

import (
	"bytes"
	"encoding/json"
	"net/http"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/mockmodel"
)

var _ = Describe("side requests (Script.SideText)", func() {
	script := func(side string) *mockmodel.Script {
		return &mockmodel.Script{Name: "side", SideText: side, Turns: []mockmodel.Turn{
			{ToolCalls: []mockmodel.ToolCall{{Name: "todo_write", Arguments: map[string]any{"todos": []any{}}}}},
			{Text: "DONE"},
		}}
	}
	toolless := llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartText, Text: "Generate a title"}}}}}

	It("answers a request offering no tools with the side text, taking no turn", func() {
		m := mockmodel.NewModel(script("Untitled"))
		resp, err := m.Stream(ctx(), toolless, func(llm.Chunk) error { return nil })
		Expect(err).NotTo(HaveOccurred())
		Expect(llm.Message{Content: resp.Content}.Text()).To(Equal("Untitled"))
		Expect(resp.Finish.Kind).To(Equal(llm.FinishStop))
		Expect(m.Remaining()).To(Equal(2))
		resp, err = m.Stream(ctx(), userRequest("plan"), func(llm.Chunk) error { return nil })
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.ToolCalls()).To(HaveLen(1))
		es := m.Journal().Entries()
		Expect(es).To(HaveLen(2))
		Expect(es[0].Side).To(BeTrue())
		Expect(es[0].TurnIndex).To(Equal(-1))
		Expect(es[0].Error).To(BeEmpty())
		Expect(es[1].Side).To(BeFalse())
		Expect(es[1].TurnIndex).To(Equal(0))
	})

	It("is off without SideText: a toolless request takes the next turn", func() {
		m := mockmodel.NewModel(script(""))
		resp, err := m.Stream(ctx(), toolless, func(llm.Chunk) error { return nil })
		Expect(err).NotTo(HaveOccurred())
		Expect(resp.ToolCalls()).To(HaveLen(1))
		Expect(m.Remaining()).To(Equal(1))
		Expect(m.Journal().Entries()[0].Side).To(BeFalse())
	})

	It("works over HTTP on any wire, and loads from YAML", func() {
		s, err := mockmodel.ParseScript([]byte("sideText: A title\nturns:\n  - text: DONE\n"), "side.yaml")
		Expect(err).NotTo(HaveOccurred())
		Expect(s.SideText).To(Equal("A title"))
		srv := mockmodel.NewServer(s)
		DeferCleanup(srv.Close)
		body, _ := json.Marshal(map[string]any{"model": "m", "max_tokens": 10,
			"messages": []any{map[string]any{"role": "user", "content": "Generate a title"}}})
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/messages", bytes.NewReader(body))
		req.Header.Set("content-type", "application/json")
		resp, err := srv.Client().Do(req)
		Expect(err).NotTo(HaveOccurred())
		defer resp.Body.Close()
		var msg struct {
			Content []struct{ Text string } `json:"content"`
		}
		Expect(resp.StatusCode).To(Equal(http.StatusOK))
		Expect(json.NewDecoder(resp.Body).Decode(&msg)).To(Succeed())
		Expect(msg.Content).To(HaveLen(1))
		Expect(msg.Content[0].Text).To(Equal("A title"))
		Expect(srv.Remaining()).To(Equal(1))
		e, _ := srv.Journal().Last()
		Expect(e.Side).To(BeTrue())
		Expect(e.Wire).To(Equal(mockmodel.WireAnthropic))
	})

	It("answers Anthropic count_tokens without taking a turn or journaling", func() {
		srv := mockmodel.NewServer(script(""))
		DeferCleanup(srv.Close)
		post := func(body string) (int, map[string]any) {
			resp, err := srv.Client().Post(srv.URL+"/v1/messages/count_tokens", "application/json", bytes.NewReader([]byte(body)))
			Expect(err).NotTo(HaveOccurred())
			defer resp.Body.Close()
			var out map[string]any
			Expect(json.NewDecoder(resp.Body).Decode(&out)).To(Succeed())
			return resp.StatusCode, out
		}
		code, out := post(`{"model":"m","messages":[{"role":"user","content":"count"}]}`)
		Expect(code).To(Equal(http.StatusOK))
		Expect(out["input_tokens"]).To(BeNumerically(">", 0))
		code, out = post(`not json`)
		Expect(code).To(Equal(http.StatusBadRequest))
		Expect(out["type"]).To(Equal("error"))
		Expect(srv.Remaining()).To(Equal(2))
		Expect(srv.Journal().Len()).To(Equal(0))
	})
})
