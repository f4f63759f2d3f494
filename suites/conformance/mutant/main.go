// Package mutant is a test agent for the tier:conformance suite: the
// reference harness (harness/acp over the shipped tools and the
// OpenAI-compatible client) with one deliberate mutation of its todo tool,
// chosen by $TODOHARNESS_MUTANT. The ACP bridge's own faults
// ($TODOHARNESS_FAULT) break the bridge; these break the tool itself, so
// the suite can prove that every MUST check of the catalogue can fail,
// including the ones about the tool's name, schema and validation rules.
//
//	mutant --model-url URL --sessions DIR [--wire openai|responses|anthropic|gemini]
//
// It has no binary of its own: the suite's test binary runs Main when
// $TODOHARNESS_TEST_PROGRAM is "mutant" (internal/testutil/selfexec).
//
// --wire picks the model API (default OpenAI chat completions through the
// harness's client; responses, anthropic and gemini use the small clients
// of wire.go, given the mock's URL with or without /v1).
//
// With $TODOHARNESS_SIDE_REQUEST set, its first model request is preceded
// by a side request offering no tools (as opencode's title request).
//
// Mutations:
//
//	none          no mutation: the reference tool (to run the reference
//	              behaviour over another --wire)
//	rename-tool   the todo tool is offered as "todo_list"
//	loose-schema  the schema requires nothing
//	extra-status  the status enum also allows "cancelled"
//	accept-empty  no rule against empty (or blank) content
//	accept-blank  content that is only whitespace is accepted
//	any-status    no status enum, any status is written
//	string-list   todos may be a string (written as one pending task)
//	as-opencode, as-codex, as-gemini, as-claude
//	              not a defect: the todo tool speaks another agent's dialect
//	              (todowrite, update_plan {plan: [{step, status}]},
//	              write_todos {todos: [{description, status}]}, TodoWrite
//	              {todos: [{content, status, activeForm}]}) and is otherwise
//	              the reference tool, so dialect detection and translation
//	              can be tested end to end
package mutant

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	breakages "github.com/todoharness/todoharness/conformance/breakage"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/harness/acp"
	"github.com/todoharness/todoharness/harness/breakage"
	"github.com/todoharness/todoharness/harness/builtin"
	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/llm/openaichat"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/todo"
	"github.com/todoharness/todoharness/harness/tools"
)

// Env names the mutation.
const Env = "TODOHARNESS_MUTANT"

// KeyEnv, when set, is the API key the mutant sends, in its wire's own
// credential carriers: OpenAI chat and Responses as Authorization: Bearer,
// Anthropic as x-api-key, Gemini as x-goog-api-key and ?key=, and every
// non-OpenAI wire also as a cookie (for the recording specs, which check
// that no carrier reaches a cassette).
const KeyEnv = "TODOHARNESS_MUTANT_KEY"

// mutations lists the known mutations: none, the tool-layer breakages of
// the table (conformance/breakage), and the dialects.
func mutations() []string {
	out := append([]string{"none"}, breakages.Names(breakages.Tool)...)
	return append(out, "as-opencode", "as-codex", "as-gemini", "as-claude")
}

// Main runs the mutant agent on the process's stdio with args (the command
// line after the program name) and returns its exit status.
func Main(args []string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return InProcess(ctx, driver.ProcIO{Args: append([]string{"mutant"}, args...), Env: os.Environ(),
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr})
}

// InProcess runs the mutant agent as conformance's in-process agent
// (driver.Target's InProcess): p.Args[1:] are its command line, and
// p's environment, working directory and stdio stand in for the process's.
func InProcess(ctx context.Context, p driver.ProcIO) int {
	if err := run(ctx, p); err != nil {
		fmt.Fprintln(p.Stderr, "mutant:", err)
		return 2
	}
	return 0
}

