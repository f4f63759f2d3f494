package acp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
	"testing/synctest"
	"time"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/todoharness/todoharness/harness/acp"
)

// answerTo waits for the agent's answer with the given raw id and decodes it.
func answerTo(t *testing.T, r *rig, id string) (result json.RawMessage, rpcErr *struct {
	Code    int
	Message string
}) {
	t.Helper()
	var line []byte
	settle(t, "an answer to id "+id, func() bool {
		for _, l := range r.conn.Wire.Lines() {
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			if json.Unmarshal(l, &m) == nil && string(m.ID) == id {
				line = l
				return true
			}
		}
		return false
	})
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code    int
			Message string
		} `json:"error"`
	}
	if err := json.Unmarshal(line, &m); err != nil {
		t.Fatalf("answer to %s: %v", id, err)
	}
	return m.Result, m.Error
}

// padded returns a JSON-RPC line of exactly n bytes (newline excluded) made
// of head, a padding string and tail.
func padded(t *testing.T, n int, head, tail string) string {
	t.Helper()
	pad := n - len(head) - len(tail)
	if pad < 0 {
		t.Fatalf("line of %d bytes cannot hold %q…%q", n, head, tail)
	}
	line := head + strings.Repeat("x", pad) + tail
	if !json.Valid([]byte(line)) {
		t.Fatalf("padded line is not JSON: %.80s…", line)
	}
	return line
}

// A line that fits the limit with its newline is served; one byte more is
// answered with an error that names the limit and carries the id, and the
// agent keeps serving. (Before: exactly 10 MiB plus newline stopped the
// agent's reader for good, "token too long", and over-long prompts were
// answered with id null.)
func TestOverlongLinesAreAnsweredWithTheirIDAndTheAgentKeepsServing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		model := newFake(fakeTurn{text: "ok"})
		r := start(t, "", model)
		id := r.newSession()
		newHead := func(rid string) string {
			return `{"jsonrpc":"2.0","id":` + rid + `,"method":"session/new","params":{"cwd":"` + cwd + `","mcpServers":[],"_meta":{"pad":"`
		}
		// Exactly at the limit: MaxLine-1 bytes plus the newline.
		if err := r.conn.WriteRaw(padded(t, acp.MaxLine-1, newHead(`"fits"`), `"}}}`)); err != nil {
			t.Fatal(err)
		}
		if res, e := answerTo(t, r, `"fits"`); e != nil || !bytes.Contains(res, []byte("sessionId")) {
			t.Fatalf("a line of exactly %d bytes with its newline: result %s, error %+v; want a session", acp.MaxLine, res, e)
		}
		cases := []struct {
			name, rid string
			size      int
			line      func(rid string, size int) string
		}{
			{"one byte over (10 MiB plus newline)", `"over-by-one"`, acp.MaxLine, func(rid string, n int) string { return padded(t, n, newHead(rid), `"}}}`) }},
			{"11 MB prompt", `11`, 11_000_000, func(rid string, n int) string {
				return padded(t, n, `{"jsonrpc":"2.0","id":`+rid+`,"method":"session/prompt","params":{"sessionId":"`+id+`","prompt":[{"type":"text","text":"`, `"}]}}`)
			}},
			{"11 MB prompt, id last", `"id-last"`, 11_000_000, func(rid string, n int) string {
				return padded(t, n, `{"jsonrpc":"2.0","method":"session/prompt","params":{"sessionId":"`+id+`","prompt":[{"type":"text","text":"a \"quoted\" }{ ] ,\"id\":1 `, `"}]},"id":`+rid+`}`)
			}},
			{"50 MB prompt", `"fifty"`, 50_000_000, func(rid string, n int) string {
				return padded(t, n, `{"jsonrpc":"2.0","id":`+rid+`,"method":"session/prompt","params":{"sessionId":"`+id+`","prompt":[{"type":"text","text":"`, `"}]}}`)
			}},
		}
		for _, c := range cases {
			if err := r.conn.WriteRaw(c.line(c.rid, c.size)); err != nil {
				t.Fatal(err)
			}
			res, e := answerTo(t, r, c.rid)
			if e == nil {
				t.Errorf("%s: answered %s, want an error", c.name, res)
				continue
			}
			if e.Code != -32600 || !strings.Contains(e.Message, fmt.Sprint(acp.MaxLine)) || !strings.Contains(e.Message, fmt.Sprint(c.size+1)) {
				t.Errorf("%s: error %d %q, want -32600 naming the size %d and the limit %d", c.name, e.Code, e.Message, c.size+1, acp.MaxLine)
			}
		}
		// Still serving, and none of the over-long prompts ran.
		if sr := r.prompt(id, "still there?"); sr != sdk.StopReasonEndTurn {
			t.Errorf("prompt after the over-long lines: %q, want end_turn", sr)
		}
		if n := len(model.requests()); n != 1 {
			t.Errorf("the model was asked %d times, want once (by the last prompt only)", n)
		}
	})
}

// Before initialize the agent serves nothing but initialize.
func TestRequestsBeforeInitializeAreRefused(t *testing.T) {
	r := startUninitialized(t, newFake())
	_, err := r.conn.NewSessionIn(r.ctx, cwd)
	var re *sdk.RequestError
	if !errors.As(err, &re) || re.Code != -32600 || !strings.Contains(re.Message, "before initialize") {
		t.Fatalf("session/new before initialize: %v, want -32600 naming initialize", err)
	}
	if err := r.conn.Load(r.ctx, "some-id", cwd); !errors.As(err, &re) || re.Code != -32600 {
		t.Errorf("session/load before initialize: %v, want -32600", err)
	}
	if _, err := r.conn.Init(r.ctx); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if _, err := r.conn.NewSessionIn(r.ctx, cwd); err != nil {
		t.Errorf("session/new after initialize: %v", err)
	}
}

// An input that fails (not one that ends) makes Serve return the error, so
// that `todoharness agent` exits non-zero instead of 0.
func TestServeReportsAFailedInput(t *testing.T) {
	b := newBridge(t, nil)
	boom := errors.New("disk on fire")
	in := io.MultiReader(strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}`+"\n"), iotest.ErrReader(boom))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err := b.Serve(ctx, in, io.Discard)
	if !errors.Is(err, boom) || !strings.Contains(err.Error(), "read input") {
		t.Errorf("Serve = %v, want the input's error", err)
	}
}
