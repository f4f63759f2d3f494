package record

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	vcr "gopkg.in/dnaeon/go-vcr.v3/cassette"

	"github.com/todoharness/todoharness/harness/llm/cassette"
)

// volatileHeaders are response headers that change on every call without
// saying anything about the answer (dates, request ids, timings, rate-limit
// counters, routing): a cassette drops them, so that recording an unchanged
// scenario twice writes the same bytes.
func volatileHeader(name string) bool {
	l := strings.ToLower(name)
	switch l {
	case "date", "age", "expires", "last-modified", "etag", "x-request-id", "request-id", "cf-ray",
		"cf-cache-status", "openai-processing-ms", "openai-version", "openai-organization", "openai-project",
		"server-timing", "x-envoy-upstream-service-time", "alt-svc", "via", "x-cloud-trace-context",
		"x-ds-trace-id", "anthropic-organization-id", "report-to", "nel", "strict-transport-security",
		"x-amzn-trace-id", "apim-request-id", "x-ms-region", "x-ms-client-request-id", "traceparent":
		return true
	}
	for _, p := range []string{"x-ratelimit-", "anthropic-ratelimit-", "ratelimit-", "x-trace", "x-amz-"} {
		if strings.HasPrefix(l, p) {
			return true
		}
	}
	return false
}

// normalize makes an interaction the same bytes on every recording of the
// same exchange, and readable: the response body is stored decoded (a gzip
// or deflate body is decompressed, Content-Encoding and Content-Length
// dropped), volatile response headers are dropped, the duration is zero,
// and the ephemeral port of a loopback address is removed.
func normalize(i *vcr.Interaction) error {
	i.Response.Duration = 0
	if enc := strings.ToLower(http.Header(i.Response.Headers).Get("Content-Encoding")); enc != "" && enc != "identity" {
		body, err := decodeBody(enc, i.Response.Body)
		if err != nil {
			return fmt.Errorf("interaction %d: response body (Content-Encoding %s): %w", i.ID, enc, err)
		}
		i.Response.Body = body
		i.Response.Uncompressed = true
	}
	h := http.Header{}
	for k, vs := range i.Response.Headers {
		switch http.CanonicalHeaderKey(k) {
		case "Content-Encoding", "Content-Length":
			continue
		}
		if volatileHeader(k) {
			continue
		}
		h[k] = append([]string(nil), vs...)
	}
	i.Response.Headers = h
	if i.Response.Uncompressed {
		i.Response.ContentLength = int64(len(i.Response.Body))
		i.Response.Uncompressed = false
		i.Response.TransferEncoding = nil
	}
	i.Request.URL = withoutLoopbackPort(i.Request.URL)
	i.Request.Host = cassette.StripLoopbackPort(i.Request.Host)
	i.Request.RemoteAddr = ""
	return nil
}

func decodeBody(enc, body string) (string, error) {
	switch enc {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(strings.NewReader(body))
		if err != nil {
			return "", err
		}
		defer zr.Close()
		b, err := io.ReadAll(zr)
		return string(b), err
	}
	return "", fmt.Errorf("cannot store a body with Content-Encoding %q decoded", enc)
}

// withoutLoopbackPort removes the ephemeral port of a loopback URL: a
// recording against the local mock server must not change with its port.
func withoutLoopbackPort(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return raw
	}
	h := cassette.StripLoopbackPort(u.Host)
	if h == u.Host {
		return raw
	}
	u.Host = h
	return u.String()
}