func run(ctx context.Context, p driver.ProcIO) error {
	var args []string
	if len(p.Args) > 1 {
		args = p.Args[1:]
	}
	fl := flag.NewFlagSet("mutant", flag.ContinueOnError)
	fl.SetOutput(p.Stderr)
	modelURL := fl.String("model-url", "", "OpenAI-compatible base URL")
	sessions := fl.String("sessions", ".sessions", "sessions directory")
	wire := fl.String("wire", "openai", "model API: openai, responses, anthropic or gemini")
	if err := fl.Parse(args); err != nil {
		return err
	}
	mut := p.Getenv(Env)
	known := false
	for _, m := range mutations() {
		known = known || m == mut
	}
	if !known {
		return fmt.Errorf("$%s=%q: want one of %s", Env, mut, strings.Join(mutations(), ", "))
	}
	reg, err := builtin.Compose("")
	if err != nil {
		return err
	}
	reg, err = mutate(reg, mut)
	if err != nil {
		return err
	}
	key := p.Getenv(KeyEnv)
	var client llm.Model
	if *wire == "openai" {
		apiKey := key
		if apiKey == "" {
			apiKey = "mock"
		}
		client, err = openaichat.NewClient(openaichat.ClientConfig{BaseURL: *modelURL, APIKey: apiKey, Model: "mock"})
	} else {
		client, err = newWireModel(*wire, *modelURL, key)
	}
	if err != nil {
		return err
	}
	if p.Getenv(SideEnv) != "" {
		client = &sideFirst{Model: client}
	}
	dir := *sessions
	if !filepath.IsAbs(dir) && p.Dir != "" {
		dir = filepath.Join(p.Dir, dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	logger := slog.New(slog.NewTextHandler(p.Stderr, nil))
	if mut != "none" {
		logger.Warn("mutant agent: broken on purpose", "mutation", mut)
	}
	b, err := acp.New(acp.Config{Sessions: session.Dir{Path: dir}, Model: client, ModelName: "mock", Tools: reg, Logger: logger})
	if err != nil {
		return err
	}
	return b.Serve(ctx, p.Stdin, p.Stdout)
}

// mutate returns a copy of reg whose todo tool carries the mutation.
func mutate(reg *tools.Registry, mut string) (*tools.Registry, error) {
	out, err := reg.With(todo.ToolName, func(t tools.Tool) (tools.Tool, error) { return mutateTodo(t, mut) })
	if err != nil {
		return nil, fmt.Errorf("mutant: %w", err)
	}
	return out, nil
}

func mutateTodo(t tools.Tool, mut string) (tools.Tool, error) {
	if mut == "none" {
		return t, nil
	}
	if d, ok := strings.CutPrefix(mut, "as-"); ok {
		dialect, err := driver.DialectByName(d)
		if err != nil {
			return t, err
		}
		return asDialect(t, dialect), nil
	}
	var schema map[string]any
	_ = json.Unmarshal(t.Parameters, &schema)
	props := schema["properties"].(map[string]any)
	list := props["todos"].(map[string]any)
	item := list["items"].(map[string]any)
	status := item["properties"].(map[string]any)["status"].(map[string]any)
	switch mut {
	case "rename-tool":
		t.Name = "todo_list"
	case "loose-schema":
		delete(schema, "required")
		delete(item, "required")
	case "extra-status":
		status["enum"] = []any{"pending", "in_progress", "completed", "cancelled"}
	case "any-status":
		delete(status, "enum")
	case "string-list":
		delete(list, "type")
	}
	t.Parameters, _ = json.Marshal(schema)
	switch mut {
	case "rename-tool", "loose-schema", "extra-status", "any-status":
		return t, nil
	case breakage.AcceptEmpty, breakage.AcceptBlank, breakage.StringList:
		// The relaxed rules are the tool's own (todo.Rules), one lifted.
		return breakage.RelaxTodo(t, mut)
	default:
		return t, fmt.Errorf("mutation %q is in the registry but not implemented here", mut)
	}
}

// asDialect offers the reference todo tool under another agent's name and
// argument shape, translating the arguments back before executing it.
func asDialect(t tools.Tool, d driver.Dialect) tools.Tool {
	itemProps := map[string]any{
		d.ContentField: map[string]any{"type": "string"},
		d.StatusField:  map[string]any{"type": "string", "enum": []any{"pending", "in_progress", "completed"}},
	}
	required := []any{d.ContentField, d.StatusField}
	for _, f := range d.Extra {
		itemProps[f] = map[string]any{"type": "string"}
	}
	schema := map[string]any{
		"type": "object",
		"properties": map[string]any{d.ListField: map[string]any{
			"type": "array", "items": map[string]any{"type": "object", "properties": itemProps, "required": required},
		}},
		"required": []any{d.ListField},
	}
	canonical := func(raw json.RawMessage) json.RawMessage {
		var a map[string]any
		if json.Unmarshal(raw, &a) != nil {
			return raw
		}
		list, ok := a[d.ListField].([]any)
		if !ok {
			return raw
		}
		todos := make([]any, 0, len(list))
		for _, it := range list {
			m, _ := it.(map[string]any)
			todos = append(todos, map[string]any{"content": m[d.ContentField], "status": m[d.StatusField]})
		}
		b, _ := json.Marshal(map[string]any{"todos": todos})
		return b
	}
	inner, present := t.Execute, t.PresentCall
	t.Name = d.Tool
	t.Parameters, _ = json.Marshal(schema)
	t.Execute = func(ctx context.Context, ex tools.Exec, raw json.RawMessage) (tools.Result, error) {
		return inner(ctx, ex, canonical(raw))
	}
	t.PresentCall = func(raw json.RawMessage) tools.Presentation { return present(canonical(raw)) }
	return t
}
