package record

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"net/http"
	"strings"
	"testing"

	vcr "gopkg.in/dnaeon/go-vcr.v3/cassette"

	"github.com/todoharness/todoharness/harness/llm/cassette"
)

func TestNormalizeDecodesGzipAndDropsVolatileValues(t *testing.T) {
	var zb bytes.Buffer
	zw := gzip.NewWriter(&zb)
	_, _ = zw.Write([]byte(`{"ok":true}`))
	_ = zw.Close()
	i := &vcr.Interaction{
		Request: vcr.Request{URL: "http://127.0.0.1:43211/v1/messages", Host: "127.0.0.1:43211"},
		Response: vcr.Response{Body: zb.String(), Duration: 12345, Headers: http.Header{
			"Content-Encoding": {"gzip"}, "Content-Length": {"31"}, "Date": {"Tue, 01 Dec 2026 10:00:00 GMT"},
			"X-Request-Id": {"req_1"}, "Anthropic-Ratelimit-Requests-Remaining": {"49"}, "Content-Type": {"application/json"},
		}},
	}
	if err := normalize(i); err != nil {
		t.Fatal(err)
	}
	if i.Response.Body != `{"ok":true}` || i.Response.Duration != 0 {
		t.Errorf("body %q duration %v", i.Response.Body, i.Response.Duration)
	}
	if len(i.Response.Headers) != 1 || i.Response.Headers.Get("Content-Type") == "" {
		t.Errorf("headers kept: %v", i.Response.Headers)
	}
	if i.Request.URL != "http://127.0.0.1/v1/messages" || i.Request.Host != "127.0.0.1" {
		t.Errorf("loopback port kept: %s %s", i.Request.URL, i.Request.Host)
	}
}

func TestProvenanceKeepsNoCredentialsAndNoLoopbackClaim(t *testing.T) {
	p, err := completeProvenance(cassette.Provenance{BaseURL: "https://apiuser:SuperSecretPassw0rd@api.example.com/v1", Model: "m",
		Agent: "agent --api-key sk-proj-abcdefghijklmnop0123"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(fmt.Sprint(p), "SuperSecret") || strings.Contains(fmt.Sprint(p), "apiuser") || strings.Contains(p.Agent, "abcdefghijklmnop") {
		t.Errorf("credentials kept in %+v", p)
	}
	bad := cassette.Provenance{Source: cassette.SourceSessionLog, RealModelOutput: true, Description: "d", APIHost: "127.0.0.1",
		BaseURL: "http://127.0.0.1/v1", Model: "m", RecordedAt: "r", ToolVersion: "t"}
	if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("a loopback real-model claim validates: %v", err)
	}
}
