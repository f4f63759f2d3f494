package cassette

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/dnaeon/go-vcr.v3/cassette"
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
// appear. They are deliberately narrow (a long run after sk-, a long token
// after "Bearer ") so that ordinary model text is never rewritten.
var credentialPatterns = []*regexp.Regexp{
	regexp.MustCompile(`\bsk-[A-Za-z0-9][A-Za-z0-9_-]{7,}`),
	regexp.MustCompile(`\bBearer\s+[A-Za-z0-9._~+/=-]{8,}`),
}

// scrubber removes credentials from interactions before they are saved.
type scrubber struct {
	secrets []string
}

// minSecret is the shortest literal secret replaced wherever it appears:
// shorter strings would rewrite ordinary text (a short key still never
// reaches the cassette through the headers, which are dropped).
const minSecret = 8

func newScrubber(secrets []string) *scrubber {
	s := &scrubber{}
	for _, v := range secrets {
		if len(strings.TrimSpace(v)) >= minSecret {
			s.secrets = append(s.secrets, v)
		}
	}
	// Longest first, so a secret containing another is replaced whole.
	sort.Slice(s.secrets, func(i, j int) bool { return len(s.secrets[i]) > len(s.secrets[j]) })
	return s
}

// text redacts literal secrets and credential-shaped values in s.
func (s *scrubber) text(v string) string {
	for _, sec := range s.secrets {
		v = strings.ReplaceAll(v, sec, Redacted)
	}
	for _, re := range credentialPatterns {
		v = re.ReplaceAllString(v, Redacted)
	}
	return v
}

// headers returns a scrubbed copy of h (h itself is never modified: in record
// mode it is the live request's header map).
func (s *scrubber) headers(h http.Header) http.Header {
	if h == nil {
		return nil
	}
	out := make(http.Header, len(h))
	for k, vs := range h {
		if isSensitiveHeader(k) {
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
func (s *scrubber) values(v url.Values) url.Values {
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
func (s *scrubber) rawURL(raw string) string {
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

// body scrubs a request or response body: key-like JSON fields first (when
// the body is JSON), then credential-shaped text anywhere. A JSON body is
// re-encoded only when a field was redacted, so untouched bodies keep their
// bytes.
func (s *scrubber) body(b string) string {
	if b == "" {
		return b
	}
	if v, err := decodeJSON([]byte(b)); err == nil {
		if redactFields(v) {
			if enc, err := encodeJSON(v, false); err == nil {
				b = string(enc)
			}
		}
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

// interaction scrubs one recorded interaction in place, replacing (never
// mutating) its header and form maps.
func (s *scrubber) interaction(i *cassette.Interaction) error {
	if i == nil {
		return nil
	}
	i.Request.Headers = s.headers(i.Request.Headers)
	i.Request.Trailer = s.headers(i.Request.Trailer)
	i.Request.Form = s.values(i.Request.Form)
	i.Request.URL = s.rawURL(i.Request.URL)
	i.Request.RequestURI = s.rawURL(i.Request.RequestURI)
	i.Request.Host = s.text(i.Request.Host)
	i.Request.Body = s.body(i.Request.Body)
	i.Response.Headers = s.headers(i.Response.Headers)
	i.Response.Trailer = s.headers(i.Response.Trailer)
	i.Response.Body = s.body(i.Response.Body)
	return nil
}

// Finding is a credential-like string found by ScanCredentials.
type Finding struct {
	Line  int
	Kind  string
	Match string
}

func (f Finding) String() string { return fmt.Sprintf("line %d: %s: %s", f.Line, f.Kind, f.Match) }

// scanPatterns are what a committed cassette must never contain.
var scanPatterns = []struct {
	kind string
	re   *regexp.Regexp
}{
	{"api key (sk-…)", credentialPatterns[0]},
	{"bearer token", credentialPatterns[1]},
	{"authorization header", regexp.MustCompile(`(?i)^\s*-?\s*"?(proxy-)?authorization"?\s*:`)},
	{"api key header", regexp.MustCompile(`(?i)^\s*-?\s*"?x?-?api-key"?\s*:`)},
}

// ScanCredentials returns every line of data that looks like it holds a
// credential: an sk-… key, a Bearer token, or an Authorization or api-key
// header. A scrubbed cassette has none.
func ScanCredentials(data []byte) []Finding {
	var out []Finding
	for n, line := range bytes.Split(data, []byte("\n")) {
		for _, p := range scanPatterns {
			if m := p.re.Find(line); m != nil {
				out = append(out, Finding{Line: n + 1, Kind: p.kind, Match: string(m)})
			}
		}
	}
	return out
}
