package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
)

// lineWriter serialises whole JSON-RPC lines onto the peer's input: the
// SDK's messages and the ones the bridge writes itself (parse errors, raw
// fault updates) never interleave. It counts the lines written so a waiter
// can tell when the next one went out.
type lineWriter struct {
	mu    sync.Mutex
	w     io.Writer
	lines uint64
	wake  chan struct{} // closed and replaced on every write
}

func newLineWriter(w io.Writer) *lineWriter {
	return &lineWriter{w: w, wake: make(chan struct{})}
}

// Write writes p, which must be one or more whole lines, atomically.
func (lw *lineWriter) Write(p []byte) (int, error) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	n, err := lw.w.Write(p)
	lw.lines++
	close(lw.wake)
	lw.wake = make(chan struct{})
	return n, err
}

// count returns the number of writes so far and a channel closed by the
// next one.
func (lw *lineWriter) count() (uint64, <-chan struct{}) {
	lw.mu.Lock()
	defer lw.mu.Unlock()
	return lw.lines, lw.wake
}

// waitPast blocks until more than n writes happened, or ctx is done.
func (lw *lineWriter) waitPast(ctx context.Context, n uint64) error {
	for {
		c, wake := lw.count()
		if c > n {
			return nil
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// writeJSON writes v as one line.
func (lw *lineWriter) writeJSON(v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encode message: %w", err)
	}
	if _, err := lw.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("write message: %w", err)
	}
	return nil
}

// maxLine is the longest input line accepted; the SDK's own limit is 10 MiB.
const maxLine = 10 << 20

// rpcError is a JSON-RPC error response the bridge writes itself.
type rpcError struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Error   rpcErrorBody    `json:"error"`
}

type rpcErrorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// filterInput copies well-formed JSON-RPC lines from in to out (the SDK's
// reader) and answers every malformed one itself, so that the agent keeps
// serving: the SDK only logs and drops such lines, leaving the client
// without an answer. A line that is not JSON gets a -32700 Parse error; JSON
// that is not a request, notification or response object gets -32600
// Invalid Request (with the request's id when one can be read). It closes
// out when in ends, which tells the SDK the peer went away.
func filterInput(in io.Reader, out *io.PipeWriter, lw *lineWriter, log *slog.Logger) {
	br := bufio.NewReaderSize(in, 64<<10)
	var err error
	for {
		var line []byte
		line, err = readLine(br)
		if len(bytes.TrimSpace(line)) > 0 {
			if e := checkMessage(line); e != nil {
				log.Warn("malformed JSON-RPC input answered with an error", "code", e.Error.Code, "reason", e.Error.Data)
				if werr := lw.writeJSON(e); werr != nil {
					log.Error("answer malformed input", "err", werr)
				}
			} else if _, werr := out.Write(append(bytes.TrimRight(line, "\r\n"), '\n')); werr != nil {
				err = werr
				break
			}
		}
		if err != nil {
			break
		}
	}
	if errors.Is(err, io.EOF) {
		err = nil
	}
	out.CloseWithError(err)
}

// readLine reads one line; a line longer than maxLine is consumed and
// returned truncated (it then fails to parse and gets a parse error).
func readLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) <= maxLine {
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, err
	}
}

// checkMessage returns the error response for a malformed line, or nil.
func checkMessage(line []byte) *rpcError {
	null := json.RawMessage("null")
	if !json.Valid(line) {
		return &rpcError{JSONRPC: "2.0", ID: null, Error: rpcErrorBody{Code: -32700, Message: "Parse error", Data: map[string]any{"error": "invalid JSON"}}}
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		return &rpcError{JSONRPC: "2.0", ID: null, Error: rpcErrorBody{Code: -32600, Message: "Invalid request", Data: map[string]any{"error": "a JSON-RPC message must be a JSON object"}}}
	}
	id := null
	if raw, ok := obj["id"]; ok {
		var v any
		if json.Unmarshal(raw, &v) == nil {
			switch v.(type) {
			case string, float64, nil:
				id = raw
			default:
				return &rpcError{JSONRPC: "2.0", ID: null, Error: rpcErrorBody{Code: -32600, Message: "Invalid request", Data: map[string]any{"error": "id must be a string, a number or null"}}}
			}
		}
	}
	invalid := func(msg string) *rpcError {
		return &rpcError{JSONRPC: "2.0", ID: id, Error: rpcErrorBody{Code: -32600, Message: "Invalid request", Data: map[string]any{"error": msg}}}
	}
	if raw, ok := obj["method"]; ok {
		var m string
		if json.Unmarshal(raw, &m) != nil || m == "" {
			return invalid("method must be a non-empty string")
		}
		return nil
	}
	_, hasID := obj["id"]
	_, hasResult := obj["result"]
	_, hasError := obj["error"]
	if hasID && (hasResult || hasError) {
		return nil // a response to one of our requests
	}
	return invalid("neither a request, a notification nor a response")
}
