package scrub

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"encoding/base64"
	"encoding/hex"
	"html"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// The forms of forms.go are encodings a secret is removed from exactly.
// Everything else an upstream may do to a key it echoes (reverse it,
// rot13 it, change its case, put zero-width spaces or blanks between its
// characters, write it as HTML entities, base64 of its UTF-16LE or of its
// gzip, base64 twice, spaced hex, Ascii85, split it across two fields or
// comment lines, put it in a header's name) is caught by looking for its
// fragments: any fragmentLen characters of the key, in the text and in
// everything the text decodes to (views), with case, separators, order and
// rot13 ignored. The scrubber redacts what it can locate (a fragment in
// the text, or the whole encoded run it was decoded from); the post-save
// scan (ScanSecrets) refuses a file where any fragment is left.

// fragmentLen is N, the length of a key fragment looked for: 8 letters or
// digits of the part of a key that is not its public prefix (sk-proj-,
// sk-ant-api03-, AIza, a JWT's header, ...). A key's random part is
// base62 (or hex, base64): a given 8-character window matches a given place
// of unrelated text with probability about 36^-8 = 3.5e-13 (case and
// separators ignored), so a 40-character key (about 30 windows, four
// orientations each) against 10 MB of text gives about 4e-4 expected false
// matches in the worst case (text of random letters and digits); ordinary
// text, English or JSON, is far from random. Windows of fewer than 4
// distinct characters or without a letter (a run like 00000000, a number)
// are left out: they are what ordinary text does hold. A key split into
// pieces shorter than 8 characters each is not found; nothing shorter
// says "this is the key".
const fragmentLen = 8

// Bounds of the decoding (per text scanned): how deep decoders nest
// (base64 of gzip of UTF-16 is 3), how much one gzip or zlib stream may
// inflate to, and how many decoded bytes one text may produce in all
// (decodeBudgetFactor times its size, at least decodeBudgetMin).
const (
	maxDecodeDepth     = 3
	maxInflate         = 1 << 20
	decodeBudgetMin    = 1 << 20
	decodeBudgetFactor = 4
	minDistinctive     = 12
)

// publicPrefix is the part of a credential that is the same for everyone
// (a scheme, a vendor's key prefix): no fragment is taken from it.
var publicPrefix = regexp.MustCompile(`^(?i:(?:bearer|basic|token)\s+)?(?:sk-(?:ant-(?:api|admin|oat)\d*-|proj-|svcacct-|admin-|None-)?|AIza|gh[pousr]_|github_pat_|xox[abpr]-|hf_|glpat-)?`)

// distinctive is the part of secret its fragments are taken from: without
// the public prefix (for a JWT, without its header segment), "" when the
// value does not look like a key (too short, a path, a URL, words).
func distinctive(secret string) string {
	d := strings.TrimSpace(secret)
	d = d[len(publicPrefix.FindString(d)):]
	if strings.HasPrefix(d, "eyJ") {
		if _, rest, ok := strings.Cut(d, "."); ok {
			d = rest
		}
	}
	if len(d) < minDistinctive || strings.ContainsAny(d[:1], "/~.") || strings.Contains(d, "://") ||
		strings.ContainsAny(d, " \t\r\n") {
		return ""
	}
	return d
}

// fragmentForms are the orientations a fragment is looked for in.
var fragmentForms = []struct {
	name string
	f    func([]byte) []byte
}{
	{"", func(b []byte) []byte { return b }},
	{"reversed", reversed},
	{"rot13", rot13},
	{"reversed, rot13", func(b []byte) []byte { return rot13(reversed(b)) }},
}

func reversed(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		out[len(b)-1-i] = c
	}
	return out
}

func rot13(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			c = 'a' + (c-'a'+13)%26
		case c >= 'A' && c <= 'Z':
			c = 'A' + (c-'A'+13)%26
		}
		out[i] = c
	}
	return out
}

// fragmentIndex holds every fragment of the known secrets, folded (letters
// and digits only, lower-case) and packed into a uint64, with the
// orientation it was taken in.
type fragmentIndex struct {
	grams map[uint64]string
	bloom [1 << 10]uint64
}

// newFragmentIndex indexes the fragments of secrets; nil when none has any.
func newFragmentIndex(secrets []string) *fragmentIndex {
	x := &fragmentIndex{grams: map[uint64]string{}}
	for _, s := range secrets {
		d := distinctive(s)
		if d == "" {
			continue
		}
		f, at := fold(d)
		if len(f) < minDistinctive {
			continue
		}
		for i := 0; i+fragmentLen <= len(f); i++ {
			w := f[i : i+fragmentLen]
			if !gramWorthy(w) || !keyLike(d, at[i:i+fragmentLen]) {
				continue
			}
			for _, o := range fragmentForms {
				k := pack(o.f(w))
				if _, ok := x.grams[k]; !ok {
					x.grams[k] = o.name
					x.bloom[bloomBit(k)/64] |= 1 << (bloomBit(k) % 64)
				}
			}
		}
	}
	if len(x.grams) == 0 {
		return nil
	}
	return x
}

