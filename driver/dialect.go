package driver

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Dialect names. The canonical dialect is the spec's todo_write.
const (
	DialectTodoWrite = "todo_write"
	DialectOpencode  = "opencode"
	DialectCodex     = "codex"
	DialectGemini    = "gemini"
	DialectClaude    = "claude"
	DialectQwen      = "qwen"
)

// Dialect maps the canonical list onto another agent's todo tool: its name,
// the field holding the list, and each item's fields. The ACP side (plan
// entries) is the same for every dialect, so checks compare plans with the
// canonical list.
type Dialect struct {
	Name string `json:"name"`
	// Tool is the tool name the agent offers the model.
	Tool string `json:"tool"`
	// ListField holds the array; ContentField and StatusField name an
	// item's text and status.
	ListField    string `json:"listField"`
	ContentField string `json:"contentField"`
	StatusField  string `json:"statusField"`
	// Extra fields some agents require on every item (filled only when the
	// offered schema declares them, or always when no schema is known).
	Extra []string `json:"extra,omitempty"`
}

// Dialects returns the known dialects, canonical first (the order used for
// auto-detection).
func Dialects() []Dialect {
	return []Dialect{
		{Name: DialectTodoWrite, Tool: "todo_write", ListField: "todos", ContentField: "content", StatusField: "status"},
		{Name: DialectOpencode, Tool: "todowrite", ListField: "todos", ContentField: "content", StatusField: "status", Extra: []string{"priority", "id"}},
		{Name: DialectCodex, Tool: "update_plan", ListField: "plan", ContentField: "step", StatusField: "status"},
		{Name: DialectGemini, Tool: "write_todos", ListField: "todos", ContentField: "description", StatusField: "status"},
		{Name: DialectClaude, Tool: "TodoWrite", ListField: "todos", ContentField: "content", StatusField: "status", Extra: []string{"activeForm"}},
		// qwen-code's todo_write: the canonical tool, but every item
		// requires an id (told from todo_write by the offered schema).
		{Name: DialectQwen, Tool: "todo_write", ListField: "todos", ContentField: "content", StatusField: "status", Extra: []string{"id"}},
	}
}

// ForSchema refines a dialect detected by its tool's name with the tool's
// offered parameters schema: among the dialects of that tool name, the
// first whose calls carry every field the schema requires of an item (its
// content, status and extra fields). Qwen Code's todo_write requires an
// id the canonical one has not. d itself when none does, or the schema
// says nothing.
func (d Dialect) ForSchema(params json.RawMessage) Dialect {
	s, err := ParseToolSchema(params)
	if err != nil {
		return d
	}
	list, ok := s.Properties[d.ListField]
	if !ok || list.Items == nil || len(list.Items.Required) == 0 {
		return d
	}
	for _, x := range Dialects() {
		if x.Tool != d.Tool || x.ListField != d.ListField {
			continue
		}
		carried := map[string]bool{x.ContentField: true, x.StatusField: true}
		for _, f := range x.Extra {
			carried[f] = true
		}
		all := true
		for _, f := range list.Items.Required {
			all = all && carried[f]
		}
		if all {
			return x
		}
	}
	return d
}

// DialectByName returns a known dialect by name (or by its tool name: the
// first dialect of that tool).
func DialectByName(name string) (Dialect, error) {
	for _, d := range Dialects() {
		if d.Name == name || d.Tool == name {
			return d, nil
		}
	}
	return Dialect{}, fmt.Errorf("conformance: unknown dialect %q (known: %s)", name, strings.Join(DialectNames(), ", "))
}

// DetectDialect picks the dialect whose tool the agent offers; ok is false
// when none is offered.
func DetectDialect(toolNames []string) (Dialect, bool) {
	offered := map[string]bool{}
	for _, n := range toolNames {
		offered[n] = true
	}
	for _, d := range Dialects() {
		if offered[d.Tool] {
			return d, true
		}
	}
	return Dialect{}, false
}

// TranslateArgs rewrites canonical todo_write arguments ({todos: [{content,
// status}]}) into the dialect's shape. itemProps are the item properties the
// agent's schema declares (nil when unknown). Malformed canonical arguments
// (todos not an array, items not objects) are carried over as they are,
// under the dialect's list field, so rejection cases stay rejectable.
func (d Dialect) TranslateArgs(args any, itemProps map[string]bool) any {
	m, ok := args.(map[string]any)
	if !ok || d.Name == DialectTodoWrite {
		return args
	}
	out := map[string]any{}
	for k, v := range m {
		if k != "todos" {
			out[k] = v
		}
	}
	list, ok := m["todos"].([]any)
	if !ok {
		if v, present := m["todos"]; present {
			out[d.ListField] = v
		}
		return out
	}
	items := make([]any, 0, len(list))
	for i, it := range list {
		im, ok := it.(map[string]any)
		if !ok {
			items = append(items, it)
			continue
		}
		o := map[string]any{}
		for k, v := range im {
			switch k {
			case "content":
				o[d.ContentField] = v
			case "status":
				o[d.StatusField] = v
			default:
				o[k] = v
			}
		}
		content, _ := im["content"].(string)
		for _, f := range d.Extra {
			if itemProps != nil && !itemProps[f] {
				continue
			}
			if _, set := o[f]; set {
				continue
			}
			switch f {
			case "priority":
				o[f] = "medium"
			case "id":
				o[f] = strconv.Itoa(i + 1)
			case "activeForm":
				o[f] = "Working on: " + content
			}
		}
		items = append(items, o)
	}
	out[d.ListField] = items
	return out
}

// ToolSchema is the part of a tool's JSON Schema the checks read.
type ToolSchema struct {
	Type       any                   `json:"type"`
	Required   []string              `json:"required"`
	Properties map[string]ToolSchema `json:"properties"`
	Items      *ToolSchema           `json:"items"`
	Enum       []any                 `json:"enum"`
}

// ParseToolSchema reads a tool's parameters schema.
func ParseToolSchema(raw json.RawMessage) (ToolSchema, error) {
	var s ToolSchema
	if len(raw) == 0 {
		return s, fmt.Errorf("no parameters schema")
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("parameters schema is not a JSON object: %w", err)
	}
	return s, nil
}

// HasType reports whether the schema allows the JSON type t.
func (s ToolSchema) HasType(t string) bool {
	switch x := s.Type.(type) {
	case string:
		return x == t
	case []any:
		for _, e := range x {
			if e == t {
				return true
			}
		}
	}
	return false
}

// Requires reports whether the schema lists f in required.
func (s ToolSchema) Requires(f string) bool {
	for _, r := range s.Required {
		if r == f {
			return true
		}
	}
	return false
}

// ItemProperties returns the properties the dialect's list items declare
// in an offered schema, or nil when the schema does not say.
func (d Dialect) ItemProperties(raw json.RawMessage) map[string]bool {
	s, err := ParseToolSchema(raw)
	if err != nil {
		return nil
	}
	list, ok := s.Properties[d.ListField]
	if !ok || list.Items == nil || len(list.Items.Properties) == 0 {
		return nil
	}
	out := map[string]bool{}
	for k := range list.Items.Properties {
		out[k] = true
	}
	return out
}

// DialectNames lists the known dialects by name.
func DialectNames() []string {
	var out []string
	for _, d := range Dialects() {
		out = append(out, d.Name)
	}
	return out
}
