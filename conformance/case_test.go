package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/todoharness/todoharness/internal/testutil"
)

func TestBuiltinCasesLoad(t *testing.T) {
	cases := builtinCases(t)
	cat := Catalogue()
	fed := map[string]bool{}
	probes := 0
	for _, c := range cases {
		if err := c.Validate(cat); err != nil {
			t.Errorf("%s: %v", c.ID, err)
		}
		for _, id := range c.Checks {
			fed[id] = true
		}
		if c.Probe {
			probes++
		}
		if _, err := c.script(Dialects()[0], nil); err != nil {
			t.Errorf("%s: %v", c.ID, err)
		}
	}
	if probes != 1 {
		t.Errorf("%d probe cases, want 1", probes)
	}
	for _, c := range cat {
		if !c.Always && !fed[c.ID] {
			t.Errorf("no built-in case feeds %s", c.ID)
		}
	}
}

func TestCatalogue(t *testing.T) {
	seen := map[string]bool{}
	for _, c := range Catalogue() {
		if seen[c.ID] {
			t.Errorf("duplicate ID %s", c.ID)
		}
		seen[c.ID] = true
		if c.Level != MUST && c.Level != SHOULD && c.Level != INFO {
			t.Errorf("%s: level %q", c.ID, c.Level)
		}
		if c.eval == nil || c.Title == "" || c.Spec == "" || c.Source == "" {
			t.Errorf("%s: incomplete", c.ID)
		}
	}
}

// Every quoted sentence is verbatim in the file it names.
func TestCatalogueQuotesTheSpec(t *testing.T) {
	shared := testutil.SharedDir()
	files := map[string]string{
		srcREADME:                 filepath.Join(shared, "spec", "todo-tool-readme.md"),
		srcRFC:                    filepath.Join(shared, "spec", "todo-write-rfc.md"),
		"DESIGN.md § Conformance": filepath.Join(shared, "DESIGN.md"),
		"ACP JSON schema":         "",
		"ACP protocol v1":         "",
	}
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for _, c := range Catalogue() {
		src := strings.SplitN(c.Source, "; ", 2)[0]
		var text string
		switch {
		case strings.HasPrefix(src, "ACP JSON schema"):
			text = string(ACPSchema())
			// JSON escapes: compare against the decoded strings loosely.
			text = strings.NewReplacer(`\n`, " ", `\"`, `"`).Replace(text)
		default:
			p, ok := files[src]
			if !ok {
				t.Errorf("%s: unknown source %q", c.ID, src)
				continue
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatalf("the spec files are always beside the checkout in ../shared (CI copies them there): %v", err)
			}
			text = string(b)
		}
		if !strings.Contains(norm(text), norm(c.Spec)) {
			t.Errorf("%s: the quote is not in %s:\n  %s", c.ID, src, c.Spec)
		}
	}
}

func TestCaseValidation(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"unknown op", "steps: [{op: initialize}, {op: dance}]", "unknown op"},
		{"no initialize", "steps: [{op: newSession}]", "first step must be initialize"},
		{"prompt without session", "steps: [{op: initialize}, {op: prompt, text: hi}]\nscript: [{text: OK}]", "needs an initialized process"},
		{"turns per prompt", "steps: [{op: initialize}, {op: newSession}, {op: prompt, text: hi}]\nscript: [{text: a}, {text: b}]", "2 turn(s) without tool calls for 1 prompt"},
		{"last turn calls", "steps: [{op: initialize}, {op: newSession}, {op: prompt, text: hi}]\nscript: [{text: a}, {toolCalls: [{name: x}]}]", "last turn must not call tools"},
		{"unknown field", "steps: [{op: initialize}]\nsteeps: []", "steeps"},
		{"reject on other tool", "steps: [{op: initialize}, {op: newSession}, {op: prompt, text: hi}]\nscript: [{toolCalls: [{name: bash, reject: true}]}, {text: a}]", "reject is only meaningful"},
		{"probe calls todo", "probe: true\nsteps: [{op: initialize}, {op: newSession}, {op: prompt, text: hi}]\nscript: [{toolCalls: [{name: todo_write}]}, {text: a}]", "probe case"},
		{"load without session", "steps: [{op: initialize}, {op: loadSession}]", "earlier newSession"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadCase([]byte(tc.yaml), "x/case.yaml", "x")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	// Unknown check IDs are caught against the catalogue.
	c, err := LoadCase([]byte("checks: [TW-NOPE]\nsteps: [{op: initialize}]"), "x/case.yaml", "x")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(Catalogue()); err == nil || !strings.Contains(err.Error(), "TW-NOPE") {
		t.Errorf("unknown check: %v", err)
	}
}

func TestLoadCasesFS(t *testing.T) {
	ok := "steps: [{op: initialize}]\n"
	fsys := fstest.MapFS{
		"b/case.yaml":      {Data: []byte(ok)},
		"a/case.yaml":      {Data: []byte(ok)},
		"notes/readme.txt": {Data: []byte("not a case")},
	}
	cs, err := LoadCases(fsys, ".")
	if err != nil || len(cs) != 2 || cs[0].ID != "a" || cs[1].ID != "b" {
		t.Fatalf("%v %v", cs, err)
	}
	one, err := LoadCases(fsys, "b")
	if err != nil || len(one) != 1 || one[0].ID != "b" {
		t.Fatalf("single case folder: %v %v", one, err)
	}
	dup := fstest.MapFS{"a/case.yaml": {Data: []byte("id: x\n" + ok)}, "b/case.yaml": {Data: []byte("id: x\n" + ok)}}
	if _, err := LoadCases(dup, "."); err == nil || !strings.Contains(err.Error(), "duplicate case id") {
		t.Errorf("duplicate ids: %v", err)
	}
}

func TestWritesAndPrompts(t *testing.T) {
	var lc *Case
	for _, c := range builtinCases(t) {
		if c.ID == "load-after-several" {
			lc = c
		}
	}
	ws := lc.Writes()
	var got []string
	for _, w := range ws {
		got = append(got, w.CallID+"@"+string(rune('0'+w.Prompt)))
	}
	if strings.Join(got, " ") != "call_1@0 call_2@0 call_3@1 call_4@1 call_5@2" {
		t.Errorf("writes %v", got)
	}
	if !ws[3].Reject || ws[2].Reject {
		t.Error("reject flags")
	}
}
