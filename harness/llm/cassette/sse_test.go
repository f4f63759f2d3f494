package cassette

import (
	"bytes"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
)

func TestEventReaderHonoursSmallBuffersAndContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	r := &eventReader{ctx: ctx, data: []byte("data: 1\n\ndata: 22\r\n\r\ndata: 3")}
	var got []string
	buf := make([]byte, 4)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			got = append(got, string(buf[:n]))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"data", ": 1\n", "\n", "data", ": 22", "\r\n\r\n", "data", ": 3"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("reads %q, want %q (never across an event boundary)", got, want)
	}
	r2 := &eventReader{ctx: ctx, data: []byte("data: 1\n\n")}
	cancel()
	if _, err := r2.Read(buf); !errors.Is(err, context.Canceled) {
		t.Errorf("read after cancel: %v", err)
	}
}

func TestSplitEvents(t *testing.T) {
	body := []byte("data: a\n\ndata: b\r\n\r\n: comment\n\ndata: [DONE]\n\ntrailing")
	parts := SplitEvents(body)
	if len(parts) != 5 || string(bytes.Join(parts, nil)) != string(body) {
		t.Errorf("split into %q", parts)
	}
}
