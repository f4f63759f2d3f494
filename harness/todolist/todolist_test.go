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
		// Trimmed as JavaScript's trim(): U+FEFF alone is blank, U+0085 is
		// content, and "a\u0085" is not "a".
		{"BOM only", `{"todos":[{"content":"\ufeff","status":"pending"}]}`, todolist.Single, "invalid todo: `content` must be a non-empty string", []string{"todos[0].content is empty once trimmed [TODO-ITEM]"}},
		{"NEL only", `{"todos":[{"content":"\u0085","status":"pending"}]}`, todolist.Single, "", nil},
		{"NEL after", `{"todos":[{"content":"a\u0085","status":"pending"},{"content":"a","status":"pending"}]}`, todolist.Single, "", nil},
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
	items = []todolist.Item{{Content: "튂\ufeff", Status: todolist.StatusPending}, {Content: "\ta\u0085 ", Status: todolist.StatusPending}}
	if got, err := todolist.Validate(items, todolist.Single); err != nil || got[0].Content != "튂" || got[1].Content != "a\u0085" {
		t.Errorf("Validate trims as JavaScript does: %q %v", got, err)
	}
	if got, _ := todolist.Validate(nil, todolist.Single); got == nil {
		t.Error("an empty list is [], not null")
	}
}

// The contract trims as JavaScript's String.prototype.trim() does: U+FEFF
// is trimmed, U+0085 is not (Go's strings.TrimSpace does the opposite).
func TestTrimIsJavaScripts(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{" a\t", "a"},
		{"\u00a0\u3000a\u2028\u2029", "a"},
		{"튂\ufeff", "튂"},
		{"\ufeffa\ufeff", "a"},
		{"a\u0085", "a\u0085"},
		{"\u0085", "\u0085"},
		{"\u001fa\u001c", "\u001fa\u001c"},
		{"\u180ea", "\u180ea"},
		{"\u200ba", "\u200ba"}, // ZERO WIDTH SPACE is no space to any of them
	} {
		if got := todolist.Trim(tc.in); got != tc.want {
			t.Errorf("Trim(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	// Every code point node -e 'String.fromCodePoint(c).trim()' removes
	// (Node.js 20), and no other.
	js := []rune{0x9, 0xa, 0xb, 0xc, 0xd, 0x20, 0xa0, 0x1680, 0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a, 0x2028, 0x2029, 0x202f, 0x205f, 0x3000, 0xfeff}
	var got []rune
	for r := rune(0); r <= 0x10FFFF; r++ {
		if todolist.IsSpace(r) {
			got = append(got, r)
		}
	}
	if !reflect.DeepEqual(got, js) {
		t.Errorf("IsSpace holds for %U, want %U", got, js)
	}
	if !todolist.Blank("\ufeff \t") || todolist.Blank("\u0085") {
		t.Error("Blank: U+FEFF is blank, U+0085 is not")
	}
}

// The characters the common trim functions disagree on, and an agent's
// content that differs from the contract's only in them.
func TestEdgeDiff(t *testing.T) {
	var edges []rune
	for _, e := range todolist.EdgeSpaces() {
		edges = append(edges, e.Rune)
	}
	if want := []rune{0x1c, 0x1d, 0x1e, 0x1f, 0x85, 0x180e, 0xfeff}; !reflect.DeepEqual(edges, want) {
		t.Errorf("EdgeSpaces %U, want %U", edges, want)
	}
	for _, tc := range []struct {
		name, shown, want string
		edge              []rune
	}{
		{"the same", "a", "a", nil},
		{"Go keeps U+FEFF", "튂\ufeff", "튂", []rune{0xfeff}},
		{"Go trims U+0085", "a", "a\u0085", []rune{0x85}},
		{"Python trims U+001C", "a", "\u001c a", []rune{0x1c}},
		{"Go stops at U+FEFF, past a space", "\ufeff a", "a", []rune{0xfeff}},
		{"both ends, two characters", "\ufeffa", "a\u0085", []rune{0xfeff, 0x85}},
		{"not trimmed at all", " a", "a", nil},
		{"not trimmed after U+FEFF", "\ufeffa ", "a", nil},
		{"another text", "b\ufeff", "a", nil},
		{"inside the text", "a\ufeffb", "ab", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []rune
			for _, e := range todolist.EdgeDiff(tc.shown, tc.want) {
				got = append(got, e.Rune)
			}
			if !reflect.DeepEqual(got, tc.edge) {
				t.Errorf("EdgeDiff(%q, %q) = %U, want %U", tc.shown, tc.want, got, tc.edge)
			}
			if same := todolist.SameShown(tc.shown, tc.want); same != (tc.shown == tc.want || tc.edge != nil) {
				t.Errorf("SameShown = %v", same)
			}
		})
	}
	for in, want := range map[string]bool{"a": false, " a\t": false, "a\u200b": false, "a\ufeff": true, "\u0085 a": true, " \u001fa": true, "\ufeff": true, "a\u0085b": false} {
		if got := todolist.TrimsDiffer(in); got != want {
			t.Errorf("TrimsDiffer(%q) = %v, want %v", in, got, want)
		}
	}
	if s := todolist.EdgeDiff("튂\ufeff", "튂")[0].String(); s != "U+FEFF ZERO WIDTH NO-BREAK SPACE (BOM): trimmed by JavaScript's String.prototype.trim() (the contract's), kept by Go's strings.TrimSpace, Python's str.strip() and Rust's str::trim" {
		t.Errorf("String: %s", s)
	}
}
