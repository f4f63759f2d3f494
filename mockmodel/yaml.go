package mockmodel

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/internal/jsonx"
	"github.com/todoharness/todoharness/internal/textcut"
	"github.com/todoharness/todoharness/internal/yamlx"
)

// yamlLoader turns a YAML document into a Script, walking yaml.v3 nodes so
// every error carries a line number and unknown fields are rejected.
type yamlLoader struct {
	file string
}

func parseYAML(data []byte, file string) (*Script, error) {
	l := &yamlLoader{file: file}
	doc, err := yamlx.Parse(data)
	if err != nil {
		return nil, yamlError(file, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 {
		return nil, &ScriptError{File: file, Err: errors.New("empty script: want a list of turns or a mapping with turns")}
	}
	root := deref(doc.Content[0])
	s := &Script{Path: file}
	var turns *yaml.Node
	switch root.Kind {
	case yaml.SequenceNode:
		turns = root
	case yaml.MappingNode:
		err := l.eachField(root, 0, "", []string{"name", "sideText", "turns"}, func(key string, v *yaml.Node) error {
			switch key {
			case "name":
				return l.str(v, 0, "name", &s.Name)
			case "sideText":
				return l.str(v, 0, "sideText", &s.SideText)
			case "turns":
				if v.Kind != yaml.SequenceNode {
					return l.errf(v, 0, "turns", "must be a list of turns, got %s", kindName(v))
				}
				turns = v
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if turns == nil {
			return nil, l.errf(root, 0, "turns", "missing (a script is a list of turns, or a mapping with name and turns)")
		}
	default:
		return nil, l.errf(root, 0, "", "want a list of turns or a mapping with turns, got %s", kindName(root))
	}
	if s.Turns, err = l.turns(turns); err != nil {
		return nil, err
	}
	return s, nil
}

// DecodeTurns reads a YAML list of turns in the script format (the value of
// a script's "turns", or of a conformance case's "script") from a node of a
// document parsed by the caller. Errors are *ScriptError naming file, the
// line, the turn and the field. It refuses excessive aliasing before
// walking the list. The turns are not compiled: Script.Validate checks what
// only the whole script can tell (unique ids, argument JSON).
func DecodeTurns(n *yaml.Node, file string) ([]Turn, error) {
	if err := yamlx.Check(n); err != nil {
		return nil, yamlError(file, err)
	}
	l := &yamlLoader{file: file}
	n = deref(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		line := 0
		if n != nil {
			line = n.Line
		}
		return nil, &ScriptError{File: file, Line: line, Err: fmt.Errorf("turns: must be a list of turns, got %s", describeOrNothing(n))}
	}
	return l.turns(n)
}

// yamlError is a parse or aliasing error as a ScriptError, with the line of
// a refused alias as its line.
func yamlError(file string, err error) error {
	var ae *yamlx.AliasError
	if errors.As(err, &ae) {
		return &ScriptError{File: file, Line: ae.Line, Err: fmt.Errorf("%w: %s", yamlx.ErrAliasing, ae.Reason)}
	}
	return &ScriptError{File: file, Err: err}
}

func describeOrNothing(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	return describe(n)
}

func (l *yamlLoader) turns(list *yaml.Node) ([]Turn, error) {
	var out []Turn
	for i, tn := range list.Content {
		t, err := l.turn(deref(tn), i+1)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, nil
}

// turnFields are the YAML fields of a turn: the JSON names of Turn's
// fields, in order (Line is where the turn is, not a field).
func turnFields() []string { return jsonFields(reflect.TypeFor[Turn](), "line") }

// callFields are the YAML fields of a tool call.
func callFields() []string { return jsonFields(reflect.TypeFor[ToolCall]()) }

// jsonFields lists the JSON names of typ's exported fields, in order, but
// skip.
func jsonFields(typ reflect.Type, skip ...string) []string {
	var out []string
	for i := 0; i < typ.NumField(); i++ {
		f := typ.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "" || name == "-" || slices.Contains(skip, name) {
			continue
		}
		out = append(out, name)
	}
	return out
}

// generic reads a field that needs no special reading (a new field of
// Turn or ToolCall is read here without a line of loader code): n as JSON,
// decoded into the field of *dst whose JSON name is key. Errors name the
// field's line.
func (l *yamlLoader) generic(n *yaml.Node, turn int, path string, dst any, key string) error {
	v := reflect.ValueOf(dst).Elem()
	var field reflect.Value
	for i := 0; i < v.NumField(); i++ {
		if name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("json"), ","); name == key {
			field = v.Field(i)
		}
	}
	if !field.IsValid() {
		return l.errf(n, turn, path, "unknown field")
	}
	var buf bytes.Buffer
	if err := l.nodeJSON(n, turn, path, &buf); err != nil {
		return err
	}
	ptr := reflect.New(field.Type())
	dec := json.NewDecoder(&buf)
	dec.DisallowUnknownFields()
	if err := dec.Decode(ptr.Interface()); err != nil {
		return l.errf(n, turn, path, "must be %s, got %s", goKind(field.Type()), describe(n))
	}
	field.Set(ptr.Elem())
	return nil
}

// goKind names a Go type for messages: "a list of strings".
func goKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an integer"
	case reflect.Slice:
		return "a list of " + strings.TrimPrefix(strings.TrimPrefix(goKind(t.Elem()), "a "), "an ") + "s"
	case reflect.Pointer:
		return goKind(t.Elem())
	}
	return "a " + t.String()
}

func (l *yamlLoader) turn(n *yaml.Node, num int) (Turn, error) {
	t := Turn{Line: n.Line, lines: map[string]int{}}
	if n.Kind != yaml.MappingNode {
		return t, l.errf(n, num, "", "a turn must be a mapping, got %s", kindName(n))
	}
	err := l.eachField(n, num, "", turnFields(), func(key string, v *yaml.Node) error {
		t.lines[key] = v.Line
		switch key {
		case "text":
			return l.text(v, num, key, &t.Text)
		case "reasoning":
			return l.text(v, num, key, &t.Reasoning)
		case "finish":
			return l.str(v, num, key, &t.Finish)
		case "fault":
			var f string
			err := l.str(v, num, key, &f)
			t.Fault = Fault(f)
			return err
		case "chunkSize":
			return l.int(v, num, key, &t.ChunkSize)
		case "usage":
			u := &llm.Usage{}
			t.Usage = u
			return l.eachField(v, num, key, []string{"inputTokens", "outputTokens", "cacheReadTokens", "reasoningTokens"}, func(k string, f *yaml.Node) error {
				dst := map[string]*int{"inputTokens": &u.InputTokens, "outputTokens": &u.OutputTokens,
					"cacheReadTokens": &u.CacheReadTokens, "reasoningTokens": &u.ReasoningTokens}[k]
				return l.int(f, num, key+"."+k, dst)
			})
		case "expect":
			return l.expect(v, num, key, &t)
		case "toolCalls":
			return l.toolCalls(v, num, key, &t)
		}
		return l.generic(v, num, key, &t, key)
	})
	return t, err
}

// expect reads a turn's expect mapping.
func (l *yamlLoader) expect(v *yaml.Node, num int, key string, t *Turn) error {
	e := &Expect{}
	t.Expect = e
	return l.eachField(v, num, key, []string{"lastMessage", "lastIsError", "lastContains", "toolsInclude"}, func(k string, f *yaml.Node) error {
		path := key + "." + k
		t.lines[path] = f.Line
		switch k {
		case "lastMessage":
			return l.str(f, num, path, &e.LastMessage)
		case "lastContains":
			return l.text(f, num, path, &e.LastContains)
		case "lastIsError":
			var b bool
			if err := l.bool(f, num, path, &b); err != nil {
				return err
			}
			e.LastIsError = &b
		case "toolsInclude":
			if f.Kind != yaml.SequenceNode {
				return l.errf(f, num, path, "must be a list of tool names, got %s", describe(f))
			}
			for i, item := range f.Content {
				var name string
				if err := l.str(deref(item), num, fmt.Sprintf("%s[%d]", path, i), &name); err != nil {
					return err
				}
				e.ToolsInclude = append(e.ToolsInclude, name)
			}
		}
		return nil
	})
}

// toolCalls reads a turn's toolCalls list.
func (l *yamlLoader) toolCalls(v *yaml.Node, num int, key string, t *Turn) error {
	if v.Kind != yaml.SequenceNode {
		return l.errf(v, num, key, "must be a list of tool calls, got %s", describe(v))
	}
	for i, cn := range v.Content {
		cn = deref(cn)
		path := fmt.Sprintf("toolCalls[%d]", i)
		t.lines[path] = cn.Line
		var tc ToolCall
		err := l.eachField(cn, num, path, callFields(), func(k string, f *yaml.Node) error {
			fp := path + "." + k
			t.lines[fp] = f.Line
			switch k {
			case "id":
				return l.str(f, num, fp, &tc.ID)
			case "name":
				return l.str(f, num, fp, &tc.Name)
			case "rawArguments":
				return l.str(f, num, fp, &tc.RawArguments)
			case "reject":
				return l.bool(f, num, fp, &tc.Reject)
			case "arguments":
				if f.Kind != yaml.MappingNode {
					return l.errf(f, num, fp, "must be a mapping (the JSON object of arguments), got %s", describe(f))
				}
				var buf bytes.Buffer
				if err := l.nodeJSON(f, num, fp, &buf); err != nil {
					return err
				}
				tc.Arguments = json.RawMessage(buf.Bytes())
			default:
				return l.generic(f, num, fp, &tc, k)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if tc.Name == "" {
			return l.errf(cn, num, path+".name", "missing tool name")
		}
		t.ToolCalls = append(t.ToolCalls, tc)
	}
	return nil
}

// eachField calls fn for every key of mapping n, rejecting unknown and
// duplicate keys.
func (l *yamlLoader) eachField(n *yaml.Node, turn int, path string, known []string, fn func(key string, v *yaml.Node) error) error {
	n = deref(n)
	if n.Kind != yaml.MappingNode {
		return l.errf(n, turn, path, "must be a mapping, got %s", describe(n))
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], deref(n.Content[i+1])
		fp := k.Value
		if path != "" {
			fp = path + "." + k.Value
		}
		if !slices.Contains(known, k.Value) {
			return l.errf(k, turn, fp, "unknown field (known: %s)", strings.Join(known, ", "))
		}
		if seen[k.Value] {
			return l.errf(k, turn, fp, "duplicate field")
		}
		seen[k.Value] = true
		if err := fn(k.Value, v); err != nil {
			return err
		}
	}
	return nil
}

func (l *yamlLoader) str(n *yaml.Node, turn int, path string, dst *string) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		return l.errf(n, turn, path, "must be a string, got %s", describe(n))
	}
	*dst = n.Value
	return nil
}

// text accepts any non-null scalar (text: 42 is the text "42").
func (l *yamlLoader) text(n *yaml.Node, turn int, path string, dst *string) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() == "!!null" {
		return l.errf(n, turn, path, "must be text, got %s", describe(n))
	}
	*dst = n.Value
	return nil
}

func (l *yamlLoader) bool(n *yaml.Node, turn int, path string, dst *bool) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
		return l.errf(n, turn, path, "must be true or false, got %s", describe(n))
	}
	if err := n.Decode(dst); err != nil {
		return l.errf(n, turn, path, "%w", err)
	}
	return nil
}

