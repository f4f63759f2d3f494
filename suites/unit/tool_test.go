package unit

import (
	"context"
	"encoding/json"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/todo"
	"github.com/todoharness/todoharness/harness/tools"
)

// registryWith registers the todo_write tool for cfg on a fresh registry.
func registryWith(cfg todo.Config) *tools.Registry {
	GinkgoHelper()
	reg := tools.NewRegistry()
	_, err := reg.Register(todo.NewTool(cfg))
	Expect(err).NotTo(HaveOccurred())
	return reg
}

// specJSON is the todo_write tool exactly as offered to the model.
func specJSON(reg *tools.Registry) []byte {
	GinkgoHelper()
	specs := reg.Specs()
	Expect(specs).To(HaveLen(1))
	Expect(specs[0].Name).To(Equal("todo_write"))
	b, err := json.MarshalIndent(specs[0], "", "  ")
	Expect(err).NotTo(HaveOccurred())
	return append(b, '\n')
}

var _ = Describe("todo_write through the tool registry", func() {
	var (
		reg   *tools.Registry
		agent *testAgent
		ctx   context.Context
	)

	BeforeEach(func() {
		reg = registryWith(todo.Config{})
		agent = newAgent()
		ctx = context.Background()
	})

	exec := func(arguments string) tools.Result {
		return reg.Execute(ctx, tools.Exec{Agent: agent, CallID: "call-1", Turn: 1, Step: 1}, "todo_write", arguments)
	}

	// rejected asserts an isError result with exactly "Error: <msg>" and
	// that the agent's log did not change.
	rejected := func(res tools.Result, msg string) {
		GinkgoHelper()
		Expect(res.IsError).To(BeTrue(), "result %q", res.Text())
		Expect(res.Content).To(Equal([]llm.Part{{Type: llm.PartText, Text: "Error: " + msg}}))
		Expect(agent.log.Len()).To(Equal(2), "nothing appended")
	}

	Describe("schema", func() {
		It("is offered to the model as the golden JSON (name, description, parameters)", func() {
			golden("todo_write.tool", specJSON(reg))
		})

		It("has the shape DESIGN.md states", func() {
			var p struct {
				Type       string   `json:"type"`
				Required   []string `json:"required"`
				Properties struct {
					Todos struct {
						Type        string `json:"type"`
						Description string `json:"description"`
						Items       struct {
							Type       string   `json:"type"`
							Required   []string `json:"required"`
							Properties struct {
								Content struct{ Type string } `json:"content"`
								Status  struct {
									Type string
									Enum []string
								} `json:"status"`
							} `json:"properties"`
						} `json:"items"`
					} `json:"todos"`
				} `json:"properties"`
			}
			Expect(json.Unmarshal(todo.Schema(), &p)).To(Succeed())
			Expect(p.Type).To(Equal("object"))
			Expect(p.Required).To(Equal([]string{"todos"}))
			Expect(p.Properties.Todos.Type).To(Equal("array"))
			Expect(p.Properties.Todos.Description).To(Equal("The COMPLETE task list, replacing any previous list"))
			Expect(p.Properties.Todos.Items.Type).To(Equal("object"))
			Expect(p.Properties.Todos.Items.Required).To(Equal([]string{"content", "status"}))
			Expect(p.Properties.Todos.Items.Properties.Content.Type).To(Equal("string"))
			Expect(p.Properties.Todos.Items.Properties.Status.Type).To(Equal("string"))
			Expect(p.Properties.Todos.Items.Properties.Status.Enum).To(Equal([]string{"pending", "in_progress", "completed"}))
		})

		It("describes whole-list replacement and the active-task rule", func() {
			d := todo.Description(todo.Config{})
			Expect(d).To(ContainSubstring("COMPLETE list"))
			Expect(d).To(ContainSubstring("replaces the previous one entirely"))
			Expect(d).To(ContainSubstring("at most one task may be in_progress"))
		})
	})

	Describe("argument validation by the registry (JSON Schema)", func() {
		DescribeTable("rejects schema-invalid arguments before the tool runs",
			func(arguments, msg string) { rejected(exec(arguments), msg) },
			Entry("bad status enum", `{"todos":[{"content":"a","status":"done"}]}`,
				"invalid arguments: at /todos/0/status: value must be one of 'pending', 'in_progress', 'completed'"),
			Entry("todos not an array", `{"todos":"read the code"}`,
				"invalid arguments: at /todos: got string, want array"),
			Entry("todos missing", `{}`,
				"invalid arguments: at /: missing property 'todos'"),
			Entry("empty argument string", ``,
				"invalid arguments: at /: missing property 'todos'"),
			Entry("item without status", `{"todos":[{"content":"a"}]}`,
				"invalid arguments: at /todos/0: missing property 'status'"),
			Entry("item without content", `{"todos":[{"status":"pending"}]}`,
				"invalid arguments: at /todos/0: missing property 'content'"),
			Entry("content not a string", `{"todos":[{"content":5,"status":"pending"}]}`,
				"invalid arguments: at /todos/0/content: got number, want string"),
			Entry("todos null", `{"todos":null}`,
				"invalid arguments: at /todos: got null, want array"),
			Entry("several problems, all reported", `{"todos":[{"content":"a","status":"done"},{"content":5,"status":"pending"}]}`,
				"invalid arguments: at /todos/0/status: value must be one of 'pending', 'in_progress', 'completed'; at /todos/1/content: got number, want string"),
			Entry("not JSON", `{"todos":[}`,
				"invalid arguments: not valid JSON: invalid character '}' looking for beginning of value"),
			Entry("trailing garbage", `{"todos":[]} extra`,
				"invalid arguments: not valid JSON: invalid character after top-level value"),
		)

		It("checks the schema before the owner: a non-agent caller still gets the schema error", func() {
			res := reg.Execute(ctx, tools.Exec{}, "todo_write", `{"todos":"x"}`)
			Expect(res.Text()).To(Equal("Error: invalid arguments: at /todos: got string, want array"))
		})

		It("reports an unknown tool as an error result", func() {
			rejected(reg.Execute(ctx, tools.Exec{Agent: agent}, "todo_read", `{}`), `unknown tool "todo_read"`)
		})
	})

	Describe("value validation by the tool", func() {
		DescribeTable("rejects an incoherent list with its exact message",
			func(todos []session.TodoItem, msg string) {
				rejected(exec(rawJSON(map[string]any{"todos": todos})), msg)
			},
			Entry("empty content", []session.TodoItem{{Content: "", Status: "pending"}},
				"invalid todo: `content` must be a non-empty string"),
			Entry("whitespace-only content", []session.TodoItem{{Content: "a", Status: "pending"}, {Content: " \t\n ", Status: "pending"}},
				"invalid todo: `content` must be a non-empty string"),
			Entry("duplicate content", []session.TodoItem{{Content: "read the code", Status: "pending"}, {Content: "read the code", Status: "completed"}},
				`invalid todos: duplicate content "read the code"`),
			Entry("duplicate after trimming, quoted as JSON", []session.TodoItem{{Content: `say "hi"`, Status: "pending"}, {Content: "  say \"hi\"\n", Status: "pending"}},
				`invalid todos: duplicate content "say \"hi\""`),
			Entry("two in_progress", []session.TodoItem{{Content: "a", Status: "in_progress"}, {Content: "b", Status: "in_progress"}},
				"invalid todos: at most one task may be in_progress, got 2"),
			Entry("three in_progress", []session.TodoItem{{Content: "a", Status: "in_progress"}, {Content: "b", Status: "in_progress"}, {Content: "c", Status: "in_progress"}},
				"invalid todos: at most one task may be in_progress, got 3"),
			Entry("content checks come before the in_progress count", []session.TodoItem{{Content: "a", Status: "in_progress"}, {Content: "b", Status: "in_progress"}, {Content: "", Status: "pending"}},
				"invalid todo: `content` must be a non-empty string"),
		)

		It("checks values before the owner", func() {
			res := reg.Execute(ctx, tools.Exec{}, "todo_write", `{"todos":[{"content":" ","status":"pending"}]}`)
			Expect(res.Text()).To(Equal("Error: invalid todo: `content` must be a non-empty string"))
		})
	})

	Describe("parallel policy (allowParallelInProgress: true)", func() {
		It("accepts two in_progress tasks and says so in its description", func() {
			par := registryWith(todo.Config{AllowParallelInProgress: true})
			res := par.Execute(ctx, tools.Exec{Agent: agent}, "todo_write",
				`{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}`)
			Expect(res.IsError).To(BeFalse(), res.Text())
			Expect(res.Text()).To(Equal("Updated todo list: 0 pending, 2 in progress, 0 completed."))
			Expect(todoWrites(agent.log)).To(HaveLen(1))

			def, parallel := todo.Description(todo.Config{}), par.Specs()[0].Description
			Expect(parallel).NotTo(Equal(def))
			Expect(parallel).NotTo(ContainSubstring("at most one task may be in_progress"))
			Expect(parallel).To(ContainSubstring("several tasks may be in_progress at once"))
			golden("todo_write.parallel.tool", specJSON(par))
		})

		It("still enforces the content rules", func() {
			par := registryWith(todo.Config{AllowParallelInProgress: true})
			res := par.Execute(ctx, tools.Exec{Agent: agent}, "todo_write",
				`{"todos":[{"content":"a","status":"in_progress"},{"content":"a","status":"in_progress"}]}`)
			Expect(res.Text()).To(Equal(`Error: invalid todos: duplicate content "a"`))
		})
	})

	Describe("owner", func() {
		It("rejects a non-agent caller with the exact message and appends nothing", func() {
			before := agent.log.Len()
			res := reg.Execute(ctx, tools.Exec{CallID: "c"}, "todo_write", `{"todos":[{"content":"a","status":"pending"}]}`)
			Expect(res.IsError).To(BeTrue())
			Expect(res.Content).To(Equal([]llm.Part{{Type: llm.PartText, Text: "Error: todo_write requires an owning agent session"}}))
			Expect(agent.log.Len()).To(Equal(before))
		})

		It("rejects an agent without a session", func() {
			res := reg.Execute(ctx, tools.Exec{Agent: &testAgent{}}, "todo_write", `{"todos":[]}`)
			Expect(res.Text()).To(Equal("Error: todo_write requires an owning agent session"))
		})

		It("reports a log that refuses the event as an error result", func() {
			closed := newLog()
			res := reg.Execute(ctx, tools.Exec{Agent: &testAgent{log: closed}}, "todo_write", `{"todos":[]}`)
			Expect(res.IsError).To(BeTrue())
			Expect(res.Text()).To(HavePrefix("Error: todo_write: "))
			Expect(res.Text()).To(ContainSubstring("event outside an open turn"))
			Expect(closed.Len()).To(Equal(0))
		})
	})

	Describe("success", func() {
		It("appends exactly one todo/write to the caller's log and returns the counts", func() {
			res := exec(`{"todos":[{"content":"read the code","status":"completed"},{"content":"write the fix","status":"in_progress"},{"content":"run the tests","status":"pending"},{"content":"ship","status":"pending"}]}`)
			Expect(res.IsError).To(BeFalse())
			Expect(res.Content).To(Equal([]llm.Part{{Type: llm.PartText, Text: "Updated todo list: 2 pending, 1 in progress, 1 completed."}}))
			evs := agent.log.Events()
			Expect(evs).To(HaveLen(3))
			Expect(evs[2].Type).To(Equal(session.TypeTodoWrite))
			Expect(evs[2].SurfaceOp).To(BeEmpty())
			Expect(string(evs[2].Data)).To(Equal(`{"todos":[{"content":"read the code","status":"completed"},{"content":"write the fix","status":"in_progress"},{"content":"run the tests","status":"pending"},{"content":"ship","status":"pending"}]}`))
		})

		It("stores trimmed content", func() {
			res := exec(`{"todos":[{"content":"  read the code \n","status":"in_progress"},{"content":"\twrite the fix","status":"pending"}]}`)
			Expect(res.IsError).To(BeFalse(), res.Text())
			Expect(todoWrites(agent.log)).To(Equal([]session.TodoWrite{{Todos: []session.TodoItem{
				{Content: "read the code", Status: "in_progress"}, {Content: "write the fix", Status: "pending"},
			}}}))
		})

		It("accepts an empty list, stores it as [] and counts zero", func() {
			res := exec(`{"todos":[]}`)
			Expect(res.IsError).To(BeFalse(), res.Text())
			Expect(res.Text()).To(Equal("Updated todo list: 0 pending, 0 in progress, 0 completed."))
			evs := agent.log.Events()
			Expect(evs).To(HaveLen(3))
			Expect(string(evs[2].Data)).To(Equal(`{"todos":[]}`))
			todos, ok := agent.log.CurrentTodos()
			Expect(ok).To(BeTrue())
			Expect(todos).To(BeEmpty())
		})

		It("replaces the whole list on the next call (last write wins)", func() {
			Expect(exec(`{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"pending"}]}`).IsError).To(BeFalse())
			Expect(exec(`{"todos":[{"content":"b","status":"in_progress"}]}`).IsError).To(BeFalse())
			Expect(todoWrites(agent.log)).To(HaveLen(2))
			todos, _ := agent.log.CurrentTodos()
			Expect(todos).To(Equal([]session.TodoItem{{Content: "b", Status: "in_progress"}}))
			Expect(agent.log.DeriveMessages()).To(BeEmpty(), "todo/write never reaches the model history")
		})

		It("ignores unknown fields the schema allows", func() {
			res := exec(`{"todos":[{"content":"a","status":"pending","priority":"high"}],"extra":1}`)
			Expect(res.IsError).To(BeFalse(), res.Text())
			Expect(string(agent.log.Events()[2].Data)).To(Equal(`{"todos":[{"content":"a","status":"pending"}]}`))
		})
	})

	Describe("presentCall", func() {
		It("is title \"Update todo list\", kind other, rawInput the todos array", func() {
			args := `{"todos":[{"content":" a ","status":"in_progress"},{"content":"b","status":"pending"}]}`
			p := reg.PresentCall("todo_write", args)
			Expect(p.Title).To(Equal("Update todo list"))
			Expect(p.Kind).To(Equal("other"))
			b, err := json.Marshal(p)
			Expect(err).NotTo(HaveOccurred())
			Expect(string(b)).To(MatchJSON(`{"title":"Update todo list","kind":"other","rawInput":[{"content":" a ","status":"in_progress"},{"content":"b","status":"pending"}]}`))
		})

		It("presents an empty list as []", func() {
			b, err := json.Marshal(reg.PresentCall("todo_write", `{"todos":[]}`))
			Expect(err).NotTo(HaveOccurred())
			Expect(string(b)).To(MatchJSON(`{"title":"Update todo list","kind":"other","rawInput":[]}`))
		})

		It("still has a title and kind for unparsable arguments", func() {
			p := reg.PresentCall("todo_write", `{"todos":[`)
			Expect(p.Title).To(Equal("Update todo list"))
			Expect(p.Kind).To(Equal("other"))
		})
	})

	Describe("registry", func() {
		It("refuses a second tool with the same name", func() {
			_, err := reg.Register(todo.NewTool(todo.Config{}))
			Expect(err).To(MatchError(`register tool "todo_write": a tool with that name is already registered`))
		})

		It("turns a panicking tool into an error result", func() {
			_, err := reg.Register(tools.Tool{
				Name: "boom", Parameters: json.RawMessage(`{"type":"object"}`),
				Execute: func(context.Context, tools.Exec, json.RawMessage) (tools.Result, error) { panic("kaboom") },
			})
			Expect(err).NotTo(HaveOccurred())
			res := reg.Execute(ctx, tools.Exec{Agent: agent}, "boom", `{}`)
			Expect(res.IsError).To(BeTrue())
			Expect(res.Text()).To(And(HavePrefix("Error: "), ContainSubstring("kaboom")))
		})

		It("unregisters", func() {
			other := tools.NewRegistry()
			un, err := other.Register(todo.NewTool(todo.Config{}))
			Expect(err).NotTo(HaveOccurred())
			un()
			Expect(other.Names()).To(BeEmpty())
			Expect(strings.Join(reg.Names(), ",")).To(Equal("todo_write"))
		})
	})
})
