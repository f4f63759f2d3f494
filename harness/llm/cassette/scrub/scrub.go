package scrub

import (
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"

	vcr "gopkg.in/dnaeon/go-vcr.v3/cassette"

	"github.com/todoharness/todoharness/harness/llm/cassette"
	"github.com/todoharness/todoharness/internal/jsonx"
)

// Redacted replaces every scrubbed credential value.
const Redacted = "[REDACTED]"

// isSensitiveField reports whether a query parameter or JSON body field
// name is key-like, after lower-casing and dropping '-' and '_'.
func isSensitiveField(name string) bool {
	switch strings.NewReplacer("-", "", "_", "").Replace(strings.ToLower(name)) {
	case "key", "apikey", "token", "accesstoken", "refreshtoken", "idtoken", "sessiontoken",
		"authtoken", "secret", "clientsecret", "secretkey", "privatekey", "accesskey",
		"password", "passwd", "authorization", "auth", "bearer", "credential", "credentials",
		"signature", "sig":
		return true
	}
	return false
}

// isSensitiveHeader reports whether a header carries credentials: the
// well-known ones, and any whose name mentions key, token, secret, auth,
// cookie, password or signature.
func isSensitiveHeader(name string) bool {
	l := strings.ToLower(name)
	switch l {
	case "authorization", "proxy-authorization", "api-key", "x-api-key", "cookie", "set-cookie":
		return true
	}
	for _, w := range []string{"key", "token", "secret", "auth", "cookie", "password", "signature"} {
		if strings.Contains(l, w) {
			return true
		}
	}
	return false
}

// credentialPatterns are values that look like credentials wherever they
// appear, whoever's they are: OpenAI (sk-, sk-proj-), Anthropic (sk-ant-)
// and Google (AIza) keys, bearer and basic authorization values, JWTs,
// Azure's 32-hex keys (standing alone, not inside a longer id), and the
// user:password of a URL. They are deliberately narrow so that ordinary
// model text is never rewritten.
//
// Each has a cheap test a text must pass to hold a match (may): the literal
// the pattern cannot match without, or for the Azure key a run of 32
// lowercase hex digits. A scan runs the patterns over every line in up to a
// dozen decoded views, and without these tests the regular expressions,
// which cannot skip ahead to a literal behind \b, were nearly all of the
// credential scan's time (docs/performance.md, "The credential scan").
var credentialPatterns = []credentialPattern{
	{"api key (sk-…)", regexp.MustCompile(`\bsk-[A-Za-z0-9][A-Za-z0-9_-]{7,}`), literal("sk-")},
	{"bearer token", regexp.MustCompile(`\bBearer\s+[A-Za-z0-9._~+/=-]{8,}`), literal("Bearer")},
	{"basic credentials", regexp.MustCompile(`\bBasic\s+[A-Za-z0-9+/]{8,}={0,2}`), literal("Basic")},
	{"google api key (AIza…)", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{30,}`), literal("AIza")},
	{"json web token", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{6,}\.eyJ[A-Za-z0-9_-]{6,}\.[A-Za-z0-9_-]{6,}`), literal("eyJ")},
	{"azure key (32 hex)", regexp.MustCompile(`(?:^|[^0-9A-Za-z_.-])[0-9a-f]{32}(?:$|[^0-9A-Za-z_-])`), hasLowerHexRun32},
	{"url credentials", regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://[^/\s:@'"]+:[^/\s@'"]+@`), literal("://")},
}

// credentialPattern is a credential shape: its kind, its expression, and
// may, false only for a text the expression cannot match.
type credentialPattern struct {
	kind string
	re   *regexp.Regexp
	may  func(string) bool
}

// findAll is re.FindAllStringIndex(s, -1), skipping the expression where
// may rules a match out.
func (p credentialPattern) findAll(s string) [][]int {
	if !p.may(s) {
		return nil
	}
	return p.re.FindAllStringIndex(s, -1)
}

// literal is a may test: s contains lit.
func literal(lit string) func(string) bool {
	return func(s string) bool { return strings.Contains(s, lit) }
}

