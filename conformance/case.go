package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"gopkg.in/yaml.v3"

	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/harness/todolist"
	"github.com/todoharness/todoharness/internal/safefile"
	"github.com/todoharness/todoharness/internal/yamlx"
	"github.com/todoharness/todoharness/mockmodel"
)

// CaseFile is the file name of a case inside its folder.
const CaseFile = "case.yaml"

// Case is one scripted conversation: ACP steps the runner drives, the mock
// model's answers, and the checks the case provides evidence for. Cases are
// data (fixtures/conformance/<case>/case.yaml); see the package doc for the
// format.
type Case struct {
	// ID names the case in reports; it defaults to the folder name.
	ID    string `yaml:"id" json:"id"`
	Title string `yaml:"title" json:"title"`
	// Probe marks the case whose first model request is used to detect the
	// dialect (its script must not call the todo tool).
	Probe bool `yaml:"probe" json:"probe,omitempty"`
	// Checks lists the IDs of the checks this case feeds (Always checks are
	// fed by every case).
	Checks []string      `yaml:"checks" json:"checks"`
	Steps  []driver.Step `yaml:"steps" json:"steps"`
	// Script is the mock model's turns in canonical form (todo_write), in
	// the mock's own turn type (mockmodel.DecodeTurns reads them, with
	// line numbers); the runner translates todo calls into the agent's
	// dialect. A tool call's Reject marks a todo_write call the contract
	// requires the agent to refuse. Arguments hold decoded JSON values
	// (map[string]any, []any, json.Number, ...).
	Script []mockmodel.Turn `yaml:"-" json:"script"`

	// Source is where the case was loaded from.
	Source string `yaml:"-" json:"source,omitempty"`
}

// Todo is one canonical list item.
type Todo struct {
	Content string `json:"content"`
	Status  string `json:"status"`
}

// Write is one scripted todo_write call, as the case expects it.
type Write struct {
	// Turn is the 0-based script turn that makes the call; Prompt the
	// 0-based prompt step it belongs to.
	Turn   int `json:"turn"`
	Prompt int `json:"prompt"`
	// CallID is the id the mock model gives the call.
	CallID string `json:"callId"`
	// Todos is the list (trimmed content) when the arguments have the
	// canonical shape; Shaped reports whether they do.
	Todos  []Todo `json:"todos"`
	Shaped bool   `json:"shaped"`
	// Args is the canonical arguments object as scripted.
	Args   any  `json:"args,omitempty"`
	Reject bool `json:"reject,omitempty"`
}

// LoadCase parses one case file; name is used in errors and as the default
// ID (the folder name).
func LoadCase(data []byte, source, defaultID string) (*Case, error) {
	var doc struct {
		Case   `yaml:",inline"`
		Script yaml.Node `yaml:"script"`
	}
	if err := yamlx.Unmarshal(data, &doc, true); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	c := doc.Case
	c.Source = source
	if c.ID == "" {
		c.ID = defaultID
	}
	if doc.Script.Kind != 0 {
		turns, err := mockmodel.DecodeTurns(&doc.Script, source)
		if err != nil {
			return nil, err
		}
		if err := (&mockmodel.Script{Path: source, Turns: turns}).Validate(); err != nil {
			return nil, err
		}
		for i := range turns {
			for j := range turns[i].ToolCalls {
				tc := &turns[i].ToolCalls[j]
				if tc.Arguments, err = jsonValue(tc.Arguments); err != nil {
					return nil, fmt.Errorf("%s:%d: script turn %d: toolCalls[%d].arguments: %w", source, turns[i].Line, i+1, j, err)
				}
			}
		}
		c.Script = turns
	}
	if err := c.Validate(nil); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	return &c, nil
}

// MaxCaseBytes is the largest case.yaml LoadCases and LoadCasesDir read
// (the built-in cases are 20 KB at most, a shrunk case a few KB).
const MaxCaseBytes = 4 << 20

// LoadCases loads every <dir>/case.yaml directly under root in fsys (or
// root itself when it holds a case.yaml), sorted by ID. IDs must be unique.
// A case.yaml must be a regular file of at most MaxCaseBytes. For a folder
// on disk use LoadCasesDir, which also never waits opening a FIFO.
func LoadCases(fsys fs.FS, root string) ([]*Case, error) {
	return loadCases(fsys, root, func(name string) ([]byte, error) { return readBounded(fsys, name) })
}

// LoadCasesDir is LoadCases of the folder dir on disk (--cases DIR): each
// case.yaml is opened with safefile.Open (a regular file, a link to one
// followed, of at most MaxCaseBytes; a FIFO or a device is refused, never
// waited on or read). Sources are dir/<case>/case.yaml.
//
// A dir that holds a case.yaml is one case folder: the case is named after
// the folder (as in a folder of cases), not ".".
func LoadCasesDir(dir string) ([]*Case, error) {
	base, root, one := dir, ".", false
	if st, err := os.Stat(filepath.Join(dir, CaseFile)); err == nil && st.Mode().IsRegular() {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, err
		}
		base, root, one = filepath.Dir(abs), filepath.Base(abs), true
	}
	cs, err := loadCases(os.DirFS(base), root, func(name string) ([]byte, error) {
		return safefile.ReadRegular(filepath.Join(base, filepath.FromSlash(name)), MaxCaseBytes)
	})
	for _, c := range cs {
		if one {
			c.Source = filepath.Join(dir, CaseFile)
		} else {
			c.Source = filepath.Join(dir, filepath.FromSlash(c.Source))
		}
	}
	return cs, err
}

