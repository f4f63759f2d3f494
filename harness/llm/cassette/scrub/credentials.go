package scrub

import (
	"encoding/base64"
	"net/http"
	"strings"
)

// CredentialsOf returns the credential values a request carries: the value
// of every credential header (a bearer token without its scheme, a basic
// value decoded to its user and password too), each cookie's value, and
// key-like query parameters.
func CredentialsOf(r *http.Request) []string {
	var out []string
	for k, vs := range r.Header {
		if !isSensitiveHeader(k) {
			continue
		}
		for _, v := range vs {
			out = append(out, v)
			scheme, rest, ok := strings.Cut(strings.TrimSpace(v), " ")
			if !ok {
				continue
			}
			rest = strings.TrimSpace(rest)
			out = append(out, rest)
			if strings.EqualFold(scheme, "basic") {
				if b, err := base64.StdEncoding.DecodeString(rest); err == nil {
					user, pw, _ := strings.Cut(string(b), ":")
					out = append(out, string(b), user, pw)
				}
			}
		}
	}
	for _, c := range r.Cookies() {
		out = append(out, c.Value)
	}
	for k, vs := range r.URL.Query() {
		if isSensitiveField(k) {
			out = append(out, vs...)
		}
	}
	if r.URL.User != nil {
		pw, _ := r.URL.User.Password()
		out = append(out, r.URL.User.Username(), pw)
	}
	return out
}