// hasLowerHexRun32 reports whether s has 32 lowercase hex digits in a row.
func hasLowerHexRun32(s string) bool {
	run := 0
	for i := 0; i < len(s); i++ {
		if c := s[i]; '0' <= c && c <= '9' || 'a' <= c && c <= 'f' {
			if run++; run == 32 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// PatternRedact replaces credential-shaped values in v. An Azure-style hex
// run only counts when it mixes letters and digits; URL credentials keep
// their scheme.
func PatternRedact(v string) string {
	v = encodedCredentialRedact(v)
	v = escapedCredentialRedact(v)
	for _, p := range credentialPatterns {
		if !p.may(v) {
			continue
		}
		v = p.re.ReplaceAllStringFunc(v, func(m string) string {
			switch p.kind {
			case "azure key (32 hex)":
				if !hexKeyLike(m) {
					return m
				}
				lo := strings.IndexAny(m, "0123456789abcdef")
				return m[:lo] + Redacted + m[lo+32:]
			case "url credentials":
				i := strings.Index(m, "://")
				return m[:i+3] + Redacted + "@"
			}
			return Redacted
		})
	}
	return v
}

// escapedCredentialRedact replaces every credential-shaped value that shows
// only through a transport escape (\u0073k-…, sk%2Dproj…): the escaped
// text it was decoded from, as a whole.
func escapedCredentialRedact(v string) string {
	var spans []span
	for _, d := range decodings(v)[1:] {
		if d.s == v {
			continue
		}
		for _, p := range credentialPatterns {
			for _, m := range p.findAll(d.s) {
				if p.kind == "azure key (32 hex)" && !hexKeyLike(d.s[m[0]:m[1]]) {
					continue
				}
				if a, b := d.at[m[0]], d.at[m[1]]; v[a:b] != d.s[m[0]:m[1]] {
					spans = append(spans, span{a, b}) // escaped: plain ones are the patterns' own
				}
			}
		}
	}
	spans = mergeSpans(spans)
	for i := len(spans) - 1; i >= 0; i-- {
		v = v[:spans[i].a] + Redacted + v[spans[i].b:]
	}
	return v
}

// encodedCredentialRedact replaces every encoded run (base64, base32, hex:
// keyEncodings) that decodes to text holding a credential-shaped value.
func encodedCredentialRedact(v string) string {
	for _, enc := range keyEncodings {
		if enc.run == nil {
			continue
		}
		v = enc.run.ReplaceAllStringFunc(v, func(run string) string {
			if b, ok := enc.decode(run); ok && printable(b) && credentialShaped(string(b)) {
				return Redacted
			}
			return run
		})
	}
	return v
}

// credentialShaped reports whether text holds a credential-shaped value.
func credentialShaped(text string) bool {
	for _, p := range credentialPatterns {
		for _, ix := range p.findAll(text) {
			if m := text[ix[0]:ix[1]]; p.kind != "azure key (32 hex)" || hexKeyLike(m) {
				return true
			}
		}
	}
	return false
}

// hexKeyLike reports whether a match of the 32-hex pattern holds both
// letters and digits (an all-digit or all-letter run is not a key).
func hexKeyLike(m string) bool {
	return strings.ContainsAny(m, "abcdef") && strings.ContainsAny(m, "0123456789")
}

// Scrubber removes credentials from interactions before they are saved,
// and from what a replay matches and prints. It is not safe for concurrent
// use: its owner guards Add.
type Scrubber struct {
	secrets []string
	frag    *fragmentIndex
}

// minSecret is the shortest literal secret replaced wherever it appears:
// shorter strings would rewrite ordinary text (a short key still never
// reaches the cassette through the headers, which are dropped).
const minSecret = 8

// New returns a scrubber that knows the literal secrets (see Add).
func New(secrets []string) *Scrubber {
	s := &Scrubber{}
	s.Add(secrets)
	return s
}

// Secrets returns the known secrets, longest first (nil for a nil
// scrubber).
func (s *Scrubber) Secrets() []string {
	if s == nil {
		return nil
	}
	return s.secrets
}

// Add adds literal secrets (shorter than minSecret ones are left out),
// once each.
func (s *Scrubber) Add(secrets []string) {
	for _, v := range secrets {
		if len(strings.TrimSpace(v)) < minSecret || slices.Contains(s.secrets, v) {
			continue
		}
		s.secrets = append(s.secrets, v)
	}
	// Longest first, so a secret containing another is replaced whole.
	sort.Slice(s.secrets, func(i, j int) bool { return len(s.secrets[i]) > len(s.secrets[j]) })
	s.frag = newFragmentIndex(s.secrets)
}

// text redacts known secrets (in every form, see secretSpans), every
// fragment of one that can be located (fragments.go) and credential-shaped
// values in v.
func (s *Scrubber) text(v string) string {
	if out, ok := redactPieces([]string{v}, s.secrets); ok {
		v = out[0]
	}
	return PatternRedact(s.frag.redactFragments(v))
}

// nameHoldsSecret reports whether a header's name holds a known secret
// in any form or a fragment of one (an upstream echoing the key as a
// header name: it is saved canonicalised, X-Sk-Proj-…).
func (s *Scrubber) nameHoldsSecret(name string) bool {
	if s.text(name) != name {
		return true
	}
	hits, _ := s.frag.fragmentHits(name)
	return len(hits) > 0
}

// headers returns a scrubbed copy of h (h itself is never modified: in record
// mode it is the live request's header map).
func (s *Scrubber) headers(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for k, vs := range h {
		if isSensitiveHeader(k) || s.nameHoldsSecret(k) {
			continue
		}
		c := make([]string, len(vs))
		for i, v := range vs {
			c[i] = s.text(v)
		}
		out[k] = c
	}
	return out
}

// values returns a scrubbed copy of query or form values.
func (s *Scrubber) values(v url.Values) url.Values {
	if v == nil {
		return nil
	}
	out := make(url.Values, len(v))
	for k, vs := range v {
		c := make([]string, len(vs))
		for i, x := range vs {
			if isSensitiveField(k) {
				c[i] = Redacted
			} else {
				c[i] = s.text(x)
			}
		}
		out[k] = c
	}
	return out
}

// rawURL scrubs the query of a URL or request URI.
func (s *Scrubber) rawURL(raw string) string {
	if raw == "" {
		return raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return s.text(raw)
	}
	if u.User != nil {
		u.User = url.User(Redacted)
	}
	if u.RawQuery != "" {
		u.RawQuery = s.values(u.Query()).Encode()
	}
	return s.text(u.String())
}

// Body scrubs a request or response body: key-like JSON fields and known
// secrets inside JSON string values first (when the body is JSON; an SSE
// body has each data line's JSON scrubbed, a field's text joined across
// events), then credential-shaped text anywhere. A JSON body is re-encoded
// only when something in it was redacted, so untouched bodies keep their
// bytes.
func (s *Scrubber) Body(b string) string {
	if b == "" {
		return b
	}
	if v, err := jsonx.Decode([]byte(b)); err == nil {
		changed := redactFields(v)
		if redactStreams([]any{v}, s.secrets)[0] {
			changed = true
		}
		if changed {
			if enc, err := jsonx.Marshal(v); err == nil {
				b = string(enc)
			}
		}
	} else if cassette.IsEventStream(nil, []byte(b)) {
		b = redactSSE(b, s.secrets)
	}
	return s.text(b)
}

// redactFields replaces the values of key-like fields anywhere in v. It
// reports whether anything changed.
func redactFields(v any) bool {
	changed := false
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if isSensitiveField(k) {
				switch x.(type) {
				case map[string]any, []any:
					if redactFields(x) {
						changed = true
					}
				case nil:
				default:
					if x != Redacted {
						t[k] = Redacted
						changed = true
					}
				}
				continue
			}
			if redactFields(x) {
				changed = true
			}
		}
	case []any:
		for _, x := range t {
			if redactFields(x) {
				changed = true
			}
		}
	}
	return changed
}

// Interaction scrubs one recorded interaction in place, replacing (never
// mutating) its header and form maps.
func (s *Scrubber) Interaction(i *vcr.Interaction) {
	if i == nil {
		return
	}
	i.Request.Headers = s.headers(i.Request.Headers)
	i.Request.Trailer = s.headers(i.Request.Trailer)
	i.Request.Form = s.values(i.Request.Form)
	i.Request.URL = s.rawURL(i.Request.URL)
	i.Request.RequestURI = s.rawURL(i.Request.RequestURI)
	i.Request.Host = s.text(i.Request.Host)
	i.Request.Body = s.Body(i.Request.Body)
	i.Response.Headers = s.headers(i.Response.Headers)
	i.Response.Trailer = s.headers(i.Response.Trailer)
	i.Response.Body = s.Body(i.Response.Body)
	i.Response.Status = s.text(i.Response.Status)
}
