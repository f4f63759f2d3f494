package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/todolist"
)

// policyAuto is the --policy of log check and log show that reads the
// policy from the log itself.
const policyAuto = "auto"

// checkLogPolicy validates a --policy value of log check / log show.
func checkLogPolicy(s string) error {
	if s == policyAuto {
		return nil
	}
	if _, err := todolist.ParsePolicy(s); err != nil {
		return fmt.Errorf("%w (or auto)", err)
	}
	return nil
}

// logPolicy is the policy a log is judged under: the one given, or under
// auto the one the todo_write description in the log's first request
// header that lists the tools says; single when the log recorded none
// (the original's committed fixtures template them as "{{tools}}"). Under
// auto the decision is written to errw with its reason.
func logPolicy(ctx context.Context, errw io.Writer, path, policy string) (todolist.Policy, error) {
	if policy != policyAuto {
		return todolist.ParsePolicy(policy)
	}
	desc, found, err := recordedTodoDescription(ctx, path)
	if err != nil {
		return "", err
	}
	p, why := todolist.Single, "no request header in the log lists a todo_write tool, so no description to read: the contract's rule (single) applies; pass --policy parallel for a log written under allowParallelInProgress"
	if found {
		p, why = todolist.DetectPolicy(desc)
	}
	fmt.Fprintf(errw, "policy: %s: %s (--policy auto: %s)\n", path, p, why)
	return p, nil
}

// recordedTodoDescription streams the log to the first request/header
// event whose header lists the tools offered the model, and returns the
// description of its todo_write tool. Both tool shapes are read: {name,
// description} and OpenAI's {type: function, function: {name,
// description}}. A log that does not read is reported by the check
// itself, not here: found is then false and err nil.
func recordedTodoDescription(ctx context.Context, path string) (desc string, found bool, err error) {
	f, err := session.OpenForRead(ctx, path)
	if err != nil {
		return "", false, err
	}
	defer f.Close()
	rd := f.Reader(session.ReadOptions{})
	if _, err := rd.Header(ctx); err != nil {
		return "", false, nil
	}
	for {
		e, err := rd.Next(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return "", false, ctx.Err()
			}
			return "", false, nil // io.EOF, or a bad line the check reports
		}
		if e.Type != "request/header" {
			continue
		}
		var d struct {
			Header struct {
				Tools json.RawMessage `json:"tools"`
			} `json:"header"`
		}
		var tools []struct {
			Name        string `json:"name"`
			Description string `json:"description"`
			Function    *struct {
				Name        string `json:"name"`
				Description string `json:"description"`
			} `json:"function"`
		}
		if json.Unmarshal(e.Data, &d) != nil || json.Unmarshal(d.Header.Tools, &tools) != nil {
			continue // no tool list here ("{{tools}}" in a committed fixture)
		}
		for _, t := range tools {
			if t.Function != nil {
				t.Name, t.Description = t.Function.Name, t.Function.Description
			}
			if t.Name == "todo_write" {
				return t.Description, true, nil
			}
		}
	}
}
