package yamlx_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/internal/testutil"
	"github.com/todoharness/todoharness/internal/yamlx"
)

func TestParseRefusesNestedAliases(t *testing.T) {
	doc := "config:\n" + testutil.AliasBomb("  ")
	_, err := yamlx.Parse([]byte(doc))
	var ae *yamlx.AliasError
	if !errors.As(err, &ae) || !errors.Is(err, yamlx.ErrAliasing) {
		t.Fatalf("error %v, want an *AliasError wrapping ErrAliasing", err)
	}
	if ae.Line < 2 || ae.Line > 10 {
		t.Errorf("line %d, want the line of one of the bomb's anchors (2-10)", ae.Line)
	}
	var v map[string]any
	if err := yamlx.Unmarshal([]byte(doc), &v, false); !errors.Is(err, yamlx.ErrAliasing) {
		t.Errorf("Unmarshal: error %v, want ErrAliasing before decoding", err)
	}
}

func TestParseRefusesSelfContainingAlias(t *testing.T) {
	_, err := yamlx.Parse([]byte("a: &x [1, *x]\n"))
	if !errors.Is(err, yamlx.ErrAliasing) || !strings.Contains(err.Error(), "line 1") || !strings.Contains(err.Error(), "contains it") {
		t.Fatalf("error %v, want a self-reference refused on line 1", err)
	}
}

func TestParseAcceptsOrdinaryDocuments(t *testing.T) {
	// Anchors shared a few times stay within budget.
	shared := "base: &b {todos: [{content: a, status: pending}, {content: b, status: done}]}\nturns: [*b, *b, *b, *b, *b, *b, *b, *b]\n"
	if _, err := yamlx.Parse([]byte(shared)); err != nil {
		t.Errorf("shared anchor: %v", err)
	}
	// A large document without aliases is not limited at all.
	var b strings.Builder
	for i := 0; i < 30_000; i++ {
		fmt.Fprintf(&b, "- {id: %d, name: n%d}\n", i, i)
	}
	if _, err := yamlx.Parse([]byte(b.String())); err != nil {
		t.Errorf("large document: %v", err)
	}
	// Aliases may double a large document.
	var d strings.Builder
	d.WriteString("a: &a\n")
	for i := 0; i < 20_000; i++ {
		fmt.Fprintf(&d, "  - %d\n", i)
	}
	d.WriteString("b: *a\n")
	if _, err := yamlx.Parse([]byte(d.String())); err != nil {
		t.Errorf("document doubled by one alias: %v", err)
	}
}

func TestUnmarshalStrict(t *testing.T) {
	var v struct {
		A int `yaml:"a"`
	}
	if err := yamlx.Unmarshal([]byte("a: 1\nb: 2\n"), &v, true); err == nil || !strings.Contains(err.Error(), "field b not found") {
		t.Errorf("strict: error %v, want the unknown field named", err)
	}
	if err := yamlx.Unmarshal([]byte("a: 1\nb: 2\n"), &v, false); err != nil || v.A != 1 {
		t.Errorf("lenient: %v %+v", err, v)
	}
}

// A document with no '*' cannot alias, so Unmarshal decodes it without the
// separate check; one with a '*' that is no alias decodes the same; either
// way a syntax error names its line.
func TestUnmarshalWithAndWithoutStars(t *testing.T) {
	var v struct {
		A string `yaml:"a"`
	}
	for _, doc := range []string{"a: plain\n", "a: \"2 * 3\"\n"} {
		if err := yamlx.Unmarshal([]byte(doc), &v, true); err != nil {
			t.Errorf("%q: %v", doc, err)
		}
	}
	if v.A != "2 * 3" {
		t.Errorf("decoded %q, want the quoted star kept", v.A)
	}
	for _, doc := range []string{"a: [1, 2\nb: 3\n"} {
		if err := yamlx.Unmarshal([]byte(doc), &v, true); err == nil || !strings.Contains(err.Error(), "line ") {
			t.Errorf("%q: error %v, want the syntax error with its line", doc, err)
		}
	}
}
