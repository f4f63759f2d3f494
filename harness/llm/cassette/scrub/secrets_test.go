package scrub

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"testing"

	vcr "gopkg.in/dnaeon/go-vcr.v3/cassette"
	"gopkg.in/yaml.v3"

	"github.com/todoharness/todoharness/harness/llm/cassette"
)

const unitSecret = "sk-ant-FAKEunit0123456789/abcXYZ"

// forms are the encodings of unitSecret a body may carry.
func forms() map[string]string {
	var u strings.Builder
	for _, r := range unitSecret {
		fmt.Fprintf(&u, `\u%04X`, r)
	}
	b64 := base64.StdEncoding.EncodeToString([]byte("user:" + unitSecret))
	return map[string]string{
		"plain":             unitSecret,
		"json \\/":          strings.ReplaceAll(unitSecret, "/", `\/`),
		"json \\u all":      u.String(),
		"json \\u one":      `\u0073` + unitSecret[1:],
		"url query":         url.QueryEscape(unitSecret),
		"url path":          url.PathEscape(unitSecret),
		"base64 alone":      base64.StdEncoding.EncodeToString([]byte(unitSecret)),
		"base64 url raw":    base64.RawURLEncoding.EncodeToString([]byte(unitSecret)),
		"base64 user:key":   b64,
		"base64 offset one": base64.StdEncoding.EncodeToString([]byte("x" + unitSecret)),
	}
}

func TestKnownSecretsAreScrubbedInEveryForm(t *testing.T) {
	s := New([]string{unitSecret})
	for name, f := range forms() {
		text := "before " + f + " after"
		got := s.text(text)
		if got == text || !strings.Contains(got, Redacted) || !strings.HasPrefix(got, "before ") || !strings.HasSuffix(got, " after") {
			t.Errorf("%s: text %q scrubbed to %q", name, text, got)
		}
		if f := ScanSecrets([]byte(text), []string{unitSecret}); len(f) == 0 {
			t.Errorf("%s: ScanSecrets misses %q", name, text)
		}
		if f := ScanSecrets([]byte(got), []string{unitSecret}); len(f) > 0 {
			t.Errorf("%s: ScanSecrets still finds %v in %q", name, f, got)
		}
	}
}

// Each wire's stream, with the secret split across two consecutive deltas.
func splitStreams() map[string]string {
	a, b := unitSecret[:9], unitSecret[9:]
	return map[string]string{
		"openai-chat": `data: {"choices":[{"delta":{"content":"key ` + a + `"}}]}` + "\n\n" +
			`data: {"choices":[{"delta":{"content":"` + b + ` ok"}}]}` + "\n\ndata: [DONE]\n\n",
		"openai-responses": "event: response.output_text.delta\n" + `data: {"type":"response.output_text.delta","delta":"key ` + a + `"}` + "\n\n" +
			"event: response.output_text.delta\n" + `data: {"type":"response.output_text.delta","delta":"` + b + ` ok"}` + "\n\n",
		"anthropic": "event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"c\":\"` + a + `"}}` + "\n\n" +
			"event: content_block_delta\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"` + b + `\"}"}}` + "\n\n",
		"gemini": `data: {"candidates":[{"content":{"parts":[{"text":"key ` + a + `"}]}}]}` + "\r\n\r\n" +
			`data: {"candidates":[{"content":{"parts":[{"text":"` + b + ` ok"}]}}]}` + "\r\n\r\n",
	}
}

