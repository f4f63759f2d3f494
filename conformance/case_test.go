package conformance

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/internal/testutil"
	"github.com/todoharness/todoharness/internal/yamlx"
	"github.com/todoharness/todoharness/mockmodel"
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
		if _, err := c.script(driver.Dialects()[0], nil); err != nil {
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

// quoted reports whether quote appears word for word in text (runs of
// white space compare equal: the texts are wrapped Markdown).
func quoted(text, quote string) bool {
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	return strings.Contains(norm(text), norm(quote))
}

func TestQuoted(t *testing.T) {
	text := "The model sends the ENTIRE list\nevery call — there are no partial updates."
	if !quoted(text, "sends the ENTIRE list every call") {
		t.Error("a quote across a line break is not found")
	}
	for _, q := range []string{"sends the entire list", "sends the ENTIRE list  on every call"} {
		if quoted(text, q) {
			t.Errorf("%q found, but it is not in the text", q)
		}
	}
}

// primarySource is the first source a check cites (TW-LOAD-1 cites two).
func primarySource(c Check) string { return strings.SplitN(c.Source, "; ", 2)[0] }

// Every check cites a source a reader can get: an upstream text by
// repository, commit and path, the ACP schema, or docs/conformance.md.
func TestCatalogueCitesReachableSources(t *testing.T) {
	known := map[string]bool{srcDoc: true}
	for _, s := range SpecSources() {
		known[s.Cite] = true
		if len(s.SHA256) != 64 || !strings.HasPrefix(s.Cite, "deepseek-ai/deepseek-harness@") {
			t.Errorf("source %+v: want repository@commit path and a hex SHA-256", s)
		}
	}
	for _, c := range Catalogue() {
		src := primarySource(c)
		if !known[src] && !strings.HasPrefix(src, srcSchema) {
			t.Errorf("%s cites %q: not an upstream text of SpecSources, the ACP schema or %s", c.ID, src, srcDoc)
		}
		if strings.Contains(c.Source, "DESIGN.md") || strings.Contains(c.Source, "spec/") {
			t.Errorf("%s cites %q: a file users of todoharness do not have", c.ID, c.Source)
		}
	}
}

// The quotes from the ACP schema and from docs/conformance.md (outside its
// generated table, which repeats every quote) are verbatim there. Both are
// in the repository: this test always runs.
func TestCatalogueQuotesTheDocs(t *testing.T) {
	head, _, tail := splitDoc(t)
	doc := head + tail
	// JSON escapes: compare against the decoded strings loosely.
	schema := strings.NewReplacer(`\n`, " ", `\"`, `"`).Replace(string(driver.ACPSchema()))
	n := 0
	for _, c := range Catalogue() {
		switch src := primarySource(c); {
		case src == srcDoc:
			n++
			if !quoted(doc, c.Spec) {
				t.Errorf("%s: the quote is not in %s (outside the generated table):\n  %s", c.ID, docPath(), c.Spec)
			}
		case strings.HasPrefix(src, srcSchema):
			n++
			if !quoted(schema, c.Spec) {
				t.Errorf("%s: the quote is not in the ACP schema:\n  %s", c.ID, c.Spec)
			}
		}
	}
	if n == 0 {
		t.Fatal("no check quotes the docs or the schema: the test checked nothing")
	}
}

// Every quote from an upstream text is verbatim in it. The texts are not part
// of the repository: the test reads copies from $TODOHARNESS_SPEC_DIR (or
// the team's shared spec folder beside the checkout) and skips, saying why,
// when there are none. A copy whose SHA-256 is not the catalogue's has
// drifted and fails the test.
func TestCatalogueQuotesTheSpec(t *testing.T) {
	dir, from := testutil.SpecDir()
	for _, src := range SpecSources() {
		t.Run(src.File, func(t *testing.T) {
			p := filepath.Join(dir, src.File)
			b, err := os.ReadFile(p)
			if errors.Is(err, fs.ErrNotExist) {
				t.Skipf("no copy of %s at %s (spec folder from %s): the upstream texts are not part of the repository; set %s to a folder holding %s to check the quotes against it", src.Cite, p, from, testutil.SpecDirEnv, src.File)
			}
			if err != nil {
				t.Fatal(err)
			}
			if sum := fmt.Sprintf("%x", sha256.Sum256(b)); sum != src.SHA256 {
				t.Fatalf("%s is not %s: SHA-256 %s, the catalogue has %s (a drifted copy, or the catalogue must move to a new commit)", p, src.Cite, sum, src.SHA256)
			}
			n := 0
			for _, c := range Catalogue() {
				if primarySource(c) != src.Cite {
					continue
				}
				n++
				if !quoted(string(b), c.Spec) {
					t.Errorf("%s: the quote is not in %s (%s):\n  %s", c.ID, src.Cite, p, c.Spec)
				}
			}
			if n == 0 {
				t.Errorf("no check quotes %s", src.Cite)
			}
		})
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
		{"cancel on another op", "steps: [{op: initialize, cancel: true}]", "cancel is only meaningful on a prompt step"},
		{"a prompt after a cancelled one", "steps: [{op: initialize}, {op: newSession}, {op: prompt, text: hi, cancel: true}, {op: prompt, text: again}]\nscript: [{text: a}, {text: b}]", "the next prompt cannot be tied to its turns"},
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

// The case's script is the mock's own turn format: its fields (chunkSize,
// fault) reach the mock, and its errors carry the case file's lines.
func TestCaseScriptIsTheMockFormat(t *testing.T) {
	const head = "steps: [{op: initialize}, {op: newSession}, {op: prompt, text: hi}]\nscript:\n"
	c, err := LoadCase([]byte(head+"  - toolCalls:\n      - {name: todo_write, arguments: {todos: []}, reject: true}\n    chunkSize: 3\n  - text: done\n    fault: close-mid-stream\n"), "x/case.yaml", "x")
	if err != nil {
		t.Fatal(err)
	}
	s, err := c.script(driver.Dialects()[0], nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Turns[0].ChunkSize; got != 3 {
		t.Errorf("chunkSize %d, want 3", got)
	}
	if got := s.Turns[1].Fault; got != mockmodel.FaultCloseMidStream {
		t.Errorf("fault %q, want %q", got, mockmodel.FaultCloseMidStream)
	}
	if !s.Turns[0].ToolCalls[0].Reject || !c.Writes()[0].Reject {
		t.Error("reject annotation lost")
	}
	for _, tc := range []struct{ name, script, want string }{
		{"unknown turn field", "  - text: a\n    chunksize: 3\n", "x/case.yaml:4: turn 1: chunksize: unknown field"},
		{"bad fault", "  - text: a\n    fault: explode\n", `x/case.yaml:4: turn 1: fault: unknown fault "explode"`},
		{"arguments not a mapping", "  - toolCalls:\n      - {name: todo_write, arguments: [1]}\n  - text: a\n", "x/case.yaml:4: turn 1: toolCalls[0].arguments: must be a mapping"},
		{"reject on another tool", "  - toolCalls:\n      - {name: bash, reject: true}\n  - text: a\n", "x/case.yaml: script[0] (line 3): toolCalls[0]: reject is only meaningful"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadCase([]byte(head+tc.script), "x/case.yaml", "x")
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
}

// A case whose script nests aliases (a few hundred bytes expanding to
// hundreds of millions of values) is refused before anything expands it.
func TestCaseAliasBombIsRefused(t *testing.T) {
	body := "steps: [{op: initialize}, {op: newSession}, {op: prompt, text: hi}]\nscript:\n  - toolCalls:\n      - name: todo_write\n        arguments:\n" +
		testutil.AliasBomb("          ") + "  - text: done\n"
	if len(body) > 800 {
		t.Fatalf("the bomb is %d bytes; it should stay small", len(body))
	}
	_, err := LoadCase([]byte(body), "x/case.yaml", "x")
	if !errors.Is(err, yamlx.ErrAliasing) || !strings.Contains(err.Error(), "x/case.yaml") {
		t.Fatalf("error %v, want excessive aliasing naming x/case.yaml", err)
	}
}

// The expected-failures baseline is read through the same guard.
func TestExpectedFailuresAliasBombIsRefused(t *testing.T) {
	_, err := ParseExpectedFailures([]byte("- id: TW-COUNTS-1\n  reason: r\n  extra:\n"+testutil.AliasBomb("    ")), "b.yaml")
	if !errors.Is(err, yamlx.ErrAliasing) || !strings.Contains(err.Error(), "b.yaml") {
		t.Fatalf("error %v, want excessive aliasing naming b.yaml", err)
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
	// The cases parse at once; the error reported is still the first
	// broken file's in folder order, every time.
	broken := fstest.MapFS{}
	for _, d := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		broken[d+"/case.yaml"] = &fstest.MapFile{Data: []byte(ok)}
	}
	broken["c/case.yaml"] = &fstest.MapFile{Data: []byte("steps: [{op: fly}]\n")}
	broken["f/case.yaml"] = &fstest.MapFile{Data: []byte("steps: [\n")}
	for range 20 {
		if _, err := LoadCases(broken, "."); err == nil || !strings.Contains(err.Error(), "c/case.yaml") {
			t.Fatalf("two broken cases: %v, want c/case.yaml's error", err)
		}
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

// The probe the runner adds when no selected case is one feeds what the
// built-in probe case feeds: a run narrowed by --case judges the checks
// of the offered tool as a full run does.
func TestBuiltinProbeFeedsWhatTheProbeCaseFeeds(t *testing.T) {
	t.Parallel()
	for _, c := range builtinCases(t) {
		if c.Probe && !slices.Equal(c.Checks, builtinProbe().Checks) {
			t.Errorf("the built-in probe feeds %v, the probe case %s %v", builtinProbe().Checks, c.ID, c.Checks)
		}
	}
}
