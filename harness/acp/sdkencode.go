package acp

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	sdk "github.com/coder/acp-go-sdk"
)

// encodeSDKUpdate encodes a tool_call, tool_call_update or plan update
// byte for byte as the SDK's SessionUpdate.MarshalJSON does, without its
// detour: it encodes the variant, decodes that into a map[string]any,
// sets sessionUpdate and encodes the map (keys sorted, numbers as
// float64, strings escaped for HTML). canonicalJSON does the last two
// steps on the variant's JSON directly. ok is false for any other update,
// and wherever canonicalJSON is unsure: the SDK then encodes it.
func encodeSDKUpdate(u sdk.SessionUpdate) (raw json.RawMessage, ok bool) {
	if u.UserMessageChunk != nil || u.AgentMessageChunk != nil || u.AgentThoughtChunk != nil {
		return nil, false
	}
	var variant any
	var kind string
	switch {
	case u.ToolCall != nil:
		variant, kind = *u.ToolCall, "tool_call"
	case u.ToolCallUpdate != nil:
		variant, kind = *u.ToolCallUpdate, "tool_call_update"
	case u.Plan != nil:
		variant, kind = *u.Plan, "plan"
	default:
		return nil, false
	}
	b, err := json.Marshal(variant)
	if err != nil {
		return nil, false
	}
	var out bytes.Buffer
	out.Grow(len(b) + 32)
	if !canonicalJSON(&out, b, kind) {
		return nil, false
	}
	return out.Bytes(), true
}

// canonicalJSON writes the JSON document doc as decoding it into an any
// and encoding that with json.Marshal writes it, the top-level object's
// "sessionUpdate" set to kind ("": doc as it is). Objects get their keys
// sorted (the last of a key written twice wins), a string or number that
// json.Marshal might write otherwise is decoded and encoded by
// encoding/json itself; the rest is copied. It reports false, having
// written part of it, where doc is no JSON or encoding/json fails on it:
// the caller then lets the SDK say so.
func canonicalJSON(out *bytes.Buffer, doc []byte, kind string) bool {
	p := canonParser{in: doc}
	p.space()
	if !p.value(out, kind) {
		return false
	}
	p.space()
	return p.i == len(p.in)
}

type canonParser struct {
	in      []byte
	i       int
	members []canonMember
	scratch []byte
}