// readBounded reads name from fsys when it is a regular file of at most
// MaxCaseBytes.
func readBounded(fsys fs.FS, name string) ([]byte, error) {
	fi, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: %w", name, safefile.ErrNotRegular)
	}
	if fi.Size() > MaxCaseBytes {
		return nil, fmt.Errorf("%s: %w: %d bytes, the limit is %d", name, safefile.ErrTooLarge, fi.Size(), MaxCaseBytes)
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxCaseBytes+1))
	if err == nil && len(data) > MaxCaseBytes {
		err = fmt.Errorf("%s: %w: more than %d bytes", name, safefile.ErrTooLarge, MaxCaseBytes)
	}
	return data, err
}

func loadCases(fsys fs.FS, root string, read func(string) ([]byte, error)) ([]*Case, error) {
	if root == "" {
		root = "."
	}
	var files []string
	if _, err := fs.Stat(fsys, path.Join(root, CaseFile)); err == nil {
		files = append(files, path.Join(root, CaseFile))
	} else {
		entries, err := fs.ReadDir(fsys, root)
		if err != nil {
			return nil, fmt.Errorf("conformance: read cases: %w", err)
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			p := path.Join(root, e.Name(), CaseFile)
			if _, err := fs.Stat(fsys, p); err == nil {
				files = append(files, p)
			}
		}
	}
	// The files parse at once (a case's YAML takes about half a
	// millisecond): the first error in file order is the one reported.
	out, errs := make([]*Case, len(files)), make([]error, len(files))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.NumCPU())
	for i, f := range files {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			data, err := read(f)
			if err != nil {
				errs[i] = fmt.Errorf("conformance: read case: %w", err)
				return
			}
			if out[i], err = LoadCase(data, f, path.Base(path.Dir(f))); err != nil {
				errs[i] = fmt.Errorf("conformance: %w", err)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if err := checkUniqueIDs(out); err != nil {
		return nil, err
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func checkUniqueIDs(cases []*Case) error {
	seen := map[string]string{}
	for _, c := range cases {
		if prev, ok := seen[c.ID]; ok {
			return fmt.Errorf("conformance: duplicate case id %q (%s and %s)", c.ID, prev, c.Source)
		}
		seen[c.ID] = c.Source
	}
	return nil
}

// Validate checks the case's structure. With cat non-nil it also checks
// that every listed check exists.
func (c *Case) Validate(cat []Check) error {
	if c.ID == "" {
		return errors.New("case has no id")
	}
	if len(c.Steps) == 0 || c.Steps[0].Op != driver.OpInitialize {
		return errors.New("steps: the first step must be initialize")
	}
	prompts, err := c.validateSteps()
	if err != nil {
		return err
	}
	if err := c.validateScript(prompts); err != nil {
		return err
	}
	if cat != nil {
		idx := catalogueIndex(cat)
		for _, id := range c.Checks {
			if _, ok := idx[id]; !ok {
				return fmt.Errorf("checks: unknown check %q", id)
			}
		}
	}
	return nil
}

// validateSteps checks the order of the steps and counts the prompts.
func (c *Case) validateSteps() (prompts int, err error) {
	initialized, session := false, false
	for i, s := range c.Steps {
		where := fmt.Sprintf("steps[%d] (%s)", i, s.Op)
		switch s.Op {
		case driver.OpInitialize:
			if initialized {
				return 0, fmt.Errorf("%s: already initialized (restart first)", where)
			}
			initialized = true
		case driver.OpNewSession:
			if !initialized {
				return 0, fmt.Errorf("%s: initialize first", where)
			}
			session = true
		case driver.OpPrompt:
			if !initialized || !session {
				return 0, fmt.Errorf("%s: needs an initialized process and a session", where)
			}
			if strings.TrimSpace(s.Text) == "" {
				return 0, fmt.Errorf("%s: empty text", where)
			}
			prompts++
			if s.Cancel && i+1 < len(c.Steps) && c.Steps[i+1].Op == driver.OpPrompt {
				return 0, fmt.Errorf("%s: cancel: a cancelled prompt may leave script turns unasked, so the next prompt cannot be tied to its turns (restart or load next)", where)
			}
		case driver.OpRestart:
			if !session {
				return 0, fmt.Errorf("%s: nothing to restart (no session yet)", where)
			}
			initialized = false
		case driver.OpLoadSession:
			if !initialized || !session {
				return 0, fmt.Errorf("%s: needs an initialized process and an earlier newSession", where)
			}
		default:
			return 0, fmt.Errorf("%s: unknown op (want initialize, newSession, prompt, restart or loadSession)", where)
		}
		if s.Cancel && s.Op != driver.OpPrompt {
			return 0, fmt.Errorf("%s: cancel is only meaningful on a prompt step", where)
		}
	}
	return prompts, nil
}

// validateScript checks the script against the steps' prompts.
func (c *Case) validateScript(prompts int) error {
	// Every prompt consumes script turns up to and including the next turn
	// without tool calls: that is how the runner knows which writes belong
	// to which prompt.
	ends := 0
	for i, t := range c.Script {
		if len(t.ToolCalls) == 0 {
			ends++
		}
		for j, call := range t.ToolCalls {
			if call.Name == "" {
				return fmt.Errorf("%s: toolCalls[%d]: no name", turnWhere(i, t), j)
			}
			if call.Reject && call.Name != driver.DialectTodoWrite {
				return fmt.Errorf("%s: toolCalls[%d]: reject is only meaningful on %s calls", turnWhere(i, t), j, driver.DialectTodoWrite)
			}
		}
	}
	if ends != prompts {
		return fmt.Errorf("script: %d turn(s) without tool calls for %d prompt step(s): each prompt must end on exactly one turn without tool calls", ends, prompts)
	}
	if n := len(c.Script); n > 0 && len(c.Script[n-1].ToolCalls) > 0 {
		return errors.New("script: the last turn must not call tools (it ends the last prompt)")
	}
	if c.Probe {
		for i, t := range c.Script {
			for _, call := range t.ToolCalls {
				if call.Name == driver.DialectTodoWrite {
					return fmt.Errorf("%s: a probe case must not call %s (the dialect is not known yet)", turnWhere(i, t), driver.DialectTodoWrite)
				}
			}
		}
	}
	return nil
}

// turnWhere names script turn i in messages: "script[2] (line 14)".
func turnWhere(i int, t mockmodel.Turn) string {
	if t.Line > 0 {
		return fmt.Sprintf("script[%d] (line %d)", i, t.Line)
	}
	return fmt.Sprintf("script[%d]", i)
}

// HasStep reports whether the case has a step with op.
func (c *Case) HasStep(op string) bool {
	for _, s := range c.Steps {
		if s.Op == op {
			return true
		}
	}
	return false
}

// KeyStep is the index of the step the case exists for: its first prompt
// with cancel, else its last loadSession, else its last prompt, else its
// last step. A run that never reached it says so (CaseResult.NotReached).
func (c *Case) KeyStep() int {
	load, prompt := -1, -1
	for i, s := range c.Steps {
		switch {
		case s.Op == driver.OpPrompt && s.Cancel:
			return i
		case s.Op == driver.OpLoadSession:
			load = i
		case s.Op == driver.OpPrompt:
			prompt = i
		}
	}
	switch {
	case load >= 0:
		return load
	case prompt >= 0:
		return prompt
	}
	return len(c.Steps) - 1
}

// Feeds reports whether the case lists check id.
func (c *Case) Feeds(id string) bool {
	for _, x := range c.Checks {
		if x == id {
			return true
		}
	}
	return false
}

// Writes returns the case's scripted todo_write calls in order, with the
// ids the mock model gives them (call_N, N the 1-based position of the
// call among all calls of the script, unless the script sets an id).
func (c *Case) Writes() []Write {
	var out []Write
	n, prompt := 0, 0
	for ti, t := range c.Script {
		for _, call := range t.ToolCalls {
			n++
			if call.Name != driver.DialectTodoWrite {
				continue
			}
			id := call.ID
			if id == "" {
				id = fmt.Sprintf("call_%d", n)
			}
			w := Write{Turn: ti, Prompt: prompt, CallID: id, Args: call.Arguments, Reject: call.Reject}
			w.Todos, w.Shaped = canonicalTodos(call.Arguments)
			out = append(out, w)
		}
		if len(t.ToolCalls) == 0 {
			prompt++
		}
	}
	return out
}

// canonicalTodos reads {todos: [{content, status}]} with trimmed content.
func canonicalTodos(args any) ([]Todo, bool) {
	m, ok := args.(map[string]any)
	if !ok {
		return nil, false
	}
	arr, ok := m["todos"].([]any)
	if !ok {
		return nil, false
	}
	out := make([]Todo, 0, len(arr))
	for _, it := range arr {
		im, ok := it.(map[string]any)
		if !ok {
			return nil, false
		}
		content, ok1 := im["content"].(string)
		status, ok2 := im["status"].(string)
		if !ok1 || !ok2 {
			return nil, false
		}
		out = append(out, Todo{Content: todolist.Trim(content), Status: status})
	}
	return out, true
}

// jsonValue turns decoded script arguments (json.RawMessage from
// mockmodel.DecodeTurns) into plain JSON values, numbers as json.Number so
// that none loses precision.
func jsonValue(v any) (any, error) {
	raw, ok := v.(json.RawMessage)
	if !ok {
		return v, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

// caseJSON renders a value compactly for messages.
func caseJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}
