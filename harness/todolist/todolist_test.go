package todolist_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/todoharness/todoharness/harness/todolist"
)

func TestParsePolicy(t *testing.T) {
	for _, s := range []string{"single", "parallel"} {
		if p, err := todolist.ParsePolicy(s); err != nil || string(p) != s {
			t.Errorf("%s: %v %v", s, p, err)
		}
	}
	if _, err := todolist.ParsePolicy("auto"); err == nil || err.Error() != `unknown policy "auto": want single or parallel` {
		t.Errorf("auto: %v", err)
	}
}

// The tool's rules and the log checker's judge the same lists; only their
// words differ (and the checker does not trim what was recorded).
func TestValidateAndCheckWrite(t *testing.T) {
	for _, tc := range []struct {
		name     string
		data     string
		policy   todolist.Policy
		toolErr  string
		findings []string
	}{
		{"ok", `{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"pending"}]}`, todolist.Single, "", nil},
		{"empty", `{"todos":[{"content":" ","status":"pending"}]}`, todolist.Single, "invalid todo: `content` must be a non-empty string", []string{"todos[0].content is empty once trimmed [TODO-ITEM]"}},
		{"duplicate", `{"todos":[{"content":"a","status":"pending"},{"content":"a","status":"pending"}]}`, todolist.Single, `invalid todos: duplicate content "a"`, []string{`todos[1].content "a" repeats todos[0] [TODO-UNIQUE]`}},
		{"two active", `{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}`, todolist.Single, "invalid todos: at most one task may be in_progress, got 2", []string{"2 todos are in_progress: invalid under the single policy (at most one); the parallel policy allows it (--policy parallel) [TODO-ACTIVE]"}},
		{"two active, parallel", `{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}`, todolist.Parallel, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, f := range todolist.CheckWrite([]byte(tc.data), tc.policy) {
				got = append(got, f.String())
			}
			if !reflect.DeepEqual(got, tc.findings) {
				t.Errorf("findings %q, want %q", got, tc.findings)
			}
			var a struct{ Todos []todolist.Item }
			if err := json.Unmarshal([]byte(tc.data), &a); err != nil {
				t.Fatal(err)
			}
			_, err := todolist.Validate(a.Todos, tc.policy)
			if msg := fmt.Sprint(err); (err != nil || tc.toolErr != "") && msg != tc.toolErr {
				t.Errorf("tool error %q, want %q", msg, tc.toolErr)
			}
		})
	}
	items := []todolist.Item{{Content: " a ", Status: todolist.StatusInProgress}}
	got, err := todolist.Validate(items, todolist.Single)
	if err != nil || got[0].Content != "a" {
		t.Errorf("Validate trims: %v %v", got, err)
	}
	if got, _ := todolist.Validate(nil, todolist.Single); got == nil {
		t.Error("an empty list is [], not null")
	}
}
