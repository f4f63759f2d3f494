package driver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/todoharness/todoharness/internal/testutil"
)

func TestServePermissionExactKinds(t *testing.T) {
	c := &conn{root: t.TempDir()}
	opt := func(id, kind string) map[string]any { return map[string]any{"optionId": id, "name": id, "kind": kind} }
	for _, options := range [][]any{
		{opt("no", "reject_once"), opt("maybe", "allowish_maybe")},
		{opt("maybe", "allow"), opt("later", "allow_later")},
	} {
		out, _, rerr := serveJSON(t, c, "session/request_permission", map[string]any{"sessionId": "s",
			"toolCall": map[string]any{"toolCallId": "x"}, "options": options})
		if rerr != nil {
			t.Fatal(rerr)
		}
		if o := out["outcome"].(map[string]any); o["outcome"] != "cancelled" {
			t.Errorf("options %v: answered %v, want cancelled", options, out)
		}
	}
}

func TestServeWriteWithoutContent(t *testing.T) {
	root := t.TempDir()
	c := &conn{root: root}
	path := filepath.Join(root, "empty.txt")
	_, _, rerr := serveJSON(t, c, "fs/write_text_file", map[string]any{"sessionId": "s", "path": path})
	if rerr == nil || rerr.Code != -32602 || !strings.Contains(rerr.Message, "content") {
		t.Errorf("answered %v, want an invalid-params error naming content", rerr)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a file was written: %v", err)
	}
}