func TestSecretsSplitAcrossStreamDeltasAreScrubbed(t *testing.T) {
	for wire, body := range splitStreams() {
		if f := ScanSecrets([]byte(body), []string{unitSecret}); len(f) != 0 {
			// The raw text never holds the secret whole: only the joined
			// deltas do, which the cassette-aware scan below looks at.
			t.Logf("%s: raw scan: %v", wire, f)
		}
		got := New([]string{unitSecret}).Body(body)
		for _, part := range []string{unitSecret[:9], unitSecret[9:]} {
			if strings.Contains(got, part) {
				t.Errorf("%s: %q kept in\n%s", wire, part, got)
			}
		}
		if !strings.Contains(got, Redacted) {
			t.Errorf("%s: no marker in\n%s", wire, got)
		}
		for _, j := range joinedStrings(body) {
			if strings.Contains(j, unitSecret) {
				goto joined
			}
		}
		t.Errorf("%s: the joined deltas do not hold the secret: the spec proves nothing", wire)
	joined:
		if f := ScanSecrets(cassetteWith(body), []string{unitSecret}); len(f) == 0 {
			t.Errorf("%s: a cassette holding the split secret passes the scan", wire)
		}
		if f := ScanSecrets(cassetteWith(got), []string{unitSecret}); len(f) != 0 {
			t.Errorf("%s: the scrubbed stream still fails the scan: %v", wire, f)
		}
	}
}

// cassetteWith is a minimal cassette whose one response body is body.
func cassetteWith(body string) []byte {
	i := &vcr.Interaction{Request: vcr.Request{Method: "POST", URL: "https://api.example.com/v1/x"},
		Response: vcr.Response{Code: 200, Body: body}}
	raw, err := yamlOf(i)
	if err != nil {
		panic(err)
	}
	out, err := cassette.WithProvenance(raw, cassette.Provenance{Source: cassette.SourceRealModel, RealModelOutput: true, Description: "d",
		APIHost: "api.example.com", BaseURL: "https://api.example.com/v1", Model: "m", RecordedAt: "2026-01-01", ToolVersion: "t"})
	if err != nil {
		panic(err)
	}
	return out
}

func TestKeyPatternsAreFlaggedWithoutTheValue(t *testing.T) {
	for kind, text := range map[string]string{
		"openai":      "sk-proj-abcdefghijklmnop0123",
		"anthropic":   "sk-ant-api03-abcdefghijklmnop",
		"google":      "AIzaSyA-abcdefghijklmnopqrstuvwxyz01234",
		"azure":       "api-key value 0123456789abcdef0123456789abcdef end",
		"jwt":         "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
		"basic":       "Authorization was Basic dXNlcjpwYXNzd29yZA==",
		"url":         "https://apiuser:SuperSecretPassw0rd@host.example/v1",
		"json-esc":    `"\u0073k-proj-abcdefghijklmnop0123"`,
		"url-encoded": "key%3Dsk%2Dproj%2Dabcdefghijklmnop0123",
		"base64":      base64.StdEncoding.EncodeToString([]byte("the key sk-proj-abcdefghijklmnop0123")),
	} {
		if f := ScanCredentials([]byte(text)); len(f) == 0 {
			t.Errorf("%s: %q not flagged", kind, text)
		}
		if got := New(nil).text(text); got == text && kind != "base64" {
			t.Errorf("%s: %q not scrubbed by pattern", kind, text)
		} else if kind == "json-esc" || kind == "url-encoded" {
			// Escaped, the whole escaped value goes: no key is left to
			// decode on a terminal (issue 42 item 21).
			if len(ScanCredentials([]byte(got))) > 0 {
				t.Errorf("%s: %q scrubbed to %q, which still decodes to a key", kind, text, got)
			}
		}
	}
	for _, ok := range []string{
		"the task-list of a risk-free bearer of news",
		`rawSha256: 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08`,
		"id: chatcmpl-mock-1, call_0123456789abcdef0123456789abcdef",
		"https://api.deepseek.com/chat/completions",
	} {
		if f := ScanCredentials([]byte(ok)); len(f) > 0 {
			t.Errorf("%q flagged: %v", ok, f)
		}
	}
}

// yamlOf is a go-vcr cassette file holding one interaction.
func yamlOf(i *vcr.Interaction) ([]byte, error) {
	return yaml.Marshal(map[string]any{"version": 2, "interactions": []*vcr.Interaction{i}})
}
