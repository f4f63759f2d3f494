package scrub

import (
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/todoharness/todoharness/internal/jsonx"
)

// Known secret values are found in every form a client, a server or a
// model may write them in (forms.go owns the list: plain, base64, base32,
// hex, each JSON-escaped or URL-encoded, and split across consecutive
// stream deltas; see redactPieces and the per-path joining of sseData).
// An encoded secret is removed with the whole token it is part of.

// decoded is a text decoded from an original, with the original byte offset
// of every decoded byte: at[i] is where decoded byte i starts in the
// original, at[len(s)] is len(original).
type decoded struct {
	s  string
	at []int
}

func identity(s string) decoded {
	at := make([]int, len(s)+1)
	for i := range at {
		at[i] = i
	}
	return decoded{s, at}
}

// jsonUnescape decodes JSON string escapes (\uXXXX, \/, \", \\, \n, ...)
// wherever they appear in s; anything else is kept as it is.
func jsonUnescape(s string) decoded {
	var b strings.Builder
	at := make([]int, 0, len(s)+1)
	put := func(str string, from int) {
		for k := 0; k < len(str); k++ {
			at = append(at, from)
		}
		b.WriteString(str)
	}
	for i := 0; i < len(s); {
		if s[i] != '\\' || i+1 >= len(s) {
			put(s[i:i+1], i)
			i++
			continue
		}
		switch c := s[i+1]; c {
		case '/', '"', '\\':
			put(string(c), i)
			i += 2
		case 'n', 't', 'r', 'b', 'f':
			put(map[byte]string{'n': "\n", 't': "\t", 'r': "\r", 'b': "\b", 'f': "\f"}[c], i)
			i += 2
		case 'u':
			if i+6 <= len(s) {
				if n, err := strconv.ParseUint(s[i+2:i+6], 16, 32); err == nil {
					var buf [utf8.UTFMax]byte
					w := utf8.EncodeRune(buf[:], rune(n))
					put(string(buf[:w]), i)
					i += 6
					continue
				}
			}
			put(s[i:i+1], i)
			i++
		default:
			put(s[i:i+1], i)
			i++
		}
	}
	at = append(at, len(s))
	return decoded{b.String(), at}
}

// percentDecode decodes %XX escapes wherever they appear in s.
func percentDecode(s string) decoded {
	var b strings.Builder
	at := make([]int, 0, len(s)+1)
	for i := 0; i < len(s); {
		if s[i] == '%' && i+3 <= len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(n))
				at = append(at, i)
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
		at = append(at, i)
		i++
	}
	at = append(at, len(s))
	return decoded{b.String(), at}
}

// then decodes d's text further with next, keeping offsets into the
// original.
func (d decoded) then(next func(string) decoded) decoded {
	n := next(d.s)
	at := make([]int, len(n.at))
	for i, x := range n.at {
		at[i] = d.at[x]
	}
	return decoded{n.s, at}
}

// span is a byte range [a, b) of an original text.
type span struct{ a, b int }

// secretSpans returns the ranges of text that hold a secret in any form,
// merged and sorted.
func secretSpans(text string, secrets []string) []span {
	if len(secrets) == 0 || text == "" {
		return nil
	}
	// The needles once for every decoding (they are the same for each).
	type needle struct {
		s   string
		enc keyEncoding
	}
	var needles []needle
	for _, sec := range secrets {
		for _, enc := range keyEncodings {
			for _, nd := range enc.needles(sec) {
				needles = append(needles, needle{nd, enc})
			}
		}
	}
	var out []span
	for _, d := range decodings(text) {
		for _, nd := range needles {
			for from := 0; ; {
				i := strings.Index(d.s[from:], nd.s)
				if i < 0 {
					break
				}
				i += from
				a, b := widen(d.s, i, i+len(nd.s), nd.enc)
				out = append(out, span{d.at[a], d.at[b]})
				from = i + 1
			}
		}
	}
	return mergeSpans(out)
}

// widen extends the match [a, b) of an encoded secret in s to the whole
// encoded token around it (and its padding), so that no character of the
// token is left behind.
func widen(s string, a, b int, enc keyEncoding) (int, int) {
	if enc.token == nil {
		return a, b
	}
	for a > 0 && enc.token(s[a-1]) {
		a--
	}
	for b < len(s) && enc.token(s[b]) {
		b++
	}
	for enc.pad != 0 && b < len(s) && s[b] == enc.pad {
		b++
	}
	return a, b
}

func mergeSpans(in []span) []span {
	if len(in) == 0 {
		return nil
	}
	sort.Slice(in, func(i, j int) bool { return in[i].a < in[j].a })
	out := []span{in[0]}
	for _, s := range in[1:] {
		last := &out[len(out)-1]
		if s.a <= last.b {
			last.b = max(last.b, s.b)
			continue
		}
		out = append(out, s)
	}
	return out
}

// redactPieces replaces every secret in the text the pieces make together
// (consecutive stream deltas of one field) by Redacted: the piece where a
// secret starts gets the marker, the pieces it continues into lose their
// part of it. It reports whether anything changed.
func redactPieces(pieces []string, secrets []string) ([]string, bool) {
	joined := strings.Join(pieces, "")
	spans := secretSpans(joined, secrets)
	if len(spans) == 0 {
		return pieces, false
	}
	out := make([]string, len(pieces))
	start := 0
	for i, p := range pieces {
		end := start + len(p)
		var b strings.Builder
		pos := start
		for _, s := range spans {
			if s.b <= start || s.a >= end {
				continue
			}
			if s.a > pos {
				b.WriteString(joined[pos:s.a])
			}
			if s.a >= start {
				b.WriteString(Redacted)
			}
			pos = min(s.b, end)
		}
		if pos < end {
			b.WriteString(joined[pos:end])
		}
		out[i] = b.String()
		start = end
	}
	return out, true
}

