package openaichat

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// decodeChunk decodes a streamed chunk as json.Unmarshal(data, wc) does.
// The chunks of a stream are most of what the client reads, and nearly
// all of one shape: a valid document of the fields wireChunk names, each
// once, spelled as named. Those are read here without reflection (a
// string with an escape, a usage object, by encoding/json itself);
// anything else (a key twice, a key spelled in another case, a value of
// another type, a number with a fraction) is left to json.Unmarshal,
// from a zero wireChunk, for its exact result and error.
func decodeChunk(data []byte, wc *wireChunk) error {
	if json.Valid(data) {
		var fast wireChunk
		p := chunkParser{in: data}
		if p.chunk(&fast) {
			*wc = fast
			return nil
		}
	}
	*wc = wireChunk{}
	return json.Unmarshal(data, wc)
}

// chunkParser reads a valid JSON document; each method reports false
// where the document is not of the shape it reads.
type chunkParser struct {
	in []byte
	i  int
}

func (p *chunkParser) space() {
	for p.i < len(p.in) && (p.in[p.i] == ' ' || p.in[p.i] == '\t' || p.in[p.i] == '\n' || p.in[p.i] == '\r') {
		p.i++
	}
}

// open enters the object or array (open is '{' or '[') at p.i; null
// (a value without members) reports false; ok false for another value.
func (p *chunkParser) open(open byte) (entered, ok bool) {
	p.space()
	if p.null() {
		return false, true
	}
	if p.i >= len(p.in) || p.in[p.i] != open {
		return false, false
	}
	p.i++
	return true, true
}

// next steps to the next element of the array or member of the object
// entered (close is ']' or '}'): more false at its end.
func (p *chunkParser) next(close byte) (more bool) {
	p.space()
	if p.in[p.i] == close {
		p.i++
		return false
	}
	if p.in[p.i] == ',' {
		p.i++
		p.space()
	}
	return true
}

// key reads the key of the member at p.i and steps to its value: its
// index in names, -1 for another key; ok false for a key that is not
// plain ASCII without escapes, or that one of names matches only
// ignoring case (encoding/json would take it for that name), or one of
// names twice (seen).
func (p *chunkParser) key(names []string, seen *int) (known int, ok bool) {
	key, ok := p.plainToken()
	if !ok {
		return -1, false
	}
	for _, c := range key {
		if c >= 0x80 {
			return -1, false // encoding/json folds some letters beyond ASCII
		}
	}
	known = -1
	for n, name := range names {
		if string(key) == name {
			known = n
		} else if asciiFold(key, name) {
			return -1, false
		}
	}
	if known >= 0 {
		if *seen&(1<<known) != 0 {
			return -1, false
		}
		*seen |= 1 << known
	}
	p.space()
	p.i++ // :
	p.space()
	return known, true
}

func (p *chunkParser) null() bool {
	if len(p.in)-p.i >= 4 && string(p.in[p.i:p.i+4]) == "null" {
		p.i += 4
		return true
	}
	return false
}

// plainToken reads a string token without escapes: its bytes between
// the quotes.
func (p *chunkParser) plainToken() ([]byte, bool) {
	if p.i >= len(p.in) || p.in[p.i] != '"' {
		return nil, false
	}
	for j := p.i + 1; j < len(p.in); j++ {
		switch p.in[j] {
		case '"':
			b := p.in[p.i+1 : j]
			p.i = j + 1
			return b, true
		case '\\':
			return nil, false
		}
	}
	return nil, false
}

// asciiFold reports whether the ASCII key equals name ignoring case.
func asciiFold(key []byte, name string) bool {
	if len(key) != len(name) {
		return false
	}
	for i, c := range key {
		n := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if 'A' <= n && n <= 'Z' {
			n += 'a' - 'A'
		}
		if c != n {
			return false
		}
	}
	return true
}

// str reads a string field's value into s: null leaves it as it is, a
// string with escapes or bytes that are not UTF-8 is decoded by
// encoding/json.
func (p *chunkParser) str(s *string) bool {
	if p.null() {
		return true
	}
	start := p.i
	if v, ok := p.plainToken(); ok && utf8.Valid(v) {
		*s = string(v)
		return true
	}
	p.i = start
	if p.i >= len(p.in) || p.in[p.i] != '"' {
		return false
	}
	p.skip()
	return json.Unmarshal(p.in[start:p.i], s) == nil
}

// int reads an integer field: digits and a sign only, at most 18 of them.
func (p *chunkParser) int(n *int64) bool {
	if p.null() {
		return true
	}
	start, neg := p.i, false
	if p.in[p.i] == '-' {
		neg = true
		p.i++
	}
	var v int64
	digits := 0
	for p.i < len(p.in) && p.in[p.i] >= '0' && p.in[p.i] <= '9' {
		v = v*10 + int64(p.in[p.i]-'0')
		p.i++
		digits++
	}
	if digits == 0 || digits > 18 || (p.i < len(p.in) && (p.in[p.i] == '.' || p.in[p.i] == 'e' || p.in[p.i] == 'E')) {
		p.i = start
		return false
	}
	if neg {
		v = -v
	}
	*n = v
	return true
}

