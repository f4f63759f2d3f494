package cassette

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
)

// SplitEvents splits a server-sent-events body at event boundaries (a blank
// line, "\n\n" or "\r\n\r\n"). Each piece keeps its terminating blank line;
// the last piece is whatever follows the last boundary (if anything).
// Concatenating the pieces gives body back.
func SplitEvents(body []byte) [][]byte {
	var out [][]byte
	for len(body) > 0 {
		n := eventEnd(body)
		out = append(out, body[:n])
		body = body[n:]
	}
	return out
}

// eventEnd returns the length of the first event in b, boundary included,
// or len(b) when b holds no boundary.
func eventEnd(b []byte) int {
	lf := bytes.Index(b, []byte("\n\n"))
	crlf := bytes.Index(b, []byte("\r\n\r\n"))
	switch {
	case lf < 0 && crlf < 0:
		return len(b)
	case crlf >= 0 && (lf < 0 || crlf < lf):
		return crlf + 4
	default:
		return lf + 2
	}
}

// IsEventStream reports whether a response is a server-sent-events stream:
// by its Content-Type, or (for servers that do not set one) by a body that
// starts like one.
func IsEventStream(h http.Header, body []byte) bool {
	if strings.Contains(strings.ToLower(h.Get("Content-Type")), "text/event-stream") {
		return true
	}
	t := bytes.TrimLeft(body, " \r\n")
	return bytes.HasPrefix(t, []byte("data:")) || bytes.HasPrefix(t, []byte("event:"))
}

// eventReader hands out a buffered SSE body one event per Read (less when
// the caller's buffer is smaller than the event), as a live connection
// delivers it. It stops with the context's error once ctx is done.
type eventReader struct {
	ctx  context.Context
	data []byte
	pos  int
	end  int // end of the event being delivered
}

func (r *eventReader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	if r.pos >= len(r.data) {
		return 0, io.EOF
	}
	if r.pos >= r.end {
		r.end = r.pos + eventEnd(r.data[r.pos:])
	}
	n := copy(p, r.data[r.pos:r.end])
	r.pos += n
	return n, nil
}

func (r *eventReader) Close() error { return nil }

// Rechunk replaces resp's body, when it is an event stream, by one that is
// read an event at a time, as a live connection delivers it (go-vcr buffers
// whole bodies). Other bodies are left alone. A non-nil edit rewrites the
// body first (ContentLength follows).
func Rechunk(ctx context.Context, resp *http.Response, edit func(string) string) error {
	if resp == nil || resp.Body == nil {
		return nil
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return err
	}
	if edit != nil {
		if e := edit(string(body)); e != string(body) {
			body = []byte(e)
			resp.ContentLength = int64(len(body))
			resp.Header.Del("Content-Length")
		}
	}
	if IsEventStream(resp.Header, body) {
		resp.Body = &eventReader{ctx: ctx, data: body}
	} else {
		resp.Body = io.NopCloser(bytes.NewReader(body))
	}
	return nil
}