// jsonLeaf is a string value inside a decoded JSON document, with the path
// that names its field (array indexes included) and a setter.
type jsonLeaf struct {
	path string
	get  func() string
	set  func(string)
}

// leaves lists the string values of v in document order (object keys
// sorted).
func leaves(v any, path string, out *[]jsonLeaf) {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			k := k
			if s, ok := t[k].(string); ok {
				_ = s
				*out = append(*out, jsonLeaf{path: path + "." + k,
					get: func() string { return t[k].(string) }, set: func(x string) { t[k] = x }})
				continue
			}
			leaves(t[k], path+"."+k, out)
		}
	case []any:
		for i := range t {
			i := i
			if _, ok := t[i].(string); ok {
				*out = append(*out, jsonLeaf{path: path + "." + strconv.Itoa(i),
					get: func() string { return t[i].(string) }, set: func(x string) { t[i] = x }})
				continue
			}
			leaves(t[i], path+"."+strconv.Itoa(i), out)
		}
	}
}

// jsonDocs are JSON documents that stream one field's text across several
// of them (SSE data lines, ACP notification lines). redactStreams redacts
// secrets split across consecutive values of one path, and in each value on
// its own; it reports which documents changed.
func redactStreams(docs []any, secrets []string) []bool {
	changed := make([]bool, len(docs))
	type ref struct {
		doc  int
		leaf jsonLeaf
	}
	byPath := map[string][]ref{}
	var order []string
	for d, v := range docs {
		var ls []jsonLeaf
		leaves(v, "", &ls)
		for _, l := range ls {
			if _, ok := byPath[l.path]; !ok {
				order = append(order, l.path)
			}
			byPath[l.path] = append(byPath[l.path], ref{d, l})
		}
	}
	for _, p := range order {
		refs := byPath[p]
		pieces := make([]string, len(refs))
		for i, r := range refs {
			pieces[i] = r.leaf.get()
		}
		out, ok := redactPieces(pieces, secrets)
		if !ok {
			continue
		}
		for i, r := range refs {
			if out[i] != pieces[i] {
				r.leaf.set(out[i])
				changed[r.doc] = true
			}
		}
	}
	return changed
}

// sseData returns the JSON payloads of an SSE body's data lines: the byte
// range of each payload and its decoded value (lines that are not JSON are
// left out).
func sseData(body string) (ranges []span, docs []any) {
	pos := 0
	for _, line := range strings.SplitAfter(body, "\n") {
		start := pos
		pos += len(line)
		t := strings.TrimRight(line, "\r\n")
		rest, ok := strings.CutPrefix(t, "data:")
		if !ok {
			continue
		}
		lead := len(t) - len(strings.TrimLeft(rest, " "))
		payload := t[lead:]
		v, err := jsonx.Decode([]byte(payload))
		if err != nil {
			continue
		}
		ranges = append(ranges, span{start + lead, start + len(t)})
		docs = append(docs, v)
	}
	return ranges, docs
}

// redactSSE redacts secrets in an SSE body, joining each field's deltas
// across events; events that changed are re-encoded.
func redactSSE(body string, secrets []string) string {
	ranges, docs := sseData(body)
	if len(docs) == 0 {
		return body
	}
	changed := redactStreams(docs, secrets)
	var b strings.Builder
	pos := 0
	for i, r := range ranges {
		if !changed[i] {
			continue
		}
		enc, err := jsonx.Marshal(docs[i])
		if err != nil {
			continue
		}
		b.WriteString(body[pos:r.a])
		b.Write(enc)
		pos = r.b
	}
	b.WriteString(body[pos:])
	return b.String()
}

// RedactJSONLines redacts known secrets from lines of JSON (an ACP
// transcript), joining each field's text across consecutive lines as a
// stream's deltas are joined, then every remaining form of a secret and
// every credential-shaped value line by line. Lines that are not JSON are
// scrubbed as text.
func RedactJSONLines(lines [][]byte, secrets []string) [][]byte {
	s := New(secrets)
	idx := []int{}
	var docs []any
	for i, l := range lines {
		if v, err := jsonx.Decode(l); err == nil {
			idx = append(idx, i)
			docs = append(docs, v)
		}
	}
	out := make([][]byte, len(lines))
	copy(out, lines)
	changed := redactStreams(docs, s.secrets)
	for k, i := range idx {
		if changed[k] {
			if enc, err := jsonx.Marshal(docs[k]); err == nil {
				out[i] = enc
			}
		}
	}
	for i := range out {
		out[i] = []byte(s.text(string(out[i])))
	}
	return out
}

// jsonString is s as a JSON string literal without HTML escaping.
func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// RedactText returns text with every known secret (in every form of
// KeyForms) and every credential-shaped value replaced by Redacted: for a
// diff, an error or a log line that may quote a request or a response.
func RedactText(text string, secrets []string) string {
	return New(secrets).text(text)
}
