package openaichat_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/llm/openaichat"
)

// answers is a server on 127.0.0.1 that gives the i-th request the i-th
// handler (the last one again when they run out) and keeps the requests.
type answers struct {
	*httptest.Server
	mu   sync.Mutex
	reqs []*http.Request
}

func serve(t *testing.T, hs ...http.HandlerFunc) *answers {
	t.Helper()
	a := &answers{}
	a.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		a.mu.Lock()
		a.reqs = append(a.reqs, r)
		n := len(a.reqs)
		a.mu.Unlock()
		hs[min(n, len(hs))-1](w, r)
	}))
	t.Cleanup(a.Close)
	return a
}

func (a *answers) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.reqs)
}

func (a *answers) client(t *testing.T, base string, mods ...func(*openaichat.ClientConfig)) *openaichat.Client {
	t.Helper()
	return newClient(t, openaichat.ClientConfig{BaseURL: a.URL + base, Model: "m", HTTPClient: a.Client()}, mods...)
}

func status(code int, contentType, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.WriteHeader(code)
		_, _ = io.WriteString(w, body)
	}
}

const okStream = "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"

func okSSE() http.HandlerFunc { return status(200, "text/event-stream", okStream) }

// The request goes to base/chat/completions with the headers of a JSON
// POST; the key only when there is one.
func TestRequestLine(t *testing.T) {
	for _, tc := range []struct{ base, path string }{
		{"", "/chat/completions"},
		{"/v1", "/v1/chat/completions"},
		{"/v1/", "/v1/chat/completions"},
		{"/v1?api-version=1", "/v1/chat/completions"},
	} {
		a := serve(t, okSSE())
		if _, err := a.client(t, tc.base, func(c *openaichat.ClientConfig) { c.APIKey = "k" }).Stream(testCtx(t), hello, nil); err != nil {
			t.Fatal(err)
		}
		r := a.reqs[0]
		if r.Method != http.MethodPost || r.URL.Path != tc.path || r.URL.RawQuery != "" {
			t.Errorf("base %q: %s %s, want POST %s", tc.base, r.Method, r.URL, tc.path)
		}
		for h, want := range map[string]string{"Content-Type": "application/json", "Accept": "text/event-stream",
			"Authorization": "Bearer k", "User-Agent": "todoharness-openaichat"} {
			if got := r.Header.Get(h); got != want {
				t.Errorf("%s: %q, want %q", h, got, want)
			}
		}
	}
	a := serve(t, status(200, "application/json", `{"choices":[{"message":{"content":"ok"},"finish_reason":"stop"}]}`))
	if _, err := a.client(t, "", func(c *openaichat.ClientConfig) { c.DisableStreaming = true }).Stream(testCtx(t), hello, nil); err != nil {
		t.Fatal(err)
	}
	if r := a.reqs[0]; r.Header.Get("Accept") != "application/json" || r.Header.Values("Authorization") != nil {
		t.Errorf("stream:false without a key: Accept %q, Authorization %q", r.Header.Get("Accept"), r.Header.Values("Authorization"))
	}
}