// gramWorthy reports whether a window says anything: a letter and at
// least 4 distinct characters.
func gramWorthy(w []byte) bool {
	letter := false
	var seen [256]bool
	distinct := 0
	for _, c := range w {
		letter = letter || (c >= 'a' && c <= 'z')
		if !seen[c] {
			seen[c] = true
			distinct++
		}
	}
	return letter && distinct >= 4
}

// keyLike reports whether the characters of d at at look random rather
// than like a word: a digit among them, or both upper- and lower-case
// letters ("password" is not a fragment of admin:password123; "ssword12"
// is). Of a random base62 window, 1 in 500 fails this.
func keyLike(d string, at []int) bool {
	var digit, upper, lower bool
	for _, i := range at {
		c := d[i]
		digit = digit || (c >= '0' && c <= '9')
		upper = upper || (c >= 'A' && c <= 'Z')
		lower = lower || (c >= 'a' && c <= 'z')
	}
	return digit || (upper && lower)
}

func pack(w []byte) uint64 {
	var k uint64
	for _, c := range w {
		k = k<<8 | uint64(c)
	}
	return k
}

func bloomBit(k uint64) uint64 { return (k * 0x9E3779B97F4A7C15) >> (64 - 16) }

// fold returns the letters and digits of s, lower-cased, and where each
// is in s (at[i], with at[len] = len(s)). Case, separators, blanks and
// zero-width characters between a key's characters drop out.
func fold(s string) ([]byte, []int) {
	b := make([]byte, 0, len(s))
	at := make([]int, 0, len(s)+1)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'A' && c <= 'Z':
			c += 'a' - 'A'
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		default:
			continue
		}
		b = append(b, c)
		at = append(at, i)
	}
	return b, append(at, len(s))
}

// fragmentHit is a fragment found: where in the scanned text (the whole
// encoded run it was decoded from, when it was), and in which form.
type fragmentHit struct {
	span
	form string
}

// fragmentScan is one scan of one text.
type fragmentScan struct {
	x      *fragmentIndex
	budget int
	hits   []fragmentHit
	// truncated says the budget ran out (some decodings were not tried).
	truncated bool
}

// fragmentHits returns the fragments of the indexed secrets in text, in
// every view of it (fragmentScan.walk).
func (x *fragmentIndex) fragmentHits(text string) ([]fragmentHit, bool) {
	if x == nil || len(text) < fragmentLen {
		return nil, false
	}
	st := &fragmentScan{x: x, budget: max(decodeBudgetMin, decodeBudgetFactor*len(text))}
	st.walk(text, nil, 0, "")
	return st.hits, st.truncated
}

var (
	base64Run  = regexp.MustCompile(`[A-Za-z0-9+/_-]{12,}`)
	hexRun     = regexp.MustCompile(`[0-9a-f]{16,}`)
	ascii85Run = regexp.MustCompile(`[!-uz]{10,}`)
)

// walk looks for fragments in s and in what s decodes to. outer is the
// span, in the scanned text, of the encoded run s was decoded from (nil
// for the text itself); path names the decodings so far.
func (st *fragmentScan) walk(s string, outer *span, depth int, path string) {
	for _, v := range fragmentViews(s) {
		where := func(a, b int) span {
			if outer != nil {
				return *outer
			}
			return span{v.at[a], v.at[b]}
		}
		name := join(path, v.name)
		f, at := st.grams(v.s, where, name)
		if depth >= maxDecodeDepth {
			continue
		}
		for _, r := range base64Run.FindAllStringIndex(v.s, -1) {
			run := v.s[r[0]:r[1]]
			for off := 0; off < 4 && off+12 <= len(run); off++ {
				st.decoded(base64Lenient(run[off:]), where(r[0], r[1]), depth, join(name, "base64"))
			}
		}
		for _, r := range ascii85Run.FindAllStringIndex(v.s, -1) {
			run := v.s[r[0]:r[1]]
			for off := 0; off < 5 && off+10 <= len(run); off++ {
				st.decoded(ascii85Lenient(run[off:]), where(r[0], r[1]), depth, join(name, "Ascii85"))
			}
		}
		for _, r := range hexRun.FindAllIndex(f, -1) {
			for off := 0; off < 2; off++ {
				run := f[r[0]+off : r[1]]
				b := make([]byte, len(run)/2)
				if _, err := hex.Decode(b, run[:len(b)*2]); err == nil {
					st.decoded(b, where(at[r[0]], at[r[1]-1]+1), depth, join(name, "hex"))
				}
			}
		}
	}
}

