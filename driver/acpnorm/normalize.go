package acpnorm

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/todoharness/todoharness/internal/jsonx"
	"github.com/todoharness/todoharness/internal/textcut"
)

// Tokens the normaliser writes (the original kit's).
const (
	TokenSessionID  = "{{sessionId}}"
	TokenCwd        = "{{cwd}}"
	TokenMessageID  = "{{messageId}}"
	TokenUsedTokens = "{{usedTokens}}"
)

// reUUID matches a UUID in any version, as the kit's scrubber does.
var reUUID = regexp.MustCompile(`(?i)[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)

// Normalizer rewrites an agent's raw stdout (one JSON-RPC message per line)
// as the original implementation's snapshot kit does, so that it compares
// with the kit's expected files.
type Normalizer struct {
	// Cwd is the run's working directory; CwdAliases other spellings of it
	// (the path with symlinks resolved). Each, and its /private twin on
	// macOS, becomes {{cwd}}.
	Cwd        string
	CwdAliases []string
	// SessionIDs are the session ids the run issued (those in "sessionId"
	// fields are learnt too); all become {{sessionId}}.
	SessionIDs []string
}

// Normalize returns the normalised transcript, one compact JSON object per
// line in wire key order, ending with a newline. A line that is not JSON is
// an error naming it (the kit's stdout-purity check).
func (n Normalizer) Normalize(lines [][]byte) ([]byte, error) {
	nodes := make([]*node, 0, len(lines))
	ids := append([]string(nil), n.SessionIDs...)
	for i, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		nd, err := parseNode(line)
		if err != nil {
			return nil, fmt.Errorf("stdout line %d is not JSON (%w): %q", i+1, err, textcut.Truncate(string(line), 120))
		}
		nd.walk("", func(key string, v *node) {
			if key == "sessionId" && v.kind == kindString && v.text != "" {
				ids = append(ids, v.text)
			}
		})
		nodes = append(nodes, nd)
	}
	var pairs []string
	for _, c := range n.cwdSpellings() {
		pairs = append(pairs, c, TokenCwd)
	}
	sort.SliceStable(ids, func(i, j int) bool { return len(ids[i]) > len(ids[j]) })
	for _, id := range ids {
		pairs = append(pairs, id, TokenSessionID)
	}
	repl := strings.NewReplacer(pairs...)
	scrub := func(s string) string {
		s = repl.Replace(s)
		s = strings.ReplaceAll(s, "/private"+TokenCwd, TokenCwd)
		return reUUID.ReplaceAllString(s, TokenSessionID)
	}
	rpc := map[string]int{}
	var out bytes.Buffer
	for _, nd := range nodes {
		if nd.kind == kindObject {
			if v := nd.get("id"); v != nil && v.kind != kindNull {
				key := v.kind.String() + v.text
				num, ok := rpc[key]
				if !ok {
					num = len(rpc) + 1
					rpc[key] = num
				}
				*v = node{kind: kindNumber, text: strconv.Itoa(num)}
			}
		}
		nd.scrub("", scrub)
		nd.encode(&out, false)
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

// cwdSpellings lists the cwd's spellings, longest first: as given, its
// aliases, and the /private twins of both (macOS).
func (n Normalizer) cwdSpellings() []string {
	seen := map[string]bool{}
	var out []string
	add := func(s string) {
		if s != "" && s != "/" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, c := range append([]string{n.Cwd}, n.CwdAliases...) {
		if c == "" {
			continue
		}
		add(filepath.Clean(c))
		if rest, ok := strings.CutPrefix(c, "/private/"); ok {
			add("/" + rest)
		} else if strings.HasPrefix(c, "/") {
			add("/private" + c)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return len(out[i]) > len(out[j]) })
	return out
}

// Canonical rewrites a transcript (one JSON value per line) with object
// keys sorted, so that two transcripts that differ only in key order (JSON
// encoders differ, and it means nothing on the wire) compare equal. Blank
// lines are dropped; a line that is not JSON is an error naming it.
func Canonical(transcript []byte, name string) ([]string, error) {
	var out []string
	for i, line := range bytes.Split(transcript, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		nd, err := parseNode(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: not JSON: %w", name, i+1, err)
		}
		var b bytes.Buffer
		nd.encode(&b, true)
		out = append(out, b.String())
	}
	return out, nil
}

// node is a JSON value that keeps its object keys in order.
type node struct {
	kind  nodeKind
	text  string // string value, number text, "true"/"false"
	keys  []string
	items []*node // object values (by keys) or array items
}

type nodeKind int

const (
	kindNull nodeKind = iota
	kindBool
	kindNumber
	kindString
	kindArray
	kindObject
)

func (k nodeKind) String() string { return strconv.Itoa(int(k)) + ":" }

func parseNode(line []byte) (*node, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	nd, err := decodeNode(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("more than one JSON value on the line")
	}
	return nd, nil
}

func decodeNode(dec *json.Decoder) (*node, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			nd := &node{kind: kindObject}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k, _ := kt.(string)
				v, err := decodeNode(dec)
				if err != nil {
					return nil, err
				}
				nd.keys = append(nd.keys, k)
				nd.items = append(nd.items, v)
			}
			_, err := dec.Token() // }
			return nd, err
		case '[':
			nd := &node{kind: kindArray}
			for dec.More() {
				v, err := decodeNode(dec)
				if err != nil {
					return nil, err
				}
				nd.items = append(nd.items, v)
			}
			_, err := dec.Token() // ]
			return nd, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	case string:
		return &node{kind: kindString, text: t}, nil
	case json.Number:
		return &node{kind: kindNumber, text: t.String()}, nil
	case bool:
		return &node{kind: kindBool, text: strconv.FormatBool(t)}, nil
	case nil:
		return &node{kind: kindNull}, nil
	}
	return nil, fmt.Errorf("unexpected token %v", tok)
}

// get returns an object's member, nil when absent.
func (n *node) get(key string) *node {
	for i, k := range n.keys {
		if k == key {
			return n.items[i]
		}
	}
	return nil
}

// walk calls f on every value with the key it sits under ("" in arrays).
func (n *node) walk(key string, f func(key string, v *node)) {
	f(key, n)
	for i, v := range n.items {
		k := ""
		if n.kind == kindObject {
			k = n.keys[i]
		}
		v.walk(k, f)
	}
}

// scrub applies the kit's string scrubbing below n: messageId values and
// usage_update's used count become tokens, every other string goes
// through f.
func (n *node) scrub(key string, f func(string) string) {
	switch n.kind {
	case kindString:
		if key == "messageId" {
			n.text = TokenMessageID
			return
		}
		n.text = f(n.text)
	case kindArray:
		for _, v := range n.items {
			v.scrub("", f)
		}
	case kindObject:
		for i, v := range n.items {
			v.scrub(n.keys[i], f)
		}
		if su := n.get("sessionUpdate"); su != nil && su.kind == kindString && su.text == "usage_update" {
			if used := n.get("used"); used != nil && used.kind == kindNumber {
				*used = node{kind: kindString, text: TokenUsedTokens}
			}
		}
	}
}

// encode writes n as compact JSON without HTML escaping; sorted sorts
// object keys.
func (n *node) encode(b *bytes.Buffer, sorted bool) {
	switch n.kind {
	case kindNull:
		b.WriteString("null")
	case kindBool, kindNumber:
		b.WriteString(n.text)
	case kindString:
		writeString(b, n.text)
	case kindArray:
		b.WriteByte('[')
		for i, v := range n.items {
			if i > 0 {
				b.WriteByte(',')
			}
			v.encode(b, sorted)
		}
		b.WriteByte(']')
	case kindObject:
		order := make([]int, len(n.keys))
		for i := range order {
			order[i] = i
		}
		if sorted {
			sort.SliceStable(order, func(i, j int) bool { return n.keys[order[i]] < n.keys[order[j]] })
		}
		b.WriteByte('{')
		for i, idx := range order {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, n.keys[idx])
			b.WriteByte(':')
			n.items[idx].encode(b, sorted)
		}
		b.WriteByte('}')
	}
}

func writeString(b *bytes.Buffer, s string) {
	_ = jsonx.Write(b, s) // a string always encodes
}
