package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
)

// Agent is the owning agent of a tool call: the one whose session the call
// belongs to.
type Agent interface {
	Session() *session.Log
}

// Exec is the context a tool runs in. Agent is nil for a caller that is not
// an agent (a tool invoked from outside any agent session).
type Exec struct {
	Agent  Agent
	CallID string
	Turn   int
	Step   int
}

// Result is what a tool returns to the model.
type Result struct {
	Content []llm.Part `json:"content"`
	IsError bool       `json:"isError"`
}

// Text returns the concatenated text of the result.
func (r Result) Text() string { return llm.Message{Content: r.Content}.Text() }

// TextResult is a successful result with one text block.
func TextResult(s string) Result {
	return Result{Content: []llm.Part{{Type: llm.PartText, Text: s}}}
}

// ErrorResult is a failed result: one text block "Error: <msg>".
func ErrorResult(msg string) Result {
	return Result{Content: []llm.Part{{Type: llm.PartText, Text: "Error: " + msg}}, IsError: true}
}

// Presentation is how a UI shows a tool call (ACP tool_call title/kind/rawInput).
type Presentation struct {
	Title    string `json:"title"`
	Kind     string `json:"kind"`
	RawInput any    `json:"rawInput,omitempty"`
}

// Tool is one registered tool. Execute receives arguments that already passed
// schema validation; an error it returns becomes an isError result.
type Tool struct {
	Name        string
	Description string
	Parameters  json.RawMessage
	Execute     func(ctx context.Context, exec Exec, args json.RawMessage) (Result, error)
	PresentCall func(args json.RawMessage) Presentation
	// Config is what the tool was built from, for code that rebuilds it
	// with one change (todo_write: its todo.Rules); nil when the tool does
	// not expose it.
	Config any
	// Compiled, when it is Parameters compiled for Name (CompileSchema),
	// spares Register compiling them again; any other is ignored.
	Compiled *CompiledSchema
}

// CompiledSchema is a tool's parameter schema compiled once, for a tool
// built many times with the same one (todo_write, by every agent start).
// It is read only: one serves any number of registries at once.
type CompiledSchema struct {
	name   string
	params string
	schema *jsonschema.Schema
}

// CompileSchema compiles the parameter schema of the tool name, as Register
// does (the same errors).
func CompileSchema(name string, params json.RawMessage) (*CompiledSchema, error) {
	sch, err := compileSchema(name, params)
	if err != nil {
		return nil, err
	}
	return &CompiledSchema{name: name, params: string(params), schema: sch}, nil
}

// schemaOf is t's compiled parameter schema: t.Compiled's when it was
// compiled from t's name and parameters, else compiled now.
func schemaOf(t Tool) (*jsonschema.Schema, error) {
	if c := t.Compiled; c != nil && c.name == t.Name && c.params == string(t.Parameters) {
		return c.schema, nil
	}
	return compileSchema(t.Name, t.Parameters)
}

type entry struct {
	tool   Tool
	schema *jsonschema.Schema
}

// Registry holds the tools offered to the model. It is safe for concurrent use.
type Registry struct {
	mu    sync.RWMutex
	tools map[string]*entry
	order []string
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{tools: map[string]*entry{}} }

// Register adds t after compiling its parameter schema. Registering a name
// twice is an error. The returned function removes the tool again.
func (r *Registry) Register(t Tool) (unregister func(), err error) {
	if t.Name == "" {
		return nil, errors.New("register tool: empty name")
	}
	if t.Execute == nil {
		return nil, fmt.Errorf("register tool %q: no Execute", t.Name)
	}
	sch, err := schemaOf(t)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[t.Name]; dup {
		return nil, fmt.Errorf("register tool %q: a tool with that name is already registered", t.Name)
	}
	e := &entry{tool: t, schema: sch}
	r.tools[t.Name] = e
	r.order = append(r.order, t.Name)
	return func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		if r.tools[t.Name] != e {
			return
		}
		delete(r.tools, t.Name)
		for i, n := range r.order {
			if n == t.Name {
				r.order = append(r.order[:i], r.order[i+1:]...)
				break
			}
		}
	}, nil
}

