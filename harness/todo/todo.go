package todo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"

	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/todolist"
	"github.com/todoharness/todoharness/harness/tools"
)

// ToolName is the name the model calls.
const ToolName = "todo_write"

// Config is the plugin's configuration in the composition file.
type Config struct {
	// AllowParallelInProgress lifts the at-most-one-in_progress rule. The
	// tool description changes with it, so the model is told what is accepted.
	AllowParallelInProgress bool `yaml:"allowParallelInProgress" json:"allowParallelInProgress"`
}

const schemaJSON = `{
  "type": "object",
  "properties": {
    "todos": {
      "type": "array",
      "description": "The COMPLETE task list, replacing any previous list",
      "items": {
        "type": "object",
        "properties": {
          "content": {
            "type": "string",
            "description": "What the task is, in a short imperative sentence"
          },
          "status": {
            "type": "string",
            "enum": ["pending", "in_progress", "completed"],
            "description": "pending (not started), in_progress (being worked on now) or completed (done)"
          }
        },
        "required": ["content", "status"]
      }
    }
  },
  "required": ["todos"]
}`

// compiledSchema is Schema compiled, once for the process: every agent
// start registers the tool (read only, see tools.CompiledSchema).
var compiledSchema = sync.OnceValues(func() (*tools.CompiledSchema, error) {
	return tools.CompileSchema(ToolName, Schema())
})

// Schema returns the JSON Schema of the tool's arguments, compacted.
func Schema() json.RawMessage {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(schemaJSON)); err != nil {
		panic(err) // the constant above is valid JSON; a test covers it
	}
	return json.RawMessage(b.Bytes())
}

// Description returns the tool description for the given policy.
func Description(cfg Config) string {
	active := "Keep exactly one task in_progress while work remains: at most one task may be in_progress at a time. " +
		"Mark a task completed as soon as it is done, then set the next one in_progress in the same call."
	if cfg.Policy() == todolist.Parallel {
		active = "Mark every task you are actively working on as in_progress; several tasks may be in_progress at once when they truly run in parallel. " +
			"Mark a task completed as soon as it is done."
	}
	return "Record and update your task list for the current work. " +
		"Send the COMPLETE list on every call: the list you send replaces the previous one entirely. " +
		"There are no partial updates or per-item edits; to drop a task, leave it out, and an empty list clears the plan. " +
		"Each item is {content, status}; status is one of pending, in_progress, completed. " +
		active + " " +
		"Use it for multi-step work, and keep it current as you go; skip it for a single trivial step."
}

type args struct {
	Todos []session.TodoItem `json:"todos"`
}

// Policy is the in_progress policy the configuration chooses.
func (c Config) Policy() todolist.Policy {
	if c.AllowParallelInProgress {
		return todolist.Parallel
	}
	return todolist.Single
}

// Rules are the value rules todo_write applies after its schema: the
// contract's (todolist.Validate) under the policy a composition chose.
// A deliberately broken tool (harness/breakage) keeps them and decides
// its calls with another Validator.
type Rules struct {
	Config
}

// Validator decides a todo_write call from its arguments (after the
// schema): the list the call writes, or why it is refused.
type Validator func(raw json.RawMessage) ([]session.TodoItem, error)

// NewTool returns the todo_write tool for the given policy.
func NewTool(cfg Config) tools.Tool { return Rules{Config: cfg}.Tool() }

// Tool returns the todo_write tool applying r. The tool's Config field is r,
// so a wrapper can rebuild it with another Validator.
func (r Rules) Tool() tools.Tool { return r.ToolWith(r.Accept) }

// ToolWith returns the todo_write tool of r's policy, its calls decided
// by decide.
func (r Rules) ToolWith(decide Validator) tools.Tool {
	compiled, _ := compiledSchema() // on an error Register compiles it and says it
	return tools.Tool{
		Name:        ToolName,
		Description: Description(r.Config),
		Parameters:  Schema(),
		Execute: func(ctx context.Context, exec tools.Exec, raw json.RawMessage) (tools.Result, error) {
			return execute(exec, raw, decide)
		},
		PresentCall: PresentCall,
		Config:      r,
		Compiled:    compiled,
	}
}

// Validate applies the value rules (after the schema): trimmed content must
// be non-empty and unique, and at most one task may be in_progress unless the
// policy allows parallel work. It returns the trimmed list.
func (r Rules) Validate(todos []session.TodoItem) ([]session.TodoItem, error) {
	return todolist.Validate(todos, r.Policy())
}

// Accept is r's Validator: the todos of the arguments, validated.
func (r Rules) Accept(raw json.RawMessage) ([]session.TodoItem, error) {
	var a args
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("invalid arguments: %w", err)
	}
	return r.Validate(a.Todos)
}

// execute writes the list decide accepts as a todo/write event.
func execute(exec tools.Exec, raw json.RawMessage, decide Validator) (tools.Result, error) {
	todos, err := decide(raw)
	if err != nil {
		return tools.Result{}, err
	}
	if exec.Agent == nil || exec.Agent.Session() == nil {
		return tools.Result{}, errors.New("todo_write requires an owning agent session")
	}
	if _, err := exec.Agent.Session().Append(session.TypeTodoWrite, session.TodoWrite{Todos: todos}); err != nil {
		return tools.Result{}, fmt.Errorf("todo_write: %w", err)
	}
	return tools.TextResult(Summary(todos)), nil
}

// Counts returns how many tasks are pending, in progress and completed.
func Counts(todos []session.TodoItem) (pending, inProgress, completed int) {
	for _, t := range todos {
		switch t.Status {
		case session.StatusPending:
			pending++
		case session.StatusInProgress:
			inProgress++
		case session.StatusCompleted:
			completed++
		}
	}
	return pending, inProgress, completed
}

// FormatSummary words the counts as the result text the model sees.
func FormatSummary(pending, inProgress, completed int) string {
	return fmt.Sprintf("Updated todo list: %d pending, %d in progress, %d completed.", pending, inProgress, completed)
}

// Summary is the result text the model sees: counts only, never the list.
func Summary(todos []session.TodoItem) string {
	return FormatSummary(Counts(todos))
}

// PresentCall is how UIs show a todo_write call: title "Update todo list",
// kind "other", rawInput the todos array as the model sent it.
func PresentCall(raw json.RawMessage) tools.Presentation {
	var a struct {
		Todos json.RawMessage `json:"todos"`
	}
	var input any
	if json.Unmarshal(raw, &a) == nil && a.Todos != nil {
		input = a.Todos
	}
	return tools.Presentation{Title: "Update todo list", Kind: "other", RawInput: input}
}
