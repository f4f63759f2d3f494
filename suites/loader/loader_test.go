package loader

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/builtin"
	"github.com/todoharness/todoharness/harness/loader"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/todo"
	"github.com/todoharness/todoharness/harness/tools"
	"github.com/todoharness/todoharness/internal/testutil"
)

type owner struct{ log *session.Log }

func (o owner) Session() *session.Log { return o.log }

// ownerInTurn is a tools.Agent whose log has turn 1 step 1 open.
func ownerInTurn() owner {
	GinkgoHelper()
	l := session.New("s", "")
	_, err := l.Append(session.TypeTurnStart, session.TurnStart{Turn: 1})
	Expect(err).NotTo(HaveOccurred())
	_, err = l.Append(session.TypeStepStart, session.Step{Turn: 1, Step: 1})
	Expect(err).NotTo(HaveOccurred())
	return owner{log: l}
}

// compositionFile writes a composition file and returns its path.
func compositionFile(yaml string) string {
	GinkgoHelper()
	p := filepath.Join(GinkgoT().TempDir(), "composition.yaml")
	Expect(os.WriteFile(p, []byte(yaml), 0o644)).To(Succeed())
	return p
}

// load parses yaml as comp.yaml and loads it with catalog and services.
func load(yaml string, catalog loader.Catalog, services map[string]any) error {
	GinkgoHelper()
	c, err := loader.ParseComposition([]byte(yaml), "comp.yaml")
	if err != nil {
		return err
	}
	_, err = loader.Load(c, catalog, services)
	return err
}

const twoInProgress = `{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}`

var _ = Describe("the shipped composition", func() {
	It("registers todo_write with its schema through builtin.Compose (the binary's path)", func() {
		reg, err := builtin.Compose("")
		Expect(err).NotTo(HaveOccurred())
		Expect(reg.Names()).To(Equal([]string{"todo_write"}))
		spec := reg.Specs()[0]
		Expect(spec.Parameters).To(MatchJSON(todo.Schema()))
		Expect(spec.Description).To(Equal(todo.Description(todo.Config{})))
		b, err := json.MarshalIndent(reg.Specs(), "", "  ")
		Expect(err).NotTo(HaveOccurred())
		testutil.AssertGolden(GinkgoTB(), "loader", "shipped.tools", append(b, '\n'))
	})

	It("is the file in the repository (the embedded copy is not stale)", func() {
		onDisk, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), builtin.ShippedCompositionName))
		Expect(err).NotTo(HaveOccurred())
		Expect(builtin.ShippedComposition()).To(Equal(onDisk))
	})

	It("loads the same from its file path as embedded", func() {
		reg, err := builtin.Compose(filepath.Join(testutil.RepoRoot(), builtin.ShippedCompositionName))
		Expect(err).NotTo(HaveOccurred())
		emb, err := builtin.Compose("")
		Expect(err).NotTo(HaveOccurred())
		Expect(reg.Specs()).To(Equal(emb.Specs()))
	})

	It("gives a working, validating todo_write (single in_progress policy)", func() {
		reg, err := builtin.Compose("")
		Expect(err).NotTo(HaveOccurred())
		o := ownerInTurn()
		res := reg.Execute(context.Background(), tools.Exec{Agent: o}, "todo_write", `{"todos":[{"content":"a","status":"in_progress"}]}`)
		Expect(res.IsError).To(BeFalse(), res.Text())
		Expect(res.Text()).To(Equal("Updated todo list: 0 pending, 1 in progress, 0 completed."))
		res = reg.Execute(context.Background(), tools.Exec{Agent: o}, "todo_write", twoInProgress)
		Expect(res.Text()).To(Equal("Error: invalid todos: at most one task may be in_progress, got 2"))
		res = reg.Execute(context.Background(), tools.Exec{Agent: o}, "todo_write", `{"todos":[{"content":"a","status":"doing"}]}`)
		Expect(res.Text()).To(HavePrefix("Error: invalid arguments: at /todos/0/status: "))
	})

	It("the todo module exports name, inject [tools] and apply, and no default (postmortem 0001)", func() {
		m := todo.Module()
		Expect(m.Default).To(BeNil())
		p, err := loader.Unwrap(m)
		Expect(err).NotTo(HaveOccurred())
		Expect(p.Name).To(Equal("todo"))
		Expect(p.Inject).To(Equal([]string{"tools"}))
	})
})