func compileSchema(name string, params json.RawMessage) (*jsonschema.Schema, error) {
	if len(params) == 0 {
		return nil, fmt.Errorf("register tool %q: no parameter schema", name)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(params))
	if err != nil {
		return nil, fmt.Errorf("register tool %q: parameter schema is not JSON: %w", name, err)
	}
	c := jsonschema.NewCompiler()
	url := "tool:///" + name + ".json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("register tool %q: %w", name, err)
	}
	sch, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("register tool %q: invalid parameter schema: %w", name, err)
	}
	return sch, nil
}

// With returns a new registry holding r's tools in order, the one named
// name replaced by what change makes of it (which may rename it). It is an
// error when r has no tool name.
func (r *Registry) With(name string, change func(Tool) (Tool, error)) (*Registry, error) {
	if _, ok := r.Get(name); !ok {
		return nil, fmt.Errorf("tools: no tool %q to change", name)
	}
	out := NewRegistry()
	for _, n := range r.Names() {
		t, ok := r.Get(n)
		if !ok {
			continue
		}
		if n == name {
			var err error
			if t, err = change(t); err != nil {
				return nil, fmt.Errorf("tools: change %s: %w", name, err)
			}
		}
		if _, err := out.Register(t); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Get returns the tool registered as name.
func (r *Registry) Get(name string) (Tool, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.tools[name]
	if !ok {
		return Tool{}, false
	}
	return e.tool, true
}

// Names returns the registered tool names in registration order.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return append([]string(nil), r.order...)
}

// Specs returns the tools as offered to the model, in registration order.
func (r *Registry) Specs() []llm.ToolSpec {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]llm.ToolSpec, 0, len(r.order))
	for _, n := range r.order {
		t := r.tools[n].tool
		out = append(out, llm.ToolSpec{Name: t.Name, Description: t.Description, Parameters: append(json.RawMessage(nil), t.Parameters...)})
	}
	return out
}

// Execute runs tool name with the model's raw argument string. It never
// returns a Go error: an unknown tool, unparsable or schema-invalid
// arguments, and a failing (or panicking) tool all become isError results.
func (r *Registry) Execute(ctx context.Context, exec Exec, name, arguments string) (res Result) {
	r.mu.RLock()
	e, ok := r.tools[name]
	r.mu.RUnlock()
	if !ok {
		return ErrorResult(fmt.Sprintf("unknown tool %q", name))
	}
	raw := strings.TrimSpace(arguments)
	if raw == "" {
		raw = "{}"
	}
	inst, err := jsonschema.UnmarshalJSON(strings.NewReader(raw))
	if err != nil {
		return ErrorResult("invalid arguments: not valid JSON: " + err.Error())
	}
	if err := e.schema.Validate(inst); err != nil {
		return ErrorResult("invalid arguments: " + describeValidation(err))
	}
	defer func() {
		if p := recover(); p != nil {
			res = ErrorResult(fmt.Sprintf("tool %q failed: panic: %v", name, p))
		}
	}()
	res, err = e.tool.Execute(ctx, exec, json.RawMessage(raw))
	if err != nil {
		return ErrorResult(err.Error())
	}
	return res
}

// PresentCall returns how a UI shows a call of tool name. Tools without a
// PresentCall get their name as title, kind "other" and the parsed arguments.
func (r *Registry) PresentCall(name, arguments string) Presentation {
	t, ok := r.Get(name)
	if ok && t.PresentCall != nil {
		return t.PresentCall(json.RawMessage(arguments))
	}
	var v any
	if json.Unmarshal([]byte(arguments), &v) != nil {
		v = arguments
	}
	return Presentation{Title: name, Kind: "other", RawInput: v}
}

// describeValidation flattens a schema validation error into one line:
// "at /todos/0/status: value must be one of ...; at /todos/1: ...".
func describeValidation(err error) string {
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err.Error()
	}
	printer := message.NewPrinter(language.English)
	var leaves []string
	var walk func(v *jsonschema.ValidationError)
	walk = func(v *jsonschema.ValidationError) {
		if len(v.Causes) == 0 {
			loc := "/" + strings.Join(v.InstanceLocation, "/")
			leaves = append(leaves, fmt.Sprintf("at %s: %s", loc, v.ErrorKind.LocalizedString(printer)))
			return
		}
		for _, c := range v.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.Strings(leaves)
	return strings.Join(leaves, "; ")
}