// Error answers of every shape say the status and what the body said.
func TestErrorAnswers(t *testing.T) {
	long := strings.Repeat("é", 5000)
	for _, tc := range []struct {
		name              string
		answer            http.HandlerFunc
		want              string
		wantType, wantCod string
	}{
		{"OpenAI's shape", status(400, "application/json", `{"error":{"message":"bad model","type":"invalid_request_error","param":"model","code":"model_not_found"}}`),
			"llm: chat completions stream: model API error: 400 Bad Request: bad model", "invalid_request_error", "model_not_found"},
		{"a numeric code", status(429, "application/json", `{"error":{"message":"slow down","type":"rate_limit","code":429}}`),
			"model API error: 429 Too Many Requests: slow down", "rate_limit", "429"},
		{"error as a string", status(403, "application/json", `{"error":"forbidden here"}`),
			"model API error: 403 Forbidden: forbidden here", "", ""},
		{"a top-level message", status(404, "application/json", `{"message":"no such route"}`),
			"model API error: 404 Not Found: no such route", "", ""},
		{"a text body", status(502, "text/html", "  <html>bad gateway</html>\n"),
			"model API error: 502 Bad Gateway: <html>bad gateway</html>", "", ""},
		{"an empty body", status(503, "", ""),
			"model API error: 503 Service Unavailable", "", ""},
		{"a long message, cut between characters", status(400, "application/json", `{"error":{"message":"`+long+`"}}`),
			"model API error: 400 Bad Request: " + long[:4096] + "…", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := serve(t, tc.answer)
			_, err := a.client(t, "/v1").Stream(testCtx(t), hello, nil)
			var apiErr *openaichat.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %v (%T), want an *APIError", err, err)
			}
			if !strings.HasSuffix(err.Error(), tc.want) || apiErr.Type != tc.wantType || apiErr.Code != tc.wantCod {
				t.Errorf("error %q (type %q, code %q), want it to end %q (type %q, code %q)", err, apiErr.Type, apiErr.Code, tc.want, tc.wantType, tc.wantCod)
			}
		})
	}
}

// Retries: none by default; with MaxRetries, a 5xx, 429 or dropped
// connection is retried, x-should-retry and a long Retry-After are
// honoured, a 4xx is not retried.
func TestRetries(t *testing.T) {
	fail := status(500, "application/json", `{"error":{"message":"boom"}}`, "Retry-After-Ms", "1")
	for _, tc := range []struct {
		name     string
		answers  []http.HandlerFunc
		retries  int
		requests int
		wantErr  string
	}{
		{"none by default", []http.HandlerFunc{fail, okSSE()}, 0, 1, "500 Internal Server Error: boom"},
		{"a 500, then an answer", []http.HandlerFunc{fail, okSSE()}, 2, 2, ""},
		{"as many as allowed", []http.HandlerFunc{fail}, 2, 3, "500 Internal Server Error: boom"},
		{"a 429 after Retry-After 0", []http.HandlerFunc{status(429, "", "", "Retry-After", "0"), okSSE()}, 1, 2, ""},
		{"a dropped connection", []http.HandlerFunc{func(http.ResponseWriter, *http.Request) { panic(http.ErrAbortHandler) }, okSSE()}, 1, 2, ""},
		{"not a 400", []http.HandlerFunc{status(400, "", `{"error":{"message":"no"}}`, "Retry-After-Ms", "1"), okSSE()}, 2, 1, "400 Bad Request: no"},
		{"x-should-retry: false", []http.HandlerFunc{status(500, "", "", "X-Should-Retry", "false"), okSSE()}, 2, 1, "500 Internal Server Error"},
		{"x-should-retry: true on a 400", []http.HandlerFunc{status(400, "", "", "X-Should-Retry", "true", "Retry-After-Ms", "1"), okSSE()}, 2, 2, ""},
		{"a Retry-After longer than 8 s", []http.HandlerFunc{status(503, "", "busy", "Retry-After", "60"), okSSE()}, 2, 1, "503 Service Unavailable: busy (the answer asks to wait longer than 8s before a retry)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := serve(t, tc.answers...)
			r, err := a.client(t, "/v1", func(c *openaichat.ClientConfig) { c.MaxRetries = tc.retries }).Stream(testCtx(t), hello, nil)
			if tc.wantErr == "" && err != nil {
				t.Fatal(err)
			}
			if tc.wantErr != "" && (err == nil || !strings.HasSuffix(err.Error(), tc.wantErr)) {
				t.Errorf("error %v, want it to end %q", err, tc.wantErr)
			}
			if err == nil && r.Content[0].Text != "ok" {
				t.Errorf("answer %+v", r.Content)
			}
			if n := a.count(); n != tc.requests {
				t.Errorf("%d requests, want %d", n, tc.requests)
			}
		})
	}
}