// namedView is a view of a text (decoded, with offsets) and its name.
type namedView struct {
	decoded
	name string
}

// viewEscapes are the transport escapes the fragment scan reads a text
// through, each with the character that marks it.
var viewEscapes = []struct {
	mark   byte
	name   string
	decode func(string) decoded
}{
	{'\\', "JSON-unescaped", jsonUnescape},
	{'%', "URL-decoded", percentDecode},
	{'&', "HTML entities decoded", htmlUnescape},
}

// fragmentViews are the views of s the fragment scan reads: s as it is,
// and decoded through each transport escape it holds (viewEscapes), once
// and then once more (JSON inside JSON, HTML entities inside JSON, ...);
// a view with nothing to decode is not made.
func fragmentViews(s string) []namedView {
	out := []namedView{{identity(s), ""}}
	first := len(out)
	for _, e := range viewEscapes {
		if strings.IndexByte(s, e.mark) >= 0 {
			if d := e.decode(s); d.s != s {
				out = append(out, namedView{d, e.name})
			}
		}
	}
	for _, v := range out[first:] {
		for _, e := range viewEscapes {
			if strings.IndexByte(v.s, e.mark) >= 0 {
				if d := v.then(e.decode); d.s != v.s {
					out = append(out, namedView{d, join(v.name, e.name)})
				}
			}
		}
	}
	return out
}

// decoded walks what an encoded run decoded to, when it reads as text (or
// as gzip, zlib or UTF-16 of text) and the budget allows.
func (st *fragmentScan) decoded(b []byte, run span, depth int, path string) {
	if len(b) < fragmentLen {
		return
	}
	switch {
	case len(b) > 2 && b[0] == 0x1f && b[1] == 0x8b:
		if zr, err := gzip.NewReader(bytes.NewReader(b)); err == nil {
			b, path = inflate(zr), join(path, "gzip")
		}
	case len(b) > 2 && b[0] == 0x78 && (uint16(b[0])<<8|uint16(b[1]))%31 == 0:
		if zr, err := zlib.NewReader(bytes.NewReader(b)); err == nil {
			b, path = inflate(zr), join(path, "zlib")
		}
	}
	if t, enc := utf16Text(b); enc != "" {
		b, path = t, join(path, enc)
	}
	if len(b) > st.budget {
		st.truncated = true
		return
	}
	st.budget -= len(b)
	if !texty(b) {
		// Not text as a whole (a run decoded at the wrong alignment, junk
		// before the encoded key, no encoding at all): its fragments are
		// looked for, nothing in it is decoded further.
		st.grams(string(b), func(int, int) span { return run }, path)
		return
	}
	st.walk(string(b), &run, depth+1, path)
}

// grams records every fragment in the folded s; where maps a range of s
// to the scanned text.
func (st *fragmentScan) grams(s string, where func(a, b int) span, name string) ([]byte, []int) {
	f, at := fold(s)
	var k uint64
	for i, c := range f {
		k = k<<8 | uint64(c)
		if i+1 < fragmentLen || st.x.bloom[bloomBit(k)/64]&(1<<(bloomBit(k)%64)) == 0 {
			continue
		}
		if o, ok := st.x.grams[k]; ok {
			st.hits = append(st.hits, fragmentHit{where(at[i+1-fragmentLen], at[i]+1), join(name, o)})
		}
	}
	return f, at
}

// inflate reads at most maxInflate bytes of a compressed stream (a
// truncated or corrupt stream gives what was read).
func inflate(r io.Reader) []byte {
	b, _ := io.ReadAll(io.LimitReader(r, maxInflate))
	return b
}

// utf16Text returns b read as UTF-16 (little- or big-endian) when most of
// its odd (or even) bytes are zero, as in UTF-16 of ASCII text.
func utf16Text(b []byte) ([]byte, string) {
	if len(b) < 2*fragmentLen {
		return nil, ""
	}
	var zero [2]int
	for i, c := range b {
		if c == 0 {
			zero[i%2]++
		}
	}
	half := len(b) / 2
	for k, enc := range []string{"UTF-16BE", "UTF-16LE"} {
		if zero[k]*10 >= half*9 && zero[1-k]*10 < half {
			out := make([]byte, 0, half)
			for i := 1 - k; i < len(b); i += 2 {
				if b[i] != 0 {
					out = append(out, b[i])
				}
			}
			return out, enc
		}
	}
	return nil, ""
}

