package openaichat_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/llm/openaichat"
	"github.com/todoharness/todoharness/mockmodel"
)

// The client against the mock model server on 127.0.0.1, streaming and
// not.

func mockClient(t *testing.T, srv *mockmodel.Server, stream bool, mods ...func(*openaichat.ClientConfig)) *openaichat.Client {
	t.Helper()
	return newClient(t, openaichat.ClientConfig{BaseURL: srv.BaseURL(), APIKey: "test-key", Model: "mock",
		HTTPClient: srv.Client(), DisableStreaming: !stream}, mods...)
}

// newClient is a client for cfg changed by mods.
func newClient(t *testing.T, cfg openaichat.ClientConfig, mods ...func(*openaichat.ClientConfig)) *openaichat.Client {
	t.Helper()
	for _, m := range mods {
		m(&cfg)
	}
	c, err := openaichat.NewClient(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func startMock(t *testing.T, turns ...mockmodel.Turn) *mockmodel.Server {
	t.Helper()
	srv := mockmodel.NewServer(&mockmodel.Script{Path: "test.yaml", Turns: turns})
	t.Cleanup(srv.Close)
	return srv
}

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

var hello = llm.Request{Messages: []llm.Message{{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartText, Text: "hi"}}}}}

func modes(t *testing.T, f func(t *testing.T, stream bool)) {
	for _, stream := range []bool{true, false} {
		name := "stream"
		if !stream {
			name = "stream:false"
		}
		t.Run(name, func(t *testing.T) { f(t, stream) })
	}
}