// The wait between retries ends with the context.
func TestRetryWaitEndsWithTheContext(t *testing.T) {
	a := serve(t, status(500, "", "", "Retry-After", "8"))
	ctx, cancel := context.WithTimeout(testCtx(t), 200*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := a.client(t, "/v1", func(c *openaichat.ClientConfig) { c.MaxRetries = 3 }).Stream(ctx, hello, nil)
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v, want the context's deadline", err)
	}
	if d := time.Since(start); d > 7*time.Second {
		t.Errorf("returned after %s: it waited out the Retry-After", d)
	}
}

// Answers that are not what was asked for say what they were.
func TestUnreadableAnswers(t *testing.T) {
	for _, tc := range []struct {
		name   string
		stream bool
		answer http.HandlerFunc
		want   string
	}{
		{"JSON to a stream request", true, status(200, "application/json", `{"choices":[]}`),
			`llm: chat completions stream: the answer (Content-Type "application/json") holds no server-sent event`},
		{"an event that is not JSON", true, status(200, "text/event-stream", "data: {\"choices\":[]}\n\ndata: not json\n\n"),
			`llm: chat completions stream: event 2: invalid character 'o' in literal null (expecting 'u'): "not json"`},
		{"an error event", true, status(200, "text/event-stream", "data: {\"error\":{\"message\":\"overloaded\",\"type\":\"server_error\",\"code\":null}}\n\n"),
			`llm: chat completions stream: event 1: the API sent an error event: overloaded (type "server_error", code "")`},
		{"an error event without a message", true, status(200, "text/event-stream", "data: {\"error\":{\"code\":7}}\n\n"),
			`llm: chat completions stream: event 1: the API sent an error event: "{\"code\":7}"`},
		{"a stream without a finish reason", true, status(200, "text/event-stream", "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"x\"}}]}\n\ndata: [DONE]\n\n"),
			"llm: chat completions stream ended without a finish reason (connection closed mid-stream?)"},
		{"HTML to a stream:false request", false, status(200, "text/html", "<html>login</html>"),
			`llm: chat completions: the answer is not a chat completion: invalid character '<' looking for beginning of value: "<html>login</html>"`},
		{"no choices", false, status(200, "application/json", `{"choices":[]}`), "llm: chat completions: answer has no choices"},
		{"no finish reason", false, status(200, "application/json", `{"choices":[{"message":{"content":"x"}}]}`), "llm: chat completions: answer has no finish reason"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := serve(t, tc.answer)
			_, err := a.client(t, "/v1", func(c *openaichat.ClientConfig) { c.DisableStreaming = !tc.stream }).Stream(testCtx(t), hello, nil)
			if err == nil || err.Error() != tc.want {
				t.Errorf("error %v\nwant       %s", err, tc.want)
			}
		})
	}
}

// "error": null in a chunk is no error; the rest of the stream is read.
func TestNullErrorFieldIsNoError(t *testing.T) {
	a := serve(t, status(200, "text/event-stream", "data: {\"error\":null,\"choices\":[{\"index\":0,\"delta\":{\"content\":\"ok\"},\"finish_reason\":\"stop\"}]}\n\n"))
	r, err := a.client(t, "/v1").Stream(testCtx(t), hello, nil)
	if err != nil || r.Content[0].Text != "ok" {
		t.Fatalf("answer %+v, error %v", r.Content, err)
	}
}

// Tool parameters that are not a JSON object are refused before anything
// is sent.
func TestBadToolParameters(t *testing.T) {
	a := serve(t, okSSE())
	req := hello
	req.Tools = []llm.ToolSpec{{Name: "t", Parameters: []byte(`[1]`)}}
	_, err := a.client(t, "/v1").Stream(testCtx(t), req, nil)
	if err == nil || !strings.HasPrefix(err.Error(), "llm: tools[0] t: parameters must be a JSON object") || a.count() != 0 {
		t.Errorf("error %v after %d requests", err, a.count())
	}
}
