package openaichat

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
)

// maxEvent is the largest server-sent event read, in bytes.
const maxEvent = 16 << 20

// eventReader reads the data of server-sent events from a stream, as the
// EventSource rules read them: "data:" lines (one leading space dropped)
// joined by "\n", an event dispatched at a blank line when it has data,
// comments (":...") and other fields ignored, lines ended by "\n" or
// "\r\n". An event the stream ends inside of is dropped.
type eventReader struct {
	r     *bufio.Reader
	data  []byte
	count int // events returned
}

func newEventReader(r io.Reader) *eventReader {
	// The default size: an event's lines are short, and a longer one is
	// read in pieces (line); a reader a model request costs no more.
	return &eventReader{r: bufio.NewReader(r)}
}

// next returns the data of the next event; io.EOF at the end of the
// stream. The slice is valid until the next call.
func (e *eventReader) next() ([]byte, error) {
	e.data = e.data[:0]
	has := false
	for {
		line, err := e.line()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil, io.EOF
			}
			return nil, err
		}
		if len(line) == 0 {
			if has {
				e.count++
				return e.data, nil
			}
			continue
		}
		name, value, _ := bytes.Cut(line, []byte(":"))
		if string(name) != "data" {
			continue // a comment, event:, id:, retry: or unknown field
		}
		value = bytes.TrimPrefix(value, []byte(" "))
		if has {
			e.data = append(e.data, '\n')
		}
		if len(e.data)+len(value) > maxEvent {
			return nil, fmt.Errorf("a server-sent event longer than %d bytes", maxEvent)
		}
		e.data = append(e.data, value...)
		has = true
	}
}

// line reads one line without its line end. A last line without a line
// end is io.EOF: the event it belongs to was not finished.
func (e *eventReader) line() ([]byte, error) {
	line, err := e.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		long := append([]byte(nil), line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			if len(long) > maxEvent {
				return nil, fmt.Errorf("a server-sent event line longer than %d bytes", maxEvent)
			}
			line, err = e.r.ReadSlice('\n')
			long = append(long, line...)
		}
		line = long
	}
	if err != nil {
		return nil, err
	}
	line = line[:len(line)-1]
	return bytes.TrimSuffix(line, []byte("\r")), nil
}

// isEventStream reports whether an answer says it is a text/event-stream.
func isEventStream(h http.Header) bool {
	mt, _, err := mime.ParseMediaType(h.Get("Content-Type"))
	return err == nil && mt == "text/event-stream"
}
