package acp

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// readAll splits input with a small limit and returns the lines read.
func readAll(t *testing.T, input string, max int) []inputLine {
	t.Helper()
	lr := newLineReader(strings.NewReader(input), max)
	var out []inputLine
	for {
		ln, err := lr.next()
		ln.text = append([]byte(nil), ln.text...)
		out = append(out, ln)
		if err == io.EOF {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

func TestLineReaderBoundary(t *testing.T) {
	const max = 8 // a line of 7 bytes plus its newline fits
	cases := []struct {
		in       string
		over     bool
		text     string
		size     int64
		terminal bool
	}{
		{in: "1234567\n", text: "1234567", size: 8},
		{in: "1234567\r\n", text: "1234567", size: 9},
		{in: "12345678\n", over: true, size: 9},
		{in: "12345678\r\n", over: true, size: 10},
		{in: "123456789012345678901234567890\n", over: true, size: 31},
		{in: "1234567", text: "1234567", size: 7},
		{in: "12345678", over: true, size: 8},
	}
	for _, c := range cases {
		lines := readAll(t, c.in, max)
		ln := lines[0]
		if ln.over != c.over || string(ln.text) != c.text || ln.size != c.size {
			t.Errorf("%q: over=%v text=%q size=%d, want over=%v text=%q size=%d", c.in, ln.over, ln.text, ln.size, c.over, c.text, c.size)
		}
	}
	// The line after an over-long one is read whole.
	lines := readAll(t, strings.Repeat("y", 100)+"\nabc\n", max)
	if len(lines) < 2 || !lines[0].over || string(lines[1].text) != "abc" {
		t.Errorf("after an over-long line: %+v", lines)
	}
}

func TestIDFinderRecoversTheTopLevelID(t *testing.T) {
	cases := []struct{ in, want string }{
		{`{"id":1,"method":"x"}`, `1`},
		{`{"method":"x","params":{"id":2,"a":[{"id":3}]},"id":"s"}`, `"s"`},
		{`{ "id" : -1.5e3 }`, `-1.5e3`},
		{`{"id":null}`, `null`},
		{`{"a":"\"id\":9","b":"}"}`, ``},
		{`{"id":{"x":1}}`, ``},
		{`{"id":[1]}`, ``},
		{`{"id":true}`, ``},
		{`{"id":1,"id":2}`, `2`},
		{`{"idx":1,"xid":2}`, ``},
		{`{"\u0069d":1}`, ``},
		{`[{"id":1}]`, ``},
		{`{"id":"` + strings.Repeat("z", maxIDLen) + `"}`, ``},
		{`{"id":42,"params":{"text":"truncat`, `42`},
		{`{"params":{},"id":42`, `42`},
		{`{"id":"esc\"aped\\"}`, `"esc\"aped\\"`},
	}
	for _, c := range cases {
		for split := 0; split <= len(c.in); split += 1 + len(c.in)/7 {
			var f idFinder
			f.feed([]byte(c.in[:split]))
			f.feed([]byte(c.in[split:]))
			if got := string(f.id()); got != c.want {
				t.Errorf("%.60q split at %d: id %q, want %q", c.in, split, got, c.want)
			}
		}
	}
}

// checkFilter runs the whole input side over data with the limit max and
// checks what it forwards and answers.
func checkFilter(t *testing.T, data []byte, max int) {
	lr := newLineReader(bytes.NewReader(data), max)
	f := &inputFilter{max: max}
	for n := 0; ; n++ {
		ln, err := lr.next()
		v := f.classify(ln)
		switch {
		case v.forward != nil:
			if len(v.forward) > max || v.forward[len(v.forward)-1] != '\n' || bytes.IndexByte(v.forward[:len(v.forward)-1], '\n') >= 0 {
				t.Fatalf("line %d: forwarded %q: longer than %d or not one line", n, v.forward, max)
			}
			if !json.Valid(v.forward) {
				t.Fatalf("line %d: forwarded invalid JSON %q", n, v.forward)
			}
			if _, e := checkMessage(v.forward); e != nil {
				t.Fatalf("line %d: forwarded a malformed message %q", n, v.forward)
			}
		case v.answer != nil:
			b, merr := json.Marshal(v.answer)
			if merr != nil || !json.Valid(b) {
				t.Fatalf("line %d: answer does not encode: %v", n, merr)
			}
			if !validID(v.answer.ID) {
				t.Fatalf("line %d: answer with id %s", n, v.answer.ID)
			}
			if ln.over && ln.id != nil && !bytes.Equal(v.answer.ID, ln.id) {
				t.Fatalf("line %d: over-long line's id %s not carried (%s)", n, ln.id, v.answer.ID)
			}
		case v.drop == "":
			if !ln.over && len(bytes.TrimSpace(ln.text)) != 0 {
				t.Fatalf("line %d: %q neither forwarded, answered nor dropped", n, ln.text)
			}
		}
		if ln.over && v.answer == nil {
			t.Fatalf("line %d: an over-long line was not answered", n)
		}
		if err != nil {
			return
		}
	}
}

// expectedID is the id encoding/json reads from line, when the idFinder must
// find the same one.
func expectedID(line []byte) (id json.RawMessage, comparable bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(line, &obj) != nil {
		return nil, false
	}
	raw, ok := obj["id"]
	if !ok || len(raw) > maxIDLen || !validID(raw) {
		return nil, !bytes.Contains(line, []byte(`\u`))
	}
	// A key written with escapes is not recognised.
	return raw, !bytes.Contains(line, []byte(`\u`))
}

func FuzzLineFilter(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":1}}` + "\n" + `{"jsonrpc":"2.0","id":2,"method":"session/new","params":{}}`,
		`{"jsonrpc":"2.0","id":"a","method":"session/new"}` + "\r\n",
		"not json\n\n   \n[1,2]\n",
		`{"jsonrpc":"2.0","id":7,"method":42}`,
		`{"jsonrpc":"2.0","method":"session/cancel","params":{}}`,
		`{"jsonrpc":"2.0","id":3,"result":{}}`,
		`{"id":9,"method":"initialize","params":{"pad":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"}}`,
		`{"method":"x","params":{"t":"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"},"id":"late"}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFilter(t, data, 64)
		checkFilter(t, data, MaxLine)
		// The id finder agrees with encoding/json, whatever the split.
		for _, line := range bytes.Split(data, []byte("\n")) {
			want, comparable := expectedID(line)
			for _, split := range []int{0, len(line) / 2, len(line)} {
				var fd idFinder
				fd.feed(line[:split])
				fd.feed(line[split:])
				got := fd.id()
				if got != nil && !validID(got) {
					t.Fatalf("%q: recovered id %s is not a JSON-RPC id", line, got)
				}
				if comparable && !bytes.Equal(got, want) {
					t.Fatalf("%q (split %d): recovered id %s, encoding/json reads %s", line, split, got, want)
				}
			}
		}
	})
}