// raw copies the value at p.i, as json.RawMessage keeps it (null too).
func (p *chunkParser) raw(m *json.RawMessage) bool {
	start := p.i
	p.skip()
	*m = append(json.RawMessage(nil), p.in[start:p.i]...)
	return true
}

// skip steps over the (valid) value at p.i.
func (p *chunkParser) skip() {
	switch p.in[p.i] {
	case '"':
		p.skipString()
	case '{', '[':
		depth := 0
		for {
			switch p.in[p.i] {
			case '"':
				p.skipString()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			p.i++
			if depth == 0 {
				return
			}
		}
	default: // a number or a literal
		for p.i < len(p.in) && strings.IndexByte(",}] \t\n\r", p.in[p.i]) < 0 {
			p.i++
		}
	}
}

func (p *chunkParser) skipString() {
	for p.i++; p.in[p.i] != '"'; p.i++ {
		if p.in[p.i] == '\\' {
			p.i++
		}
	}
	p.i++
}

// members reads the object at p.i (null: one without members), calling
// member with the index in names of each key it knows; it steps over the
// others' values.
func (p *chunkParser) members(names []string, member func(k int) bool) bool {
	seen := 0
	entered, ok := p.open('{')
	for ok && entered && p.next('}') {
		var k int
		if k, ok = p.key(names, &seen); !ok {
			return false
		}
		if k < 0 {
			p.skip()
			continue
		}
		ok = member(k)
	}
	return ok
}

// elements reads the array at p.i (null: none), calling opened once it
// is entered and elem for each element.
func (p *chunkParser) elements(opened func(), elem func() bool) bool {
	entered, ok := p.open('[')
	if !ok || !entered {
		return ok
	}
	opened()
	for p.next(']') {
		if !elem() {
			return false
		}
	}
	return true
}

func (p *chunkParser) chunk(wc *wireChunk) bool {
	names := [...]string{"choices", "usage", "error"}
	if !p.members(names[:], func(k int) bool {
		switch k {
		case 0:
			return p.elements(func() { wc.Choices = emptyOf(wc.Choices) }, func() bool {
				wc.Choices = growZero(wc.Choices)
				return p.choice(&wc.Choices[len(wc.Choices)-1])
			})
		case 1:
			if p.null() {
				return true
			}
			start := p.i
			p.skip()
			u := new(wireUsage)
			if json.Unmarshal(p.in[start:p.i], u) != nil {
				return false
			}
			wc.Usage = u
			return true
		default:
			return p.raw(&wc.Error)
		}
	}) {
		return false
	}
	p.space()
	return p.i == len(p.in)
}

func (p *chunkParser) choice(ch *wireChoice) bool {
	names := [...]string{"index", "delta", "finish_reason"}
	return p.members(names[:], func(k int) bool {
		switch k {
		case 0:
			return p.int(&ch.Index)
		case 1:
			return p.delta(&ch.Delta)
		default:
			return p.str(&ch.FinishReason)
		}
	})
}

func (p *chunkParser) delta(d *wireDelta) bool {
	names := [...]string{"content", "reasoning_content", "tool_calls"}
	return p.members(names[:], func(k int) bool {
		switch k {
		case 0:
			return p.str(&d.Content)
		case 1:
			return p.raw(&d.ReasoningContent)
		default:
			return p.elements(func() { d.ToolCalls = emptyOf(d.ToolCalls) }, func() bool {
				d.ToolCalls = growZero(d.ToolCalls)
				return p.toolCall(&d.ToolCalls[len(d.ToolCalls)-1])
			})
		}
	})
}

func (p *chunkParser) toolCall(tc *wireToolCall) bool {
	names := [...]string{"index", "id", "function"}
	return p.members(names[:], func(k int) bool {
		switch k {
		case 0:
			return p.int(&tc.Index)
		case 1:
			return p.str(&tc.ID)
		default:
			fnames := [...]string{"name", "arguments"}
			return p.members(fnames[:], func(k int) bool {
				if k == 0 {
					return p.str(&tc.Function.Name)
				}
				return p.str(&tc.Function.Arguments)
			})
		}
	})
}

// growZero appends a zero element to s.
func growZero[T any](s []T) []T {
	var zero T
	return append(s, zero)
}

// emptyOf is an empty slice that is not nil, as encoding/json decodes [].
func emptyOf[T any](s []T) []T {
	if s == nil {
		return make([]T, 0)
	}
	return s[:0]
}
