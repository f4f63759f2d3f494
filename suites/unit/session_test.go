package unit

import (
	"encoding/json"
	"errors"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
)

var _ = Describe("session log", func() {
	Describe("Append", func() {
		It("numbers events from 0 and stamps type, time and data", func() {
			l := newLog()
			a := mustAppend(l, session.TypeTurnStart, session.TurnStart{Turn: 1, Trigger: session.Trigger{Kind: "message"}})
			b := mustAppend(l, session.TypeUserMessage, session.UserMessage{Content: []llm.Part{{Type: llm.PartText, Text: "hi"}}})
			Expect(a.Seq).To(Equal(0))
			Expect(b.Seq).To(Equal(1))
			Expect(a.Type).To(Equal(session.TypeTurnStart))
			Expect(a.Time).To(Equal(int64(1000)))
			Expect(string(a.Data)).To(MatchJSON(`{"turn":1,"trigger":{"kind":"message"}}`))
			Expect(l.Len()).To(Equal(2))
			for i, e := range l.Events() {
				Expect(e.Seq).To(Equal(i), "seq is the index")
			}
		})

		It("marks surface events with surfaceOp append and nothing else", func() {
			l := newLog()
			openTurn(l, 1)
			u := mustAppend(l, session.TypeUserMessage, session.UserMessage{})
			tw := mustAppend(l, session.TypeTodoWrite, session.TodoWrite{Todos: []session.TodoItem{}})
			Expect(u.SurfaceOp).To(Equal(session.SurfaceOpAppend))
			Expect(tw.SurfaceOp).To(BeEmpty())
			Expect(tw.SourceEventSeqs).To(BeNil())
		})
	})

	Describe("clone isolation", func() {
		It("stores a deep copy: mutating the data passed in changes nothing", func() {
			l := newLog()
			openTurn(l, 1)
			todos := []session.TodoItem{{Content: "a", Status: session.StatusPending}}
			mustAppend(l, session.TypeTodoWrite, session.TodoWrite{Todos: todos})
			todos[0].Content = "MUTATED"
			raw := json.RawMessage(`{"todos":[{"content":"b","status":"pending"}]}`)
			mustAppend(l, session.TypeTodoWrite, raw)
			copy(raw, `{"todos":[{"content":"X"`)

			w := todoWrites(l)
			Expect(w).To(HaveLen(2))
			Expect(w[0].Todos[0].Content).To(Equal("a"))
			Expect(w[1].Todos[0].Content).To(Equal("b"))
		})

		It("hands out copies: mutating returned events changes nothing", func() {
			l := newLog()
			openTurn(l, 1)
			ret := mustAppend(l, session.TypeTodoWrite, session.TodoWrite{Todos: []session.TodoItem{{Content: "a", Status: "pending"}}})
			ret.Data[2] = 'X'
			ret.Type = "mutated"

			evs := l.Events()
			evs[2].Data[2] = 'Y'
			evs[2].Seq = 99

			var seen []session.Event
			unsub := l.Subscribe(func(e session.Event) { seen = append(seen, e); e.Data[2] = 'Z' })
			mustAppend(l, session.TypeUserMessage, session.UserMessage{}, session.WithSourceEventSeqs(2))
			unsub()
			Expect(seen).To(HaveLen(1))
			seen[0].SourceEventSeqs[0] = 42

			again := l.Events()
			Expect(again[2].Type).To(Equal(session.TypeTodoWrite))
			Expect(again[2].Seq).To(Equal(2))
			Expect(string(again[2].Data)).To(MatchJSON(`{"todos":[{"content":"a","status":"pending"}]}`))
			Expect(string(again[3].Data)).To(MatchJSON(`{"content":null}`))
			Expect(again[3].SourceEventSeqs).To(Equal([]int{2}))
			todos, ok := l.CurrentTodos()
			Expect(ok).To(BeTrue())
			Expect(todos).To(Equal([]session.TodoItem{{Content: "a", Status: "pending"}}))
		})

		It("Restore keeps its own copy of the events it is given", func() {
			src := newLog()
			openTurn(src, 1)
			mustAppend(src, session.TypeTodoWrite, session.TodoWrite{Todos: []session.TodoItem{{Content: "a", Status: "pending"}}})
			evs := src.Events()
			l, err := session.Restore(src.Header(), evs)
			Expect(err).NotTo(HaveOccurred())
			copy(evs[2].Data, `{"todos":[{"content":"X"`)
			evs[2].Type = "mutated"
			todos, ok := l.CurrentTodos()
			Expect(ok).To(BeTrue())
			Expect(todos[0].Content).To(Equal("a"))
			Expect(l.Events()[2].Type).To(Equal(session.TypeTodoWrite))
		})
	})

	Describe("current todo list", func() {
		It("is absent before any todo/write", func() {
			l := newLog()
			openTurn(l, 1)
			todos, ok := l.CurrentTodos()
			Expect(ok).To(BeFalse())
			Expect(todos).To(BeNil())
		})

		It("is the last todo/write: last write wins, across turns", func() {
			l := newLog()
			openTurn(l, 1)
			mustAppend(l, session.TypeTodoWrite, session.TodoWrite{Todos: []session.TodoItem{{Content: "a", Status: "in_progress"}, {Content: "b", Status: "pending"}}})
			mustAppend(l, session.TypeTodoWrite, session.TodoWrite{Todos: []session.TodoItem{{Content: "a", Status: "completed"}, {Content: "b", Status: "in_progress"}}})
			closeTurn(l, 1)
			openTurn(l, 2)
			mustAppend(l, session.TypeUserMessage, session.UserMessage{})
			want := []session.TodoItem{{Content: "a", Status: "completed"}, {Content: "b", Status: "in_progress"}}
			todos, ok := l.CurrentTodos()
			Expect(ok).To(BeTrue())
			Expect(todos).To(Equal(want))
			todos, ok = session.CurrentTodos(l.Events())
			Expect(ok).To(BeTrue())
			Expect(todos).To(Equal(want))
		})

		It("an empty list written on purpose clears the plan (non-nil, ok)", func() {
			l := newLog()
			openTurn(l, 1)
			mustAppend(l, session.TypeTodoWrite, session.TodoWrite{Todos: []session.TodoItem{{Content: "a", Status: "pending"}}})
			mustAppend(l, session.TypeTodoWrite, session.TodoWrite{Todos: []session.TodoItem{}})
			todos, ok := l.CurrentTodos()
			Expect(ok).To(BeTrue())
			Expect(todos).NotTo(BeNil())
			Expect(todos).To(BeEmpty())
		})
	})

	Describe("DeriveMessages", func() {
		It("projects surface events only, and never a todo/write", func() {
			l := newLog()
			openTurn(l, 1)
			mustAppend(l, session.TypeUserMessage, session.UserMessage{Content: []llm.Part{{Type: llm.PartText, Text: "plan it"}}})
			mustAppend(l, session.TypeAssistantChunk, session.AssistantChunk{Turn: 1, Step: 1, Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Text: "ok"}})
			mustAppend(l, session.TypeAssistantMessage, session.AssistantMessage{Turn: 1, Step: 1, Content: []llm.Part{
				{Type: llm.PartToolCall, ID: "c1", Name: "todo_write", Arguments: `{"todos":[]}`},
			}})
			mustAppend(l, session.TypeToolCall, session.ToolCall{Turn: 1, Step: 1, CallID: "c1", Name: "todo_write", Arguments: `{"todos":[]}`})
			mustAppend(l, session.TypeTodoWrite, session.TodoWrite{Todos: []session.TodoItem{{Content: "SECRET-PLAN", Status: "pending"}}})
			mustAppend(l, session.TypeToolResult, session.ToolResult{Turn: 1, Step: 1, CallID: "c1", Content: []llm.Part{{Type: llm.PartText, Text: "Updated todo list: 1 pending, 0 in progress, 0 completed."}}})

			msgs := l.DeriveMessages()
			Expect(msgs).To(HaveLen(3))
			Expect([]string{msgs[0].Role, msgs[1].Role, msgs[2].Role}).To(Equal([]string{llm.RoleUser, llm.RoleAssistant, llm.RoleTool}))
			Expect(msgs[2].ToolCallID).To(Equal("c1"))
			b, err := json.Marshal(msgs)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(b)).NotTo(ContainSubstring("SECRET-PLAN"))
			Expect(session.DeriveMessages(l.Events())).To(Equal(msgs))
		})

		It("ignores a todo/write even if it carries a surfaceOp", func() {
			evs := []session.Event{{Type: session.TypeTodoWrite, Seq: 0, SurfaceOp: "append", Data: json.RawMessage(`{"todos":[{"content":"x","status":"pending"}]}`)}}
			Expect(session.DeriveMessages(evs)).To(BeEmpty())
		})
	})

	Describe("invariants", func() {
		// violation appends e to a log holding prefix and returns the error.
		invariantErr := func(err error) *session.InvariantError {
			GinkgoHelper()
			Expect(err).To(HaveOccurred())
			var ie *session.InvariantError
			Expect(errors.As(err, &ie)).To(BeTrue(), "want *session.InvariantError, got %T: %v", err, err)
			return ie
		}

		It("rejects an event outside an open turn, and stores nothing", func() {
			l := newLog()
			_, err := l.Append(session.TypeUserMessage, session.UserMessage{})
			ie := invariantErr(err)
			Expect(ie.Msg).To(Equal("event outside an open turn"))
			Expect(ie.Type).To(Equal(session.TypeUserMessage))
			Expect(l.Len()).To(Equal(0))

			openTurn(l, 1)
			closeTurn(l, 1)
			_, err = l.Append(session.TypeTodoWrite, session.TodoWrite{Todos: []session.TodoItem{}})
			Expect(invariantErr(err).Msg).To(Equal("event outside an open turn"))
			Expect(l.Len()).To(Equal(4))
		})

		It("rejects a step-scoped event that names the wrong step or turn", func() {
			l := newLog()
			openTurn(l, 1)
			_, err := l.Append(session.TypeAssistantMessage, session.AssistantMessage{Turn: 1, Step: 2})
			Expect(invariantErr(err).Msg).To(Equal("names turn 1 step 2 but turn 1 step 1 is open"))
			_, err = l.Append(session.TypeToolCall, session.ToolCall{Turn: 7, Step: 1, CallID: "c"})
			Expect(invariantErr(err).Msg).To(Equal("names turn 7 step 1 but turn 1 step 1 is open"))
			_, err = l.Append(session.TypeAssistantChunk, map[string]any{"chunk": map[string]any{"type": "text-delta"}})
			Expect(invariantErr(err).Msg).To(Equal("names turn <none> step <none> but turn 1 step 1 is open"))
			Expect(l.Len()).To(Equal(2))
		})

		It("rejects a step-scoped event outside an open step", func() {
			l := newLog()
			openTurn(l, 1)
			mustAppend(l, session.TypeStepEnd, session.Step{Turn: 1, Step: 1})
			_, err := l.Append(session.TypeAssistantMessage, session.AssistantMessage{Turn: 1, Step: 1})
			Expect(invariantErr(err).Msg).To(Equal("step-scoped event outside an open step"))
		})

		It("rejects a tool/result without its tool/call", func() {
			l := newLog()
			openTurn(l, 1)
			_, err := l.Append(session.TypeToolResult, session.ToolResult{Turn: 1, Step: 1, CallID: "c1"})
			Expect(invariantErr(err).Msg).To(Equal(`tool/result for callId "c1" does not follow a tool/call with that id`))
			mustAppend(l, session.TypeToolCall, session.ToolCall{Turn: 1, Step: 1, CallID: "c1", Name: "todo_write"})
			_, err = l.Append(session.TypeToolResult, session.ToolResult{Turn: 1, Step: 1, CallID: "other"})
			Expect(invariantErr(err).Msg).To(ContainSubstring(`callId "other"`))
			mustAppend(l, session.TypeToolResult, session.ToolResult{Turn: 1, Step: 1, CallID: "c1"})
			_, err = l.Append(session.TypeToolResult, session.ToolResult{Turn: 1, Step: 1, CallID: "c1"})
			Expect(err).To(HaveOccurred(), "a second result for one call")
		})

		It("rejects surface metadata on a non-surface type", func() {
			l := newLog()
			openTurn(l, 1)
			_, err := l.Append(session.TypeTodoWrite, session.TodoWrite{Todos: []session.TodoItem{}}, session.WithSourceEventSeqs(1))
			Expect(invariantErr(err).Msg).To(Equal("surface metadata (surfaceOp/sourceEventSeqs) on a non-surface event"))

			evs := l.Events()
			evs = append(evs, session.Event{Type: session.TypeTodoWrite, Seq: 2, SurfaceOp: "append", Data: json.RawMessage(`{"todos":[]}`)})
			ie := invariantErr(session.CheckEvents(evs))
			Expect(ie.Seq).To(Equal(2))
			Expect(ie.Msg).To(Equal("surface metadata (surfaceOp/sourceEventSeqs) on a non-surface event"))
		})

		It("rejects a surface event without surfaceOp", func() {
			evs := []session.Event{
				{Type: session.TypeTurnStart, Seq: 0, Data: json.RawMessage(`{"turn":1}`)},
				{Type: session.TypeUserMessage, Seq: 1, Data: json.RawMessage(`{"content":[]}`)},
			}
			Expect(invariantErr(session.CheckEvents(evs)).Msg).To(Equal("surface event without surfaceOp"))
		})

		It("rejects a seq that does not increase", func() {
			evs := []session.Event{
				{Type: session.TypeTurnStart, Seq: 0, Data: json.RawMessage(`{"turn":1}`)},
				{Type: session.TypeTurnEnd, Seq: 0, Data: json.RawMessage(`{"turn":1}`)},
			}
			ie := invariantErr(session.CheckEvents(evs))
			Expect(ie.Msg).To(Equal("seq 0 is not greater than the previous seq 0"))
			Expect(ie.Error()).To(Equal("event seq 0 (turn/end): seq 0 is not greater than the previous seq 0"))
			ie.Line = 3
			Expect(ie.Error()).To(HavePrefix("line 3: "))
		})

		It("passes an unknown event type through, even outside a turn (only seq is checked)", func() {
			evs := []session.Event{
				{Type: "compaction/summary", Seq: 0, Data: json.RawMessage(`{"anything":[1,2]}`), SurfaceOp: "replace"},
				{Type: session.TypeTurnStart, Seq: 1, Data: json.RawMessage(`{"turn":1}`)},
				{Type: "future/thing", Seq: 2, Data: json.RawMessage(`"not even an object"`)},
				{Type: session.TypeTurnEnd, Seq: 3, Data: json.RawMessage(`{"turn":1}`)},
			}
			Expect(session.CheckEvents(evs)).To(Succeed())
			l, err := session.Restore(session.Header{Type: "session", ID: "x"}, evs)
			Expect(err).NotTo(HaveOccurred())
			Expect(l.Events()[0].Type).To(Equal("compaction/summary"))
			Expect(session.DeriveMessages(evs)).To(BeEmpty())
			e := mustAppend(l, "future/thing", map[string]int{"n": 1})
			Expect(e.Seq).To(Equal(4))
			Expect(session.CheckEvents(append(evs, session.Event{Type: "x/y", Seq: 3})).Error()).To(ContainSubstring("not greater"))
		})

		It("replays a log written under the parallel policy (two in_progress)", func() {
			l := newLog()
			openTurn(l, 1)
			two := []session.TodoItem{{Content: "a", Status: "in_progress"}, {Content: "b", Status: "in_progress"}}
			mustAppend(l, session.TypeTodoWrite, session.TodoWrite{Todos: two})
			closeTurn(l, 1)
			evs := l.Events()
			Expect(session.CheckEvents(evs)).To(Succeed())
			r, err := session.Restore(l.Header(), evs)
			Expect(err).NotTo(HaveOccurred())
			todos, ok := r.CurrentTodos()
			Expect(ok).To(BeTrue())
			Expect(todos).To(Equal(two))
		})

		It("WithInvariants(false) stores a violating event", func() {
			l := newLog(session.WithInvariants(false))
			_, err := l.Append(session.TypeUserMessage, session.UserMessage{})
			Expect(err).NotTo(HaveOccurred())
			Expect(l.Len()).To(Equal(1))
		})
	})
})

var _ = Describe("session log subscriptions", func() {
	It("delivers each appended event to current subscribers, in subscription order", func() {
		l := newLog()
		var got []string
		unA := l.Subscribe(func(e session.Event) { got = append(got, "a:"+e.Type) })
		unB := l.Subscribe(func(e session.Event) { got = append(got, "b:"+e.Type) })
		for i := 0; i < 1000; i++ {
			l.Subscribe(func(session.Event) { got = append(got, "churn") })()
		}
		openTurn(l, 1)
		unA()
		unA()
		closeTurn(l, 1)
		unB()
		mustAppend(l, session.TypeTurnStart, session.TurnStart{Turn: 2})
		Expect(got).To(Equal([]string{
			"a:turn/start", "b:turn/start", "a:step/start", "b:step/start",
			"b:step/end", "b:turn/end",
		}))
	})
})