func (p *canonParser) space() {
	for p.i < len(p.in) {
		switch p.in[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// value copies the value at p.i; kind is for the top-level object only.
func (p *canonParser) value(out *bytes.Buffer, kind string) bool {
	if p.i >= len(p.in) {
		return false
	}
	switch c := p.in[p.i]; {
	case c == '{':
		return p.object(out, kind)
	case kind != "":
		return false
	case c == '[':
		return p.array(out)
	case c == '"':
		tok, plain, ok := p.stringToken()
		if !ok {
			return false
		}
		if plain {
			out.Write(tok)
			return true
		}
		return reencode[string](out, tok)
	case c == '-' || (c >= '0' && c <= '9'):
		return p.number(out)
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if hasPrefix(p.in[p.i:], lit) {
				out.WriteString(lit)
				p.i += len(lit)
				return true
			}
		}
		return false
	}
}

// stringToken reads a string token, quotes included; plain says
// json.Marshal writes its value as the token is: printable ASCII but for a
// quote, a backslash, <, > and &.
func (p *canonParser) stringToken() (tok []byte, plain, ok bool) {
	start := p.i
	plain = true
	for j := start + 1; j < len(p.in); j++ {
		switch c := p.in[j]; {
		case c == '"':
			p.i = j + 1
			return p.in[start:p.i], plain, true
		case c == '\\':
			plain = false
			j++ // the escaped byte (a \u's hex digits are plain)
		case c < 0x20 || c > 0x7e || c == '<' || c == '>' || c == '&':
			plain = false
		}
	}
	return nil, false, false
}

// reencode decodes the token tok as a T and writes it as json.Marshal
// writes a T.
func reencode[T any](out *bytes.Buffer, tok []byte) bool {
	var v T
	if json.Unmarshal(tok, &v) != nil {
		return false
	}
	b, err := json.Marshal(v)
	if err != nil {
		return false
	}
	out.Write(b)
	return true
}

// number copies an integer of 1 to 15 digits without a leading zero,
// which a float64 holds and json.Marshal writes as it is; any other
// number is decoded as the float64 an any holds and encoded again.
func (p *canonParser) number(out *bytes.Buffer) bool {
	start, j := p.i, p.i
	if p.in[j] == '-' {
		j++
	}
	digits := j
	for j < len(p.in) && p.in[j] >= '0' && p.in[j] <= '9' {
		j++
	}
	n := j - digits
	short := n >= 1 && n <= 15 && p.in[digits] != '0'
	for j < len(p.in) && strings.IndexByte("0123456789.eE+-", p.in[j]) >= 0 {
		short = false
		j++
	}
	p.i = j
	if short {
		out.Write(p.in[start:j])
		return true
	}
	return reencode[any](out, p.in[start:j])
}

type canonMember struct {
	key        []byte // decoded
	start, end int    // the value's bytes in the output
}

// object writes the object at p.i: its members' values first, in their
// order, after what out holds, then the whole object again over them,
// its keys sorted (p.scratch holds the values meanwhile; p.members is a
// stack of the open objects' members).
func (p *canonParser) object(out *bytes.Buffer, kind string) bool {
	p.i++ // {
	base, region := len(p.members), out.Len()
	defer func() { p.members = p.members[:base] }()
	seenKind := false
	p.space()
	if p.i < len(p.in) && p.in[p.i] == '}' {
		p.i++
	} else {
		for {
			p.space()
			if p.i >= len(p.in) || p.in[p.i] != '"' {
				return false
			}
			tok, plain, ok := p.stringToken()
			if !ok {
				return false
			}
			key := tok[1 : len(tok)-1]
			if !plain {
				var k string
				if json.Unmarshal(tok, &k) != nil {
					return false
				}
				key = []byte(k)
			}
			p.space()
			if p.i >= len(p.in) || p.in[p.i] != ':' {
				return false
			}
			p.i++
			p.space()
			start := out.Len()
			if kind != "" && string(key) == "sessionUpdate" {
				// The SDK sets it over whatever the variant wrote.
				seenKind = true
				if !p.value(out, "") {
					return false
				}
				out.Truncate(start)
				out.WriteString(`"` + kind + `"`)
			} else if !p.value(out, "") {
				return false
			}
			m := canonMember{key: key, start: start, end: out.Len()}
			if i := slices.IndexFunc(p.members[base:], func(o canonMember) bool { return bytes.Equal(o.key, key) }); i >= 0 {
				p.members[base+i] = m // the last one wins, as in a map
			} else {
				p.members = append(p.members, m)
			}
			p.space()
			if p.i >= len(p.in) {
				return false
			}
			if p.in[p.i] == '}' {
				p.i++
				break
			}
			if p.in[p.i] != ',' {
				return false
			}
			p.i++
		}
	}
	if kind != "" && !seenKind {
		start := out.Len()
		out.WriteString(`"` + kind + `"`)
		p.members = append(p.members, canonMember{key: []byte("sessionUpdate"), start: start, end: out.Len()})
	}
	members := p.members[base:]
	slices.SortFunc(members, func(a, b canonMember) int { return bytes.Compare(a.key, b.key) })
	p.scratch = append(p.scratch[:0], out.Bytes()[region:]...)
	out.Truncate(region)
	out.WriteByte('{')
	for i, m := range members {
		if i > 0 {
			out.WriteByte(',')
		}
		if !writeKey(out, m.key) {
			return false
		}
		out.WriteByte(':')
		out.Write(p.scratch[m.start-region : m.end-region])
	}
	out.WriteByte('}')
	return true
}

// writeKey writes key as json.Marshal writes a string.
func writeKey(out *bytes.Buffer, key []byte) bool {
	for _, c := range key {
		if c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, err := json.Marshal(string(key))
			out.Write(b)
			return err == nil
		}
	}
	out.WriteByte('"')
	out.Write(key)
	out.WriteByte('"')
	return true
}

func (p *canonParser) array(out *bytes.Buffer) bool {
	p.i++ // [
	out.WriteByte('[')
	p.space()
	if p.i < len(p.in) && p.in[p.i] == ']' {
		p.i++
		out.WriteByte(']')
		return true
	}
	for first := true; ; first = false {
		if !first {
			out.WriteByte(',')
		}
		p.space()
		if !p.value(out, "") {
			return false
		}
		p.space()
		if p.i >= len(p.in) {
			return false
		}
		if p.in[p.i] == ']' {
			p.i++
			out.WriteByte(']')
			return true
		}
		if p.in[p.i] != ',' {
			return false
		}
		p.i++
	}
}