func (l *yamlLoader) int(n *yaml.Node, turn int, path string, dst *int) error {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
		return l.errf(n, turn, path, "must be an integer, got %s", describe(n))
	}
	if err := n.Decode(dst); err != nil {
		return l.errf(n, turn, path, "%w", err)
	}
	return nil
}

// nodeJSON writes n as JSON, keeping the key order of the YAML.
func (l *yamlLoader) nodeJSON(n *yaml.Node, turn int, path string, buf *bytes.Buffer) error {
	n = deref(n)
	switch n.Kind {
	case yaml.MappingNode:
		buf.WriteByte('{')
		seen := map[string]bool{}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := deref(n.Content[i]), n.Content[i+1]
			if k.Kind != yaml.ScalarNode {
				return l.errf(k, turn, path, "object keys must be scalars, got %s", describe(k))
			}
			if k.Value == "<<" && k.ShortTag() == "!!merge" {
				return l.errf(k, turn, path, "YAML merge keys (<<) are not supported in arguments")
			}
			if seen[k.Value] {
				return l.errf(k, turn, path+"."+k.Value, "duplicate key")
			}
			seen[k.Value] = true
			if i > 0 {
				buf.WriteByte(',')
			}
			kb, _ := jsonx.Marshal(k.Value)
			buf.Write(kb)
			buf.WriteByte(':')
			if err := l.nodeJSON(v, turn, path+"."+k.Value, buf); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case yaml.SequenceNode:
		buf.WriteByte('[')
		for i, item := range n.Content {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := l.nodeJSON(item, turn, fmt.Sprintf("%s[%d]", path, i), buf); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case yaml.ScalarNode:
		return l.scalarJSON(n, turn, path, buf)
	default:
		return l.errf(n, turn, path, "unsupported YAML node %s", describe(n))
	}
	return nil
}

// scalarJSON writes scalar n as JSON.
func (l *yamlLoader) scalarJSON(n *yaml.Node, turn int, path string, buf *bytes.Buffer) error {
	var v any
	switch n.ShortTag() {
	case "!!null":
		buf.WriteString("null")
		return nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return l.errf(n, turn, path, "%w", err)
		}
		v = b
	case "!!int":
		var i int64
		if err := n.Decode(&i); err != nil {
			var u uint64
			if err2 := n.Decode(&u); err2 != nil {
				return l.errf(n, turn, path, "%w", err)
			}
			v = u
		} else {
			v = i
		}
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return l.errf(n, turn, path, "%w", err)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return l.errf(n, turn, path, "%s has no JSON representation", n.Value)
		}
		v = f
	case "!!str", "!!timestamp", "!!binary":
		v = n.Value
	default:
		return l.errf(n, turn, path, "unsupported YAML tag %s", n.Tag)
	}
	b, err := jsonx.Marshal(v)
	if err != nil {
		return l.errf(n, turn, path, "%w", err)
	}
	buf.Write(b)
	return nil
}

func (l *yamlLoader) errf(n *yaml.Node, turn int, path, format string, args ...any) error {
	return &ScriptError{File: l.file, Line: n.Line, Turn: turn, Field: path, Err: fmt.Errorf(format, args...)}
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "a scalar"
	case yaml.DocumentNode:
		return "a document"
	case yaml.AliasNode:
		return "an alias"
	}
	return "nothing"
}

// describe names a node for messages: `the string "x"`, `a list`, ...
func describe(n *yaml.Node) string {
	if n.Kind != yaml.ScalarNode {
		return kindName(n)
	}
	names := map[string]string{"!!str": "string", "!!int": "integer", "!!float": "number", "!!bool": "boolean", "!!null": "null"}
	name, ok := names[n.ShortTag()]
	if !ok {
		name = n.ShortTag()
	}
	if n.ShortTag() == "!!null" {
		return "null"
	}
	return fmt.Sprintf("%s %s", name, textcut.Truncate(fmt.Sprintf("%q", n.Value), 40))
}