var _ = Describe("parallel policy from the composition config", func() {
	It("allowParallelInProgress: true changes the accepted input and the description together", func() {
		reg, err := builtin.Compose(compositionFile("plugins:\n  - name: todo\n    config:\n      allowParallelInProgress: true\n"))
		Expect(err).NotTo(HaveOccurred())
		res := reg.Execute(context.Background(), tools.Exec{Agent: ownerInTurn()}, "todo_write", twoInProgress)
		Expect(res.IsError).To(BeFalse(), res.Text())
		Expect(res.Text()).To(Equal("Updated todo list: 0 pending, 2 in progress, 0 completed."))
		Expect(reg.Specs()[0].Description).To(Equal(todo.Description(todo.Config{AllowParallelInProgress: true})))
		Expect(reg.Specs()[0].Description).NotTo(Equal(todo.Description(todo.Config{})))
	})

	It("a plugin without config gets the default (single in_progress) policy", func() {
		reg, err := builtin.Compose(compositionFile("plugins:\n  - name: todo\n"))
		Expect(err).NotTo(HaveOccurred())
		res := reg.Execute(context.Background(), tools.Exec{Agent: ownerInTurn()}, "todo_write", twoInProgress)
		Expect(res.Text()).To(Equal("Error: invalid todos: at most one task may be in_progress, got 2"))
	})
})

