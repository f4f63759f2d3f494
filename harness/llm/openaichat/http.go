package openaichat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/todoharness/todoharness/internal/textcut"
)

// Bounds on what is read of an answer.
const (
	// maxAnswer is the largest stream:false answer read.
	maxAnswer = 64 << 20
	// maxErrorBody is how much of an error answer (HTTP status >= 400) is
	// read for its message.
	maxErrorBody = 1 << 20
	// maxMessage is the longest API error message kept, in bytes.
	maxMessage = 4 << 10
	// maxSnippet is how much of an answer that could not be read an error
	// quotes, in bytes.
	maxSnippet = 200
)

// Retry timing, as openai-go's: 0.5 s doubled on each retry, at most 8 s,
// less up to a quarter at random; a Retry-After (or retry-after-ms) of the
// answer is waited instead when it is at most maxRetryDelay, and a longer
// one ends the retries.
const (
	firstRetryDelay = 500 * time.Millisecond
	maxRetryDelay   = 8 * time.Second
)

// userAgent names this client; it carries no version, so that a rebuilt
// cassette (cassette from-log) is the same bytes in every build.
const userAgent = "todoharness-openaichat"

// APIError is an error answer of the API (HTTP status >= 400) with the
// message of its error body (OpenAI's shape: {"error":{"message","type",
// "code"}}; a body of another shape gives its text as the message).
type APIError struct {
	StatusCode int
	Type       string
	Code       string
	Message    string
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("model API error: %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// wrapErr says which call failed, and that the context ended when it did.
func wrapErr(ctx context.Context, what string, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("llm: %s: %w (%w)", what, ctxErr, err)
	}
	return fmt.Errorf("llm: %s: %w", what, err)
}

// post sends body to the chat-completions endpoint, retrying as
// ClientConfig.MaxRetries allows, and returns a 2xx answer whose body the
// caller closes. An error answer is an *APIError.
func (c *Client) post(ctx context.Context, what string, body *chatRequest) (*http.Response, error) {
	data, err := marshal(body)
	if err != nil {
		return nil, fmt.Errorf("llm: %s: encode the request: %w", what, err)
	}
	for attempt := 0; ; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.url, bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("llm: %s: %w", what, err)
		}
		// The Host header is the URL's either way; an empty Host is how
		// openai-go built its requests, and what the cassettes recorded
		// through it hold (host: "").
		req.Host = ""
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json")
		if body.Stream {
			req.Header.Set("Accept", "text/event-stream")
		}
		req.Header.Set("User-Agent", userAgent)
		if c.cfg.APIKey != "" {
			req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
		}
		res, err := c.hc.Do(req)
		if ctx.Err() != nil {
			if res != nil {
				_ = res.Body.Close()
			}
			return nil, wrapErr(ctx, what, ctx.Err())
		}
		if err == nil && res.StatusCode < 400 {
			return res, nil
		}
		var apiErr *APIError
		if err == nil {
			apiErr = readAPIError(res)
		}
		if attempt >= c.cfg.MaxRetries || !retryable(res, err) {
			if apiErr != nil {
				return nil, fmt.Errorf("llm: %s: %w", what, apiErr)
			}
			return nil, wrapErr(ctx, what, err)
		}
		delay, ok := retryDelay(res, attempt)
		if !ok {
			return nil, fmt.Errorf("llm: %s: %w (the answer asks to wait longer than %s before a retry)", what, apiErr, maxRetryDelay)
		}
		t := time.NewTimer(delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, wrapErr(ctx, what, ctx.Err())
		case <-t.C:
		}
	}
}

// marshal encodes the request as openai-go did: compact, <, > and & not
// escaped.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// retryable is openai-go's rule: the answer's x-should-retry header when it
// has one, else a connection error, 408, 409, 429 or a 5xx.
func retryable(res *http.Response, err error) bool {
	if err != nil {
		return true
	}
	switch res.Header.Get("X-Should-Retry") {
	case "true":
		return true
	case "false":
		return false
	}
	s := res.StatusCode
	return s == http.StatusRequestTimeout || s == http.StatusConflict || s == http.StatusTooManyRequests || s >= 500
}

// retryDelay is the wait before retry attempt+1, and false when the answer
// asks for a longer wait than maxRetryDelay.
func retryDelay(res *http.Response, attempt int) (time.Duration, bool) {
	if res != nil {
		if ms, err := strconv.ParseFloat(res.Header.Get("Retry-After-Ms"), 64); err == nil && ms >= 0 {
			d := time.Duration(ms * float64(time.Millisecond))
			return d, d <= maxRetryDelay
		}
		if v := res.Header.Get("Retry-After"); v != "" {
			if s, err := strconv.ParseFloat(v, 64); err == nil && s >= 0 {
				d := time.Duration(s * float64(time.Second))
				return d, d <= maxRetryDelay
			}
			if t, err := http.ParseTime(v); err == nil {
				d := max(time.Until(t), 0)
				return d, d <= maxRetryDelay
			}
		}
	}
	d := min(firstRetryDelay<<min(attempt, 10), maxRetryDelay)
	return d - rand.N(d/4), true
}

// readAPIError reads an error answer (and closes its body).
func readAPIError(res *http.Response) *APIError {
	defer func() { _ = res.Body.Close() }()
	e := &APIError{StatusCode: res.StatusCode}
	raw, err := readAtMost(res.Body, maxErrorBody)
	var body struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	switch {
	case json.Unmarshal(raw, &body) == nil && len(body.Error) > 0 && string(body.Error) != "null":
		var obj apiErrorBody
		if json.Unmarshal(body.Error, &obj) == nil {
			e.Type, e.Code, e.Message = obj.Type, rawCode(obj.Code), obj.Message
		} else if json.Unmarshal(body.Error, &e.Message) != nil {
			e.Message = string(body.Error)
		}
	case body.Message != "":
		e.Message = body.Message
	default:
		e.Message = strings.TrimSpace(string(raw))
	}
	if err != nil {
		e.Message = strings.TrimSpace(e.Message + " (reading the error answer: " + err.Error() + ")")
	}
	e.Message = textcut.Truncate(e.Message, maxMessage)
	return e
}

// apiErrorBody is the "error" object of an OpenAI-shaped error.
type apiErrorBody struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

// rawCode is an error code as text: a string's value, a number as written,
// null or absent as "".
func rawCode(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return string(raw)
}

// streamError is the error of an "error" object sent inside an event
// stream.
func streamError(raw json.RawMessage) error {
	var obj apiErrorBody
	if json.Unmarshal(raw, &obj) != nil || obj.Message == "" {
		return fmt.Errorf("the API sent an error event: %s", snippet(raw))
	}
	msg := textcut.Truncate(obj.Message, maxMessage)
	if code := rawCode(obj.Code); code != "" || obj.Type != "" {
		return fmt.Errorf("the API sent an error event: %s (type %q, code %q)", msg, obj.Type, code)
	}
	return fmt.Errorf("the API sent an error event: %s", msg)
}

// readAtMost reads r to its end, failing when it holds more than limit
// bytes.
func readAtMost(r io.Reader, limit int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return b, err
	}
	if int64(len(b)) > limit {
		return b[:limit], fmt.Errorf("the answer is longer than %d bytes", limit)
	}
	return b, nil
}

// snippet quotes the start of an answer that could not be read.
func snippet(b []byte) string {
	return strconv.Quote(textcut.Truncate(string(b), maxSnippet))
}
