package scrub

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"

	vcr "gopkg.in/dnaeon/go-vcr.v3/cassette"

	"github.com/todoharness/todoharness/harness/llm/cassette"
	"github.com/todoharness/todoharness/internal/jsonx"
	"github.com/todoharness/todoharness/internal/yamlx"
)

// Finding is a credential-like string found by ScanCredentials or
// ScanSecrets. Line is the 1-based line of the file, 0 when the finding is
// in a decoded view of a body (Where then says which).
//
// Match is the credential itself: String masks it (Mask), so that an
// error, a log line or a report never prints it; Reveal prints it whole.
type Finding struct {
	Line  int
	Kind  string
	Match string
	Where string
	// notSecret marks a finding whose Match is no credential (a header's
	// name, "gzip"): shown as it is.
	notSecret bool
}

// String is the finding with its match masked.
func (f Finding) String() string {
	m := f.Match
	if !f.notSecret {
		m = Mask(m)
	}
	return f.format(m)
}

// Reveal is the finding with its match printed whole (`cassette scan
// --show-secrets`).
func (f Finding) Reveal() string { return f.format(f.Match) }

func (f Finding) format(m string) string {
	loc := fmt.Sprintf("line %d", f.Line)
	if f.Line == 0 {
		loc = f.Where
	}
	return fmt.Sprintf("%s: %s: %s", loc, f.Kind, m)
}

// Describe is findings for an error: the first that names a field of a
// cassette (interaction, header, body) when one does, else the first,
// masked, and how many more there are.
func Describe(found []Finding) string {
	if len(found) == 0 {
		return "nothing"
	}
	first := found[0]
	for _, f := range found {
		if f.Where != "" {
			first = f
			break
		}
	}
	if len(found) == 1 {
		return first.String()
	}
	return fmt.Sprintf("%s; and %d more", first, len(found)-1)
}

// Mask shows a secret as its first 4 characters (fewer for a short one:
// never more than a quarter of it), its length and a short hash, enough to
// tell two findings apart and to find the value where it was planted,
// never enough to use it.
func Mask(s string) string {
	sum := sha256.Sum256([]byte(s))
	r := []rune(s)
	keep := min(4, len(r)/4)
	return fmt.Sprintf("%s… (%d chars, sha256 %s)", string(r[:keep]), len(s), hex.EncodeToString(sum[:4]))
}

// headerPatterns are YAML lines of a cassette that keep a credential
// header.
var headerPatterns = []struct {
	kind string
	re   *regexp.Regexp
}{
	{"authorization header", regexp.MustCompile(`(?i)^\s*-?\s*"?(proxy-)?authorization"?\s*:`)},
	{"api key header", regexp.MustCompile(`(?i)^\s*-?\s*"?(x-)?(goog-)?api-?key"?\s*:`)},
	{"cookie header", regexp.MustCompile(`(?i)^\s*-?\s*"?(set-)?cookie"?\s*:`)},
	{"compressed body", regexp.MustCompile(`(?i)^\s*-?\s*"?content-encoding"?\s*:\s*$`)},
}