var _ = Describe("failing at load, never at first use", func() {
	var applied []string

	BeforeEach(func() { applied = nil })

	// plugin returns a module that records its apply and runs body.
	plugin := func(name string, inject []string, body func(ctx *loader.Context) error) loader.Module {
		return loader.Module{Name: name, Inject: inject, Apply: func(ctx *loader.Context, _ loader.Config) error {
			applied = append(applied, name)
			if body != nil {
				return body(ctx)
			}
			return nil
		}}
	}

	It("a plugin injecting a service the host does not provide fails, naming plugin and service", func() {
		cat := builtin.Catalog()
		cat["fs-tools"] = plugin("fs-tools", []string{"tools", "fs"}, nil)
		err := load("plugins:\n  - name: todo\n  - name: fs-tools\n", cat, builtin.Services(tools.NewRegistry()))
		Expect(err).To(MatchError(`comp.yaml:3: plugin "fs-tools": injected service "fs" is not provided by the host (provided: tools)`))
		Expect(applied).To(BeEmpty(), "apply never runs with a missing service")
	})

	It("the todo plugin without a tools service fails, naming todo and tools", func() {
		err := load("plugins:\n  - name: todo\n", builtin.Catalog(), map[string]any{})
		Expect(err).To(MatchError(`comp.yaml:2: plugin "todo": injected service "tools" is not provided by the host (provided: none)`))
		var nilReg *tools.Registry
		err = load("plugins:\n  - name: todo\n", builtin.Catalog(), map[string]any{"tools": nilReg})
		Expect(err).To(MatchError(ContainSubstring(`injected service "tools" is not provided by the host`)))
	})

	It("a module with a default export and a named inject (postmortem 0001) fails, naming the dropped inject", func() {
		inner := plugin("todo", nil, nil)
		cat := loader.Catalog{"todo": {
			Name: "todo", Inject: []string{"tools"}, Apply: todo.Module().Apply, Default: &inner,
		}}
		reg := tools.NewRegistry()
		err := load("plugins:\n  - name: todo\n", cat, builtin.Services(reg))
		Expect(err).To(HaveOccurred())
		Expect(err.Error()).To(HavePrefix(`comp.yaml:2: plugin "todo": `))
		Expect(err.Error()).To(ContainSubstring("inject [tools]"))
		Expect(err.Error()).To(ContainSubstring("would drop the declared inject"))
		Expect(err.Error()).To(ContainSubstring("postmortem 0001"))
		Expect(applied).To(BeEmpty())
		Expect(reg.Names()).To(BeEmpty())
	})

	It("a module that only has a default export is unwrapped to it, inject intact", func() {
		real := todo.Module()
		cat := loader.Catalog{"todo": {Default: &real}}
		reg := tools.NewRegistry()
		Expect(load("plugins:\n  - name: todo\n", cat, builtin.Services(reg))).To(Succeed())
		Expect(reg.Names()).To(Equal([]string{"todo_write"}))
	})

	It("a plugin whose apply uses a service it did not declare fails at load", func() {
		cat := loader.Catalog{"sneaky": plugin("sneaky", []string{"tools"}, func(ctx *loader.Context) error {
			_, err := ctx.Service("fs")
			return err
		})}
		err := load("plugins:\n  - name: sneaky\n", cat, map[string]any{"tools": tools.NewRegistry(), "fs": "a filesystem"})
		Expect(err).To(MatchError(`comp.yaml:2: plugin "sneaky": apply: plugin "sneaky" uses service "fs" but does not declare it in inject (declared: tools)`))
	})

	It("... even when apply ignores the error", func() {
		cat := loader.Catalog{"sneaky": plugin("sneaky", []string{"tools"}, func(ctx *loader.Context) error {
			_, _ = ctx.Service("fs")
			return nil
		})}
		err := load("plugins:\n  - name: sneaky\n", cat, map[string]any{"tools": tools.NewRegistry(), "fs": "a filesystem"})
		Expect(err).To(MatchError(ContainSubstring(`plugin "sneaky" uses service "fs" but does not declare it in inject`)))
	})

	It("a plugin cannot defer a service lookup to first use", func() {
		var kept *loader.Context
		cat := loader.Catalog{"lazy": plugin("lazy", []string{"tools"}, func(ctx *loader.Context) error {
			kept = ctx
			return nil
		})}
		Expect(load("plugins:\n  - name: lazy\n", cat, builtin.Services(tools.NewRegistry()))).To(Succeed())
		_, err := kept.Service("tools")
		Expect(err).To(MatchError(`plugin "lazy" asks for service "tools" after load: resolve services in apply`))
	})

	It("an unknown plugin fails, naming file and line", func() {
		err := load("# tools\nplugins:\n  - name: todo\n  - name: todos\n", builtin.Catalog(), builtin.Services(tools.NewRegistry()))
		Expect(err).To(MatchError(`comp.yaml:4: plugin "todos": unknown plugin (known: todo)`))
	})

	It("an unknown config field fails, naming file and the field's line", func() {
		path := compositionFile("plugins:\n  - name: todo\n    config:\n      allowParallelInProgress: false\n      allowParallel: true\n")
		_, err := builtin.Compose(path)
		Expect(err).To(MatchError(path + `:2: plugin "todo": apply: ` + path + `:5: config: field allowParallel not found in type todo.Config`))
	})

	It("a config value of the wrong type fails, naming file and line", func() {
		path := compositionFile("plugins:\n  - name: todo\n    config:\n      allowParallelInProgress: sometimes\n")
		_, err := builtin.Compose(path)
		Expect(err).To(MatchError(ContainSubstring(path + ":4: config: cannot unmarshal !!str `sometimes` into bool")))
	})

	DescribeTable("a malformed composition file fails, naming file and line",
		func(yaml, want string) {
			_, err := builtin.Compose(compositionFile(yaml))
			Expect(err).To(HaveOccurred())
			Expect(err.Error()).To(HaveSuffix(want))
		},
		Entry("unknown top-level field", "plugin:\n  - name: todo\n", `composition.yaml:1: unknown field "plugin" (want: plugins)`),
		Entry("unknown plugin-entry field", "plugins:\n  - name: todo\n    confg: {}\n", `composition.yaml:3: unknown field "confg" in a plugin entry (want: name, config)`),
		Entry("entry without a name", "plugins:\n  - config: {}\n", `composition.yaml:2: plugins[0]: missing field "name"`),
		Entry("YAML syntax error", "plugins: [\n", `composition.yaml:1: did not find expected node content`),
		Entry("empty file", "", `composition.yaml: empty composition: want a "plugins:" list`),
		Entry("the same plugin twice", "plugins:\n  - name: todo\n  - name: todo\n", `composition.yaml:3: plugin "todo": apply: register tool "todo_write": a tool with that name is already registered`),
	)

	It("a missing composition file fails, naming it", func() {
		_, err := builtin.Compose("/nonexistent/composition.yaml")
		Expect(err).To(MatchError(ContainSubstring("/nonexistent/composition.yaml")))
	})
})
