package todo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/todoharness/todoharness/harness/session"
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
	if cfg.AllowParallelInProgress {
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

// Rules are the value rules todo_write applies after its schema. The zero
// value is the contract: trimmed content non-empty and unique, at most one
// task in_progress. Config is the policy a composition may choose; every
// other field relaxes one rule of the contract and exists only to build the
// broken agents the conformance suite must catch (the bridge's
// accept-duplicates fault, the mutant test agent), so that no broken agent
// carries a copy of the rules.
type Rules struct {
	Config
	// AllowDuplicates accepts a list with duplicate (trimmed) content and
	// writes all of it; the other rules judge the first occurrences.
	AllowDuplicates bool
	// AllowEmptyContent accepts empty and whitespace-only content.
	AllowEmptyContent bool
	// AllowBlankContent accepts whitespace-only content (still not "").
	AllowBlankContent bool
	// AllowStringList accepts a string for todos, written as one pending
	// task (the schema must allow it too).
	AllowStringList bool
}

// NewTool returns the todo_write tool for the given policy.
func NewTool(cfg Config) tools.Tool { return Rules{Config: cfg}.Tool() }

// Tool returns the todo_write tool applying r. The tool's Config field is r,
// so a wrapper can rebuild it with one rule changed.
func (r Rules) Tool() tools.Tool {
	return tools.Tool{
		Name:        ToolName,
		Description: Description(r.Config),
		Parameters:  Schema(),
		Execute: func(ctx context.Context, exec tools.Exec, raw json.RawMessage) (tools.Result, error) {
			return r.execute(exec, raw)
		},
		PresentCall: PresentCall,
		Config:      r,
	}
}

// Validate applies the value rules (after the schema): trimmed content must
// be non-empty and unique, and at most one task may be in_progress unless the
// policy allows parallel work. It returns the trimmed list.
func (r Rules) Validate(todos []session.TodoItem) ([]session.TodoItem, error) {
	out := make([]session.TodoItem, 0, len(todos))
	seen := make(map[string]bool, len(todos))
	inProgress := 0
	for _, t := range todos {
		c := strings.TrimSpace(t.Content)
		if c == "" && !r.AllowEmptyContent && (t.Content == "" || !r.AllowBlankContent) {
			return nil, errors.New("invalid todo: `content` must be a non-empty string")
		}
		item := session.TodoItem{Content: c, Status: t.Status}
		if seen[c] {
			if !r.AllowDuplicates {
				q, _ := json.Marshal(c)
				return nil, fmt.Errorf("invalid todos: duplicate content %s", q)
			}
			out = append(out, item)
			continue
		}
		seen[c] = true
		if t.Status == session.StatusInProgress {
			inProgress++
		}
		out = append(out, item)
	}
	if inProgress > 1 && !r.AllowParallelInProgress {
		return nil, fmt.Errorf("invalid todos: at most one task may be in_progress, got %d", inProgress)
	}
	return out, nil
}

// parse reads the todos of the arguments.
func (r Rules) parse(raw json.RawMessage) ([]session.TodoItem, error) {
	if r.AllowStringList {
		var a struct {
			Todos json.RawMessage `json:"todos"`
		}
		var one string
		if json.Unmarshal(raw, &a) == nil && json.Unmarshal(a.Todos, &one) == nil {
			return []session.TodoItem{{Content: one, Status: session.StatusPending}}, nil
		}
	}
	var a args
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("invalid arguments: %w", err)
	}
	return a.Todos, nil
}

func (r Rules) execute(exec tools.Exec, raw json.RawMessage) (tools.Result, error) {
	items, err := r.parse(raw)
	if err != nil {
		return tools.Result{}, err
	}
	todos, err := r.Validate(items)
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
