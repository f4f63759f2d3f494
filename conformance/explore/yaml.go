package explore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/todoharness/todoharness/conformance"
	"github.com/todoharness/todoharness/internal/termtext"
	"github.com/todoharness/todoharness/mockmodel"
)

// CaseYAML writes c as a case.yaml that conformance.LoadCase reads back to
// the same case: comment lines first (header, each line prefixed "# "),
// then title, checks, steps and script. Strings are double-quoted with
// YAML escapes for everything invisible or ambiguous (control characters,
// bidi and zero-width marks, unusual spaces, the byte order mark), so the
// file shows exactly what the model sent.
//
// It is written by hand, not with gopkg.in/yaml.v3's Node encoding, which
// cannot give the same safety: yaml.v3 (v3.0.1) turns its emitter's
// unicode mode on and has no option to turn it off, so a double-quoted
// scalar keeps U+202E (right-to-left override), U+200B (zero-width space)
// and the other marks invisible rune escapes here as raw characters, and
// it refuses a string that is not valid UTF-8 as a !!str ("cannot marshal
// invalid UTF-8 data as !!str") where quote writes U+FFFD, escaped.
// TestCaseYAMLEscapesHostileStrings pins what quote must do.
func CaseYAML(c *conformance.Case, header []string) []byte {
	var b bytes.Buffer
	for _, h := range header {
		// A header quotes the agent's words (the reason it failed): a
		// control character would make the file unreadable YAML, a line
		// break would end the comment, a bidi control would reorder it.
		fmt.Fprintf(&b, "# %s\n", termtext.Visible(h))
	}
	fmt.Fprintf(&b, "title: %s\n", quote(c.Title))
	fmt.Fprintf(&b, "checks: [%s]\n", strings.Join(c.Checks, ", "))
	b.WriteString("steps:\n")
	for _, s := range c.Steps {
		fmt.Fprintf(&b, "  - op: %s\n", s.Op)
		if s.Text != "" {
			fmt.Fprintf(&b, "    text: %s\n", quote(s.Text))
		}
		if s.Cancel {
			b.WriteString("    cancel: true\n")
		}
	}
	b.WriteString("script:\n")
	for _, t := range c.Script {
		writeTurn(&b, t)
	}
	return b.Bytes()
}

func writeTurn(b *bytes.Buffer, t mockmodel.Turn) {
	lead := "  - "
	field := func(format string, args ...any) {
		b.WriteString(lead)
		fmt.Fprintf(b, format, args...)
		b.WriteByte('\n')
		lead = "    "
	}
	if t.Reasoning != "" {
		field("reasoning: %s", quote(t.Reasoning))
	}
	if t.Text != "" {
		field("text: %s", quote(t.Text))
	}
	if t.ChunkSize > 0 {
		field("chunkSize: %d", t.ChunkSize)
	}
	if len(t.ToolCalls) == 0 {
		if lead == "  - " {
			field("text: %s", quote(""))
		}
		return
	}
	field("toolCalls:")
	for _, tc := range t.ToolCalls {
		fmt.Fprintf(b, "      - name: %s\n", quote(tc.Name))
		if tc.ID != "" {
			fmt.Fprintf(b, "        id: %s\n", quote(tc.ID))
		}
		if tc.Reject {
			b.WriteString("        reject: true\n")
		}
		m, ok := tc.Arguments.(map[string]any)
		if !ok {
			fmt.Fprintf(b, "        arguments: %s\n", flow(tc.Arguments))
			continue
		}
		b.WriteString("        arguments:\n")
		for _, k := range sortedKeys(m) {
			v := m[k]
			if list, ok := v.([]any); ok && len(list) > 0 {
				fmt.Fprintf(b, "          %s:\n", quote(k))
				for _, it := range list {
					fmt.Fprintf(b, "            - %s\n", flow(it))
				}
				continue
			}
			fmt.Fprintf(b, "          %s: %s\n", quote(k), flow(v))
		}
	}
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// flow writes a JSON value in YAML flow style.
func flow(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return quote(x)
	case bool:
		return strconv.FormatBool(x)
	case json.Number:
		return x.String()
	case int:
		return strconv.Itoa(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = flow(e)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	case map[string]any:
		parts := make([]string, 0, len(x))
		for _, k := range sortedKeys(x) {
			parts = append(parts, quote(k)+": "+flow(x[k]))
		}
		return "{" + strings.Join(parts, ", ") + "}"
	}
	raw, _ := json.Marshal(v)
	return string(raw)
}

// quote is a YAML double-quoted scalar.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || (r >= 0x7f && r <= 0xa0):
			fmt.Fprintf(&b, `\x%02X`, r)
		case invisible(r):
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// invisible are the runes a reader could not see or that reorder text:
// unusual spaces, zero-width and bidi marks, separators, the BOM and the
// specials; and a rune that is not valid (utf8.RuneError) as itself.
func invisible(r rune) bool {
	switch {
	case r >= 0x2000 && r <= 0x200f, r >= 0x2028 && r <= 0x202f, r >= 0x2060 && r <= 0x206f,
		r == 0x3000, r == 0xfeff, r >= 0xfff0 && r <= 0xffff, r == 0xad, r >= 0xd800 && r <= 0xdfff:
		return true
	}
	return false
}