// views are the decoded forms of a text a scan looks at: the text, its
// JSON-unescaped and URL-decoded forms (decodings), and the decoded runs of
// every encoding of keyEncodings in it (base64, base32, hex) that decode
// to printable text. Each view is listed once: most texts have no escape,
// and their seven decodings are the text seven times.
func views(text string) []string {
	var out []string
	add := func(v string) {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	for _, d := range decodings(text) {
		add(d.s)
	}
	for _, enc := range keyEncodings {
		if enc.run == nil {
			continue
		}
		for _, run := range enc.run.FindAllString(text, -1) {
			if b, ok := enc.decode(run); ok && printable(b) {
				add(string(b))
			}
		}
	}
	return out
}

func printable(b []byte) bool {
	for _, c := range b {
		if (c < 0x20 && c != '\n' && c != '\r' && c != '\t') || c > 0x7e {
			return false
		}
	}
	return len(b) > 0
}

// ScanCredentials returns what in data looks like a credential, whoever's
// it is and whatever the file: an sk-/sk-proj-/sk-ant- key, an AIza key, a
// JWT, a 32-hex Azure-style key, bearer or basic credentials, a URL's
// user:password, a credential header kept in a cassette, or a compressed
// body; looked for in each line as written, JSON-unescaped, URL-decoded and
// base64-decoded, and, in a cassette, in every body's string values with
// each field's text joined across stream events. A scrubbed cassette has
// none.
func ScanCredentials(data []byte) []Finding {
	return scan(data, nil, nil)
}

// ScanSecrets is ScanCredentials plus the known secret values, in every form
// (plain, JSON-escaped, URL-encoded, base64, split across stream deltas).
//
// Any fragment of a known secret (fragments.go: 8 of its characters, case,
// separators, order and rot13 ignored) is found too, in every view of the
// text (HTML entities, base64, hex, Ascii85, gzip, UTF-16, nested), in
// each line, in the file read as one text (a key split across lines) and,
// in a cassette, in each field: header names and values, URLs and bodies.
func ScanSecrets(data []byte, secrets []string) []Finding {
	s := New(secrets)
	return scan(data, s.Secrets(), s.frag)
}

// fragmentKind is the kind of a finding of a fragment of a known secret.
func fragmentKind(form string) string {
	if form == "" {
		form = "as written, case and separators ignored"
	}
	return "fragment of a known secret (" + form + ")"
}

func scan(data []byte, secrets []string, frag *fragmentIndex) []Finding {
	var out []Finding
	seen := map[string]bool{}
	add := func(f Finding) {
		k := f.Reveal()
		if !seen[k] {
			seen[k] = true
			out = append(out, f)
		}
	}
	check := func(text string, line int, where string) {
		for _, v := range views(text) {
			for _, p := range credentialPatterns {
				for _, ix := range p.findAll(v) {
					m := v[ix[0]:ix[1]]
					if p.kind == "azure key (32 hex)" && !hexKeyLike(m) {
						continue
					}
					add(Finding{Line: line, Kind: p.kind, Match: strings.TrimSpace(m), Where: where})
				}
			}
		}
		for _, s := range secretSpans(text, secrets) {
			add(Finding{Line: line, Kind: "known secret", Match: text[s.a:s.b], Where: where})
		}
		for _, h := range frag.fragmentSpans(text) {
			add(Finding{Line: line, Kind: fragmentKind(h.form), Match: text[h.a:h.b], Where: where})
		}
	}
	for n, line := range bytes.Split(data, []byte("\n")) {
		for _, p := range headerPatterns {
			if m := p.re.Find(line); m != nil {
				add(Finding{Line: n + 1, Kind: p.kind, Match: string(m), notSecret: true})
			}
		}
		check(string(line), n+1, "")
	}
	// The file as one text: a key split across lines (two SSE comment
	// lines, a YAML string folded in two), where no line holds a fragment.
	if hits := frag.fragmentSpans(string(data)); len(hits) > 0 {
		lines := map[int]bool{}
		for _, f := range out {
			if strings.HasPrefix(f.Kind, "fragment") {
				lines[f.Line] = true
			}
		}
		for _, h := range hits {
			n := bytes.Count(data[:h.a], []byte("\n")) + 1
			if !lines[n] {
				add(Finding{Line: n, Kind: fragmentKind(h.form) + " across lines", Match: string(data[h.a:h.b])})
			}
		}
	}
	var f cassette.File
	if yamlx.Unmarshal(data, &f, false) != nil || len(f.Interactions) == 0 {
		return out
	}
	if f.Provenance != nil {
		for _, v := range []string{f.Provenance.BaseURL, f.Provenance.APIHost, f.Provenance.Description, f.Provenance.Agent} {
			check(v, 0, "provenance")
		}
	}
	for _, i := range f.Interactions {
		if i == nil {
			continue
		}
		for _, b := range []struct {
			what string
			r    *vcr.Interaction
			body string
		}{{"request", i, i.Request.Body}, {"response", i, i.Response.Body}} {
			where := fmt.Sprintf("interaction %d %s body", i.ID, b.what)
			if looksGzipped([]byte(b.body)) {
				add(Finding{Kind: "compressed body", Match: "gzip", Where: where, notSecret: true})
			}
			for _, s := range joinedStrings(b.body) {
				check(s, 0, where+" (decoded)")
			}
		}
		check(i.Request.URL, 0, fmt.Sprintf("interaction %d request URL", i.ID))
		for _, h := range []struct {
			what string
			h    map[string][]string
		}{{"request", i.Request.Headers}, {"response", i.Response.Headers}} {
			for name, vs := range h.h {
				check(name, 0, fmt.Sprintf("interaction %d %s header name", i.ID, h.what))
				for _, v := range vs {
					check(v, 0, fmt.Sprintf("interaction %d %s header %s", i.ID, h.what, name))
				}
			}
		}
	}
	return out
}

// looksGzipped reports whether b starts like gzip.
func looksGzipped(b []byte) bool { return bytes.HasPrefix(b, []byte{0x1f, 0x8b}) }

// joinedStrings returns the string values of a JSON or SSE body, each
// field's values joined across the stream's events (as a client assembles
// them).
func joinedStrings(body string) []string {
	var docs []any
	if v, err := jsonx.Decode([]byte(body)); err == nil {
		docs = []any{v}
	} else if cassette.IsEventStream(nil, []byte(body)) {
		_, docs = sseData(body)
	}
	byPath := map[string]*strings.Builder{}
	var order []string
	for _, d := range docs {
		var ls []jsonLeaf
		leaves(d, "", &ls)
		for _, l := range ls {
			b, ok := byPath[l.path]
			if !ok {
				b = &strings.Builder{}
				byPath[l.path] = b
				order = append(order, l.path)
			}
			b.WriteString(l.get())
		}
	}
	out := make([]string, 0, len(order))
	for _, p := range order {
		out = append(out, byPath[p].String())
	}
	return out
}