// texty reports whether at least 9 in 10 bytes of b are printable ASCII,
// blanks or parts of valid UTF-8: decoded junk (a run decoded at the wrong
// alignment, or not an encoding at all) is not walked.
func texty(b []byte) bool {
	good := 0
	for i := 0; i < len(b); {
		c := b[i]
		if c < utf8.RuneSelf {
			if (c >= 0x20 && c < 0x7f) || c == '\n' || c == '\r' || c == '\t' {
				good++
			}
			i++
			continue
		}
		r, w := utf8.DecodeRune(b[i:])
		if r != utf8.RuneError {
			good += w
		}
		i += w
	}
	return good*10 >= len(b)*9
}

// base64Lenient decodes as much of run as base64 (either alphabet, no
// padding) as whole 4-character groups make.
func base64Lenient(run string) []byte {
	run = strings.NewReplacer("-", "+", "_", "/").Replace(run)
	run = run[:len(run)&^3]
	b, err := base64.RawStdEncoding.DecodeString(run)
	if err != nil {
		return nil
	}
	return b
}

// ascii85Lenient decodes run as Ascii85 (btoa, Adobe without <~ ~>),
// skipping groups that are not Ascii85 and stopping at a character that
// is not; a last partial group is decoded as the standard says.
func ascii85Lenient(run string) []byte {
	out := make([]byte, 0, len(run)*4/5+4)
	for i := 0; i < len(run); {
		if run[i] == 'z' {
			out = append(out, 0, 0, 0, 0)
			i++
			continue
		}
		n := min(5, len(run)-i)
		if n < 2 {
			break
		}
		var v uint64
		for k := 0; k < 5; k++ {
			c := byte('u')
			if k < n {
				c = run[i+k]
			}
			if c < '!' || c > 'u' {
				return out
			}
			v = v*85 + uint64(c-'!')
		}
		if v > 0xFFFFFFFF {
			i += n // not a group of Ascii85 (junk before the encoded text): skip it
			continue
		}
		g := []byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}
		out = append(out, g[:n-1]...)
		i += n
	}
	return out
}

// htmlUnescape decodes HTML character references (&#115;, &#x73;, &amp;)
// wherever they appear in s, keeping offsets.
func htmlUnescape(s string) decoded {
	var b strings.Builder
	at := make([]int, 0, len(s)+1)
	for i := 0; i < len(s); {
		if s[i] == '&' {
			if j := strings.IndexByte(s[i:min(len(s), i+12)], ';'); j > 1 {
				ref := s[i : i+j+1]
				if u := html.UnescapeString(ref); u != ref {
					for k := 0; k < len(u); k++ {
						at = append(at, i)
					}
					b.WriteString(u)
					i += j + 1
					continue
				}
			}
		}
		b.WriteByte(s[i])
		at = append(at, i)
		i++
	}
	return decoded{b.String(), append(at, len(s))}
}

func join(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "":
		return a
	}
	return a + " → " + b
}

// fragmentSpans returns the spans of text holding a fragment of a known
// secret, merged, with the form of the first fragment of each.
func (x *fragmentIndex) fragmentSpans(text string) []fragmentHit {
	hits, _ := x.fragmentHits(text)
	if len(hits) == 0 {
		return nil
	}
	spans := make([]span, len(hits))
	for i, h := range hits {
		spans[i] = h.span
	}
	merged := mergeSpans(spans)
	out := make([]fragmentHit, len(merged))
	for i, m := range merged {
		out[i].span = m
		for _, h := range hits {
			if h.a >= m.a && h.b <= m.b {
				out[i].form = h.form
				break
			}
		}
	}
	return out
}

// redactFragments replaces every span of text holding a fragment of a
// known secret: each run of characters in it but for JSON's structure
// (quotes, commas, colons, brackets, line ends) becomes Redacted, so a key
// split across two JSON strings leaves two valid strings.
func (x *fragmentIndex) redactFragments(text string) string {
	spans := x.fragmentSpans(text)
	if len(spans) == 0 {
		return text
	}
	var b strings.Builder
	pos := 0
	for _, s := range spans {
		b.WriteString(text[pos:s.a])
		inRun := false
		for i := s.a; i < s.b; i++ {
			if strings.IndexByte("\",:{}[]\n\r", text[i]) >= 0 {
				b.WriteByte(text[i])
				inRun = false
				continue
			}
			if !inRun {
				b.WriteString(Redacted)
				inRun = true
			}
		}
		pos = s.b
	}
	b.WriteString(text[pos:])
	return b.String()
}