// A tool call's arguments arrive one byte per delta (multi-byte characters
// whole) and are put back together; reasoning, text and usage come through.
func TestToolCallArgumentsSplitOverManyChunks(t *testing.T) {
	args := `{"todos":[{"content":"read the code ✓ «ü» 🙂","status":"in_progress"},{"content":"write \"the\" fix\\n","status":"pending"}]}`
	modes(t, func(t *testing.T, stream bool) {
		srv := startMock(t, mockmodel.Turn{
			Reasoning: "think first", Text: "Planning.",
			ToolCalls: []mockmodel.ToolCall{{ID: "call_a", Name: "todo_write", RawArguments: args}, {ID: "call_b", Name: "other", RawArguments: `{}`}},
			ChunkSize: 1,
			Usage:     &llm.Usage{InputTokens: 120, OutputTokens: 45, CacheReadTokens: 30, ReasoningTokens: 7},
		})
		var deltas int
		r, err := mockClient(t, srv, stream).Stream(testCtx(t), hello, func(c llm.Chunk) error {
			if c.Type == llm.ChunkToolCallDelta && c.ID == "call_a" {
				deltas++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		calls := r.ToolCalls()
		if len(calls) != 2 || calls[0].ID != "call_a" || calls[0].Name != "todo_write" || calls[0].Arguments != args ||
			calls[1].ID != "call_b" || calls[1].Arguments != `{}` {
			t.Fatalf("tool calls %+v, want call_a todo_write %s and call_b other {}", calls, args)
		}
		if stream && deltas < 50 {
			t.Errorf("%d tool-call deltas for %d bytes of arguments at 1 byte a delta", deltas, len(args))
		}
		if r.Content[0].Type != llm.PartReasoning || r.Content[0].Text != "think first" || r.Content[1].Text != "Planning." {
			t.Errorf("content %+v, want the reasoning then the text", r.Content[:2])
		}
		want := llm.Usage{InputTokens: 120, OutputTokens: 45, CacheReadTokens: 30, ReasoningTokens: 7}
		if r.Usage == nil || *r.Usage != want {
			t.Errorf("usage %+v, want %+v", r.Usage, want)
		}
		if r.Finish.Kind != llm.FinishToolCalls {
			t.Errorf("finish %q, want tool-calls", r.Finish.Kind)
		}
		if errs := srv.Journal().Errors(); len(errs) > 0 {
			t.Errorf("the mock refused a request: %v", errs)
		}
	})
}

// A script with no turn left answers 410 in OpenAI's error shape: the
// error carries the status, the type, the code and the mock's message.
func TestAPIErrorOfTheMock(t *testing.T) {
	modes(t, func(t *testing.T, stream bool) {
		srv := startMock(t, mockmodel.Turn{Text: "one"})
		c := mockClient(t, srv, stream)
		if _, err := c.Stream(testCtx(t), hello, nil); err != nil {
			t.Fatal(err)
		}
		_, err := c.Stream(testCtx(t), hello, nil)
		var apiErr *openaichat.APIError
		if !errors.As(err, &apiErr) {
			t.Fatalf("error %v (%T), want an *APIError", err, err)
		}
		if apiErr.StatusCode != 410 || apiErr.Code != mockmodel.CodeExhausted || apiErr.Type != "invalid_request_error" ||
			!strings.HasPrefix(apiErr.Message, "test.yaml: no turn left for request 2") {
			t.Errorf("APIError %+v", apiErr)
		}
		if !strings.Contains(err.Error(), "model API error: 410 Gone: test.yaml: no turn left") {
			t.Errorf("error text %q", err)
		}
	})
}

// An injected 500 is not retried by default; with MaxRetries 1 the retry
// gets the script's next turn.
func TestHTTP500AndRetry(t *testing.T) {
	modes(t, func(t *testing.T, stream bool) {
		srv := startMock(t, mockmodel.Turn{Text: "x", Fault: mockmodel.FaultHTTP500}, mockmodel.Turn{Text: "after"})
		_, err := mockClient(t, srv, stream).Stream(testCtx(t), hello, nil)
		var apiErr *openaichat.APIError
		if !errors.As(err, &apiErr) || apiErr.StatusCode != 500 || !strings.Contains(apiErr.Message, "injected fault http-500") {
			t.Fatalf("error %v, want the mock's 500", err)
		}
		if n := srv.Journal().Len(); n != 1 {
			t.Fatalf("%d requests, want 1 (no retry by default)", n)
		}

		srv = startMock(t, mockmodel.Turn{Text: "x", Fault: mockmodel.FaultHTTP500}, mockmodel.Turn{Text: "after"})
		r, err := mockClient(t, srv, stream, func(c *openaichat.ClientConfig) { c.MaxRetries = 1 }).Stream(testCtx(t), hello, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Content[0].Text != "after" || srv.Journal().Len() != 2 {
			t.Errorf("answer %+v after %d requests, want the second turn after 2", r.Content, srv.Journal().Len())
		}
	})
}

// A stream the server drops after half its deltas fails, without hanging,
// after delivering the deltas it got.
func TestTornStream(t *testing.T) {
	modes(t, func(t *testing.T, stream bool) {
		srv := startMock(t, mockmodel.Turn{Text: "one two three four five six seven eight", Fault: mockmodel.FaultCloseMidStream})
		var texts int
		_, err := mockClient(t, srv, stream).Stream(testCtx(t), hello, func(c llm.Chunk) error {
			if c.Type == llm.ChunkTextDelta {
				texts++
			}
			return nil
		})
		if err == nil {
			t.Fatal("a torn answer succeeded")
		}
		if !strings.Contains(err.Error(), "llm: chat completions") {
			t.Errorf("error %q does not say which call failed", err)
		}
		if stream && texts == 0 {
			t.Error("no text delta delivered before the stream was torn")
		}
	})
}

// A hanging stream returns promptly once the context is cancelled, with
// the context's error.
func TestHangUntilCancelled(t *testing.T) {
	srv := startMock(t, mockmodel.Turn{Text: "one two three four", Fault: mockmodel.FaultHang})
	ctx, cancel := context.WithCancel(testCtx(t))
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := mockClient(t, srv, true).Stream(ctx, hello, func(c llm.Chunk) error {
			if c.Type == llm.ChunkTextDelta {
				cancel()
			}
			return nil
		})
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("error %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Stream did not return after its context was cancelled")
	}
}
