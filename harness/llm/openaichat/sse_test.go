package openaichat

import (
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func readAll(t *testing.T, r io.Reader) ([]string, error) {
	t.Helper()
	e := newEventReader(r)
	var out []string
	for {
		d, err := e.next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		out = append(out, string(d))
	}
}

func TestEventReader(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     []string
	}{
		{"one event a data line", "data: {\"a\":1}\n\ndata: [DONE]\n\n", []string{`{"a":1}`, "[DONE]"}},
		{"CRLF line ends", "data: a\r\n\r\ndata: b\r\n\r\n", []string{"a", "b"}},
		{"no space after the colon, one space dropped", "data:a\n\ndata:  b\n\n", []string{"a", " b"}},
		{"data lines joined by newlines", "data: {\"a\":\ndata: 1}\n\n", []string{"{\"a\":\n1}"}},
		{"comments, event, id and retry fields ignored", ": keep-alive\n\nevent: message\nid: 7\nretry: 10\ndata: x\n\n", []string{"x"}},
		{"blank lines without data dispatch nothing", "\n\n\ndata: x\n\n\n", []string{"x"}},
		{"an event the stream ends inside of is dropped", "data: x\n\ndata: partial", []string{"x"}},
		{"an event without its blank line is dropped", "data: x\n\ndata: y\n", []string{"x"}},
		{"an empty data line is an event", "data:\n\n", []string{""}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := readAll(t, iotest.OneByteReader(strings.NewReader(tc.in)))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
				t.Errorf("events %q, want %q", got, tc.want)
			}
		})
	}
}

// A line longer than the reader's buffer is read whole.
func TestEventReaderLongLine(t *testing.T) {
	long := strings.Repeat("é", 100<<10)
	got, err := readAll(t, strings.NewReader("data: "+long+"\n\ndata: next\n\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != long || got[1] != "next" {
		t.Errorf("got %d events, the first %d bytes, want 2, %d bytes", len(got), len(got[0]), len(long))
	}
}

// An event past maxEvent is an error, not unbounded memory.
func TestEventReaderBound(t *testing.T) {
	for name, in := range map[string]io.Reader{
		"one line":   io.MultiReader(strings.NewReader("data: "), strings.NewReader(strings.Repeat("x", maxEvent+1)), strings.NewReader("\n\n")),
		"many lines": strings.NewReader(strings.Repeat("data: "+strings.Repeat("x", 1<<20)+"\n", 17) + "\n"),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := readAll(t, in)
			if err == nil || !strings.Contains(err.Error(), "longer than") {
				t.Errorf("error %v, want one about the event's length", err)
			}
		})
	}
}

// A read error of the stream (a torn connection) is returned, not taken
// for the end of the stream.
func TestEventReaderReadError(t *testing.T) {
	torn := io.MultiReader(strings.NewReader("data: x\n\ndata: y"), iotest.ErrReader(io.ErrUnexpectedEOF))
	got, err := readAll(t, torn)
	if !errors.Is(err, io.ErrUnexpectedEOF) || len(got) != 1 {
		t.Errorf("events %q, error %v; want one event, then io.ErrUnexpectedEOF", got, err)
	}
}
