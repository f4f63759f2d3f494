package yamlx

import (
	"bytes"
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"
)

// MinAliasBudget is the number of nodes aliases may add to any document, and
// AliasFactor times the number of nodes the document itself holds is the
// budget of a larger one: a document may grow by aliasing to at most
// max(MinAliasBudget, AliasFactor×own nodes) extra nodes. Anchors and
// aliases used to share a list between turns stay far below it; nested
// aliases that double at every level exceed it within a few levels.
const (
	MinAliasBudget = 10_000
	AliasFactor    = 1
)

// ErrAliasing is the error (wrapped by an *AliasError) of a document with
// excessive or cyclic aliasing.
var ErrAliasing = errors.New("excessive aliasing")

// AliasError is a refused document: Line is the line of the alias (or of
// the node) where the expansion went over budget.
type AliasError struct {
	Line   int
	Reason string
}

func (e *AliasError) Error() string {
	return fmt.Sprintf("line %d: %s: %s", e.Line, ErrAliasing, e.Reason)
}

func (e *AliasError) Unwrap() error { return ErrAliasing }

// Parse parses the first document of data into a node tree and checks its
// aliasing (see Check).
func Parse(data []byte) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if err := Check(&doc); err != nil {
		return nil, err
	}
	return &doc, nil
}

// Unmarshal decodes the first document of data into v after checking its
// aliasing. With strict set, a mapping key that v has no field for is an
// error (yaml.v3's KnownFields).
//
// A document without a '*' has no alias (YAML writes every one as *name),
// so nothing in it can expand: it is decoded at once, parsed once, not
// twice.
func Unmarshal(data []byte, v any, strict bool) error {
	if bytes.IndexByte(data, '*') >= 0 {
		if _, err := Parse(data); err != nil {
			return err
		}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(strict)
	if err := dec.Decode(v); err != nil {
		return err
	}
	return nil
}

// Check refuses a node tree whose aliases would expand it by more than the
// budget (see MinAliasBudget), or whose alias refers to a node that
// contains it. The error names the line of the offending alias. Check
// visits each node once, whatever the aliasing.
func Check(root *yaml.Node) error {
	c := &checker{size: map[*yaml.Node]int64{}, open: map[*yaml.Node]bool{}}
	own := c.count(root)
	budget := int64(MinAliasBudget)
	if b := AliasFactor * own; b > budget {
		budget = b
	}
	c.budget = own + budget
	_, err := c.expanded(root)
	return err
}

type checker struct {
	budget int64
	// size memoises the expanded size of every node already measured.
	size map[*yaml.Node]int64
	// open holds the nodes being measured, to catch self-containing aliases.
	open map[*yaml.Node]bool
}

// count is the number of nodes of the tree as written (aliases count one).
func (c *checker) count(n *yaml.Node) int64 {
	if n == nil {
		return 0
	}
	total := int64(1)
	if n.Kind != yaml.AliasNode {
		for _, ch := range n.Content {
			total += c.count(ch)
		}
	}
	return total
}

// expanded is the number of nodes of n with every alias replaced by the
// node it names.
func (c *checker) expanded(n *yaml.Node) (int64, error) {
	if n == nil {
		return 0, nil
	}
	if s, ok := c.size[n]; ok {
		return s, nil
	}
	if n.Kind == yaml.AliasNode {
		if n.Alias == nil {
			return 1, nil
		}
		if c.open[n.Alias] {
			return 0, &AliasError{Line: n.Line, Reason: fmt.Sprintf("alias *%s refers to a node that contains it", n.Value)}
		}
		s, err := c.expanded(n.Alias)
		if err != nil {
			return 0, err
		}
		c.size[n] = s
		return s, nil
	}
	c.open[n] = true
	defer delete(c.open, n)
	total := int64(1)
	for _, ch := range n.Content {
		s, err := c.expanded(ch)
		if err != nil {
			return 0, err
		}
		total += s
		if total > c.budget {
			line := n.Line
			if ch.Kind == yaml.AliasNode {
				line = ch.Line
			}
			return 0, &AliasError{Line: line, Reason: fmt.Sprintf("the aliases expand the document beyond %d nodes", c.budget)}
		}
	}
	c.size[n] = total
	return total, nil
}