func TestWriteBehindBlockedWrite(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "big.txt"), []byte(strings.Repeat("y", 1<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	inR, inW, err := os.Pipe() // nobody reads inR but its first byte
	if err != nil {
		t.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer closeAll(inR, outW)
	ctx, cancel := context.WithCancel(context.Background())
	p := &proc{ctx: ctx, stdin: inW, stdout: outR, exited: make(chan struct{}), stdinOpen: true}
	c := newConn(p, newWireLog(time.Now()), 0, root)
	answered := make(chan struct{})
	go func() {
		defer close(answered)
		c.answer(Envelope{JSONRPC: "2.0", ID: []byte("7"), Method: "fs/read_text_file",
			Params: []byte(`{"sessionId":"s","path":"` + filepath.Join(root, "big.txt") + `"}`)})
	}()
	// The answer's first byte reaches the pipe once it holds the write
	// slot and writes; the rest (1 MiB, far more than a pipe holds) keeps
	// it blocked in that write. A kernel pipe is no synctest bubble's
	// (a write waiting on it is not durably blocked), so the test reads
	// the byte instead of guessing a delay.
	hangCheck(t, time.Minute, "the answer's first byte", func() {
		if _, err := inR.Read(make([]byte, 1)); err != nil {
			t.Error(err)
		}
	})
	callCtx, callCancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer callCancel()
	hangCheck(t, 5*time.Second, "a call behind a blocked write", func() {
		if _, err := c.call(callCtx, "session/prompt", map[string]any{}); err == nil {
			t.Error("the call succeeded")
		}
	})
	cancel() // the case ends: the blocked answer gives up too
	hangCheck(t, 5*time.Second, "the blocked answer after the case ended", func() { <-answered })
}

func TestServeHardLinkOut(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	c := &conn{root: root}
	secret := filepath.Join(outside, "secret.txt")
	if err := os.WriteFile(secret, []byte("secret"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link.txt")
	if err := os.Link(secret, link); err != nil {
		t.Skipf("cannot make a hard link here (%v): nothing to test", err)
	}
	_, _, rerr := serveJSON(t, c, "fs/write_text_file", map[string]any{"sessionId": "s", "path": link, "content": "pwned"})
	if rerr == nil || rerr.Code != -32602 || !strings.Contains(rerr.Message, "link") {
		t.Errorf("write through a hard link: %v, want an invalid-params error naming the link", rerr)
	}
	if b, _ := os.ReadFile(secret); string(b) != "secret" {
		t.Errorf("the file outside was written: %q", b)
	}
	out, _, rerr := serveJSON(t, c, "fs/read_text_file", map[string]any{"sessionId": "s", "path": link})
	if rerr == nil || rerr.Code != -32602 || !strings.Contains(rerr.Message, "link") {
		t.Errorf("read through a hard link: %v %v, want an invalid-params error naming the link", out, rerr)
	}
}

func TestServeReadFIFO(t *testing.T) {
	root := t.TempDir()
	fifo := filepath.Join(root, "fifo")
	if err := mkfifo(fifo); err != nil {
		t.Skipf("no FIFO here (%v): nothing to test", err)
	}
	c := &conn{root: root}
	hangCheck(t, 5*time.Second, "reading a FIFO", func() {
		_, _, rerr := serveJSON(t, c, "fs/read_text_file", map[string]any{"sessionId": "s", "path": fifo})
		if rerr == nil || !strings.Contains(rerr.Message, "regular file") {
			t.Errorf("read of a FIFO: %v, want a refusal naming a regular file", rerr)
		}
	})
}

func TestReadLine(t *testing.T) {
	in := "abc\n" + strings.Repeat("x", 40) + "\n" + "crlf\r\n" + strings.Repeat("y", 11) + "\n" + strings.Repeat("z", 10) + "\n" + "tail"
	r := bufio.NewReaderSize(strings.NewReader(in), 16)
	type got struct {
		line string
		size int
	}
	var out []got
	for {
		line, size, err := readLine(r, 10)
		out = append(out, got{string(line), size})
		if err != nil {
			break
		}
	}
	want := []got{{"abc", 3}, {strings.Repeat("x", 11), 40}, {"crlf", 4}, {strings.Repeat("y", 11), 11}, {strings.Repeat("z", 10), 10}, {"tail", 4}}
	if !reflect.DeepEqual(out, want) {
		t.Errorf("got %+v\nwant %+v", out, want)
	}
}

// readingConn is a conn reading what is written to outW (the agent's
// stdout), into log.
func readingConn(t *testing.T) (c *conn, log *wireLog, outW *os.File) {
	t.Helper()
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{ctx: context.Background(), stdout: outR, exited: make(chan struct{})}
	log = newWireLog(time.Now())
	return newConn(p, log, 0, t.TempDir()), log, outW
}

func TestWireLineOverCap(t *testing.T) {
	c, log, outW := readingConn(t)
	// "a" then 2-byte characters: the bound of the kept prefix
	// (wireLinePrefix, even) falls inside one of them.
	big := append([]byte("a"), bytes.Repeat([]byte("é"), (MaxWireLine+100)/2)...)
	go func() {
		outW.Write(append(big, '\n'))
		outW.Write([]byte(`{"jsonrpc":"2.0","method":"session/update","params":{}}` + "\n"))
		outW.Close()
	}()
	<-c.done
	msgs := log.snapshot()
	if len(msgs) != 2 {
		t.Fatalf("%d messages", len(msgs))
	}
	m := msgs[0]
	if !m.Capped || m.Size != len(big) || len(m.Line) != wireLinePrefix-1 || !utf8.ValidString(m.Line) || m.Kind != KindInvalid || !strings.Contains(m.Problem, "cap") {
		t.Errorf("capped %v size %d line %d bytes (valid UTF-8 %v; want the first %d, cut between characters) kind %s problem %q", m.Capped, m.Size, len(m.Line), utf8.ValidString(m.Line), wireLinePrefix-1, m.Kind, m.Problem)
	}
	if msgs[1].Kind != KindNotification {
		t.Errorf("the line after: %+v", msgs[1])
	}
}

// hangCheck fails the test when f has not returned within d (the driver
// hung).
func hangCheck(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	testutil.NoHang(t, d, what, f)
}

// The text cutters of the driver cut between UTF-8 characters: a JSON-RPC
// error's data, a reason cut to a bound, the stderr tail.
func TestCutsBetweenCharacters(t *testing.T) {
	t.Parallel()
	data, _ := json.Marshal("xy" + strings.Repeat("é", 150)) // the bound (200) falls inside an é
	e := &RPCError{Code: -32603, Message: "boom", Data: data}
	if s := e.Error(); !utf8.ValidString(s) {
		t.Errorf("RPCError.Error() = %q: not valid UTF-8", s)
	}
	if s := OneLine("a"+strings.Repeat("日", 50), 20); !utf8.ValidString(s) || !strings.HasSuffix(s, "…") {
		t.Errorf("OneLine = %q: not valid UTF-8 or not marked cut", s)
	}
	tail := newTailBuffer(11)
	tail.Write([]byte("start " + strings.Repeat("€", 20) + "\n")) // 3-byte characters: the tail's bound splits one
	if s := tail.String(); !utf8.ValidString(s) || !strings.HasSuffix(s, "€€€\n") {
		t.Errorf("stderr tail = %q: not valid UTF-8, or not the last characters", s)
	}
}

// StoredLen bounds a line's length in evidence.json: at least what the
// JSON encoder without HTML escaping writes, exactly that for these.
func TestStoredLen(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "plain", `{"a":"b\\n"}`, strings.Repeat("<", 100), "\x01\x1f\n\t\r\b\f\"\\", "é日😀", "bad\xff\xfe", "\u2028\u2029", "<>&"} {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(s); err != nil {
			t.Fatal(err)
		}
		if got, want := StoredLen(s), buf.Len()-1; got != want {
			t.Errorf("StoredLen(%q) = %d, the encoder writes %d bytes", s, got, want)
		}
	}
}

// The wire log's byte cap counts lines as stored: lines of control bytes
// (six bytes each in JSON) fill it at a sixth of their raw size.
func TestWireCapCountsStoredBytes(t *testing.T) {
	t.Parallel()
	w := newWireLog(time.Now())
	line := strings.Repeat("\x01", 1<<20)
	n := 0
	for ; n < 100; n++ {
		if _, full := w.add(WireMsg{Line: line}); full {
			break
		}
	}
	if want := MaxWireBytes / StoredLen(line); n != want {
		t.Errorf("the cap took %d lines of 1 MiB of control bytes, want %d (%d bytes each as stored)", n, want, StoredLen(line))
	}
}
