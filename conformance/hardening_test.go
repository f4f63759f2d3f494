package conformance

import (
	"bufio"
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/todoharness/todoharness/mockmodel"
)

// The picker takes allow_once or allow_always, exactly: a kind that only
// starts with "allow" is not an allow option.
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

// A write with no content is an invalid-params error, and writes nothing.
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

// An agent that echoes its input (cat) is reported as echoing the runner's
// own request, not as having answered "Method not found".
func TestRunEchoingAgent(t *testing.T) {
	t.Parallel()
	rep, err := Run(context.Background(), Config{Agent: Target{Command: []string{"cat"}}, Cases: oneCase(t, "plan-basic"),
		Dialect: DialectTodoWrite, Timeout: 5 * time.Second, Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Cases[0]
	if !strings.Contains(c.Error, "echo") || strings.Contains(c.Error, "Method not found") {
		t.Errorf("case error %q, want the echo named and no Method not found", c.Error)
	}
	for _, p := range c.ev.Procs {
		if len(p.ClientRequests) > 0 {
			t.Errorf("the echoed request was served as a client request: %v", p.ClientRequests)
		}
	}
}

// hangCheck fails the test when f has not returned within d (the runner
// hung); f keeps running in the background then.
// hangLimit bounds how long a spec waits for a run whose case timeout
// (seconds) must end it: far above any case timeout, so that only a run
// the timeout failed to end trips it, however loaded the machine.
const hangLimit = 90 * time.Second

func hangCheck(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("%s: still running after %s", what, d)
	}
}

// An agent that stops reading its stdin while the runner writes a prompt
// larger than the pipe: the case ends at its timeout, the agent killed.
func TestRunAgentStopsReading(t *testing.T) {
	t.Parallel()
	c := &Case{ID: "big-prompt", Title: "a prompt larger than a pipe", Source: "(test)",
		Checks: []string{"RUN-1"},
		Steps:  []Step{{Op: OpInitialize}, {Op: OpNewSession}, {Op: OpPrompt, Text: strings.Repeat("x", 1<<20)}},
		Script: []mockmodel.Turn{{Text: "OK"}}}
	var rep *Report
	hangCheck(t, hangLimit, "Run with a 10s case timeout", func() {
		var err error
		rep, err = Run(context.Background(), Config{Agent: fakeTarget(t, "stop-reading"), Cases: []*Case{c},
			Dialect: DialectTodoWrite, Timeout: 10 * time.Second, Grace: 200 * time.Millisecond})
		if err != nil {
			t.Error(err)
		}
	})
	if rep == nil {
		return
	}
	cr := rep.Cases[0]
	if cr.Completed || !strings.Contains(cr.Error, "deadline") {
		t.Errorf("case error %q, want the deadline named", cr.Error)
	}
	if p := cr.ev.Procs[0]; !strings.Contains(p.Shutdown, "killed") {
		t.Errorf("shutdown %q, want the kill named", p.Shutdown)
	}
}

// A write blocked on a full pipe holds the write lock: a call behind it
// still gives up when its context ends.
func TestWriteBehindBlockedWrite(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "big.txt"), []byte(strings.Repeat("y", 1<<20)), 0o644); err != nil {
		t.Fatal(err)
	}
	inR, inW, err := os.Pipe() // nobody reads inR
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
		c.answer(envelope{JSONRPC: "2.0", ID: []byte("7"), Method: "fs/read_text_file",
			Params: []byte(`{"sessionId":"s","path":"` + filepath.Join(root, "big.txt") + `"}`)})
	}()
	time.Sleep(100 * time.Millisecond) // the answer is now blocked in its write
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

// A hard link to a file outside the case folder is neither written nor
// read, and the refusal says why.
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

// A FIFO in the case folder is refused, not read (the read would block).
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

// A line over the cap is kept as a marked prefix; the next line is read.
func TestWireLineOverCap(t *testing.T) {
	outR, outW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{ctx: context.Background(), stdout: outR, exited: make(chan struct{})}
	log := newWireLog(time.Now())
	c := newConn(p, log, 0, t.TempDir())
	go func() {
		big := bytes.Repeat([]byte("a"), maxWireLine+100)
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
	if !m.Capped || m.Size != maxWireLine+100 || len(m.Line) != wireLinePrefix || m.Kind != KindInvalid || !strings.Contains(m.Problem, "cap") {
		t.Errorf("capped %v size %d line %d bytes kind %s problem %q", m.Capped, m.Size, len(m.Line), m.Kind, m.Problem)
	}
	if msgs[1].Kind != KindNotification {
		t.Errorf("the line after: %+v", msgs[1])
	}
}

// An agent flooding the wire is stopped at the case's wire cap: the case
// does not complete and says why; the log keeps no more than the cap.
func TestRunWireFlood(t *testing.T) {
	t.Parallel()
	script, err := filepath.Abs("testdata/flood/agent.sh")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), Config{Agent: Target{Command: []string{"sh", script, "notify"}},
		Cases: oneCase(t, "plan-basic"), Dialect: DialectTodoWrite, Timeout: time.Minute, Grace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	cr := rep.Cases[0]
	t.Logf("case took %s, run %s, %d messages kept", cr.Duration, rep.Duration, len(cr.ev.Wire))
	if n := len(cr.ev.Wire); n > maxWireMsgs {
		t.Errorf("the wire log kept %d messages, cap %d", n, maxWireMsgs)
	}
	if cr.Completed || !strings.Contains(cr.Error, "cap") {
		t.Errorf("case error %q, want the wire cap named", cr.Error)
	}
	if c, _ := rep.Check("RUN-1"); c.Outcome != Fail || !strings.Contains(c.Reason, "cap") {
		t.Errorf("RUN-1: %s %q, want a failure naming the cap", c.Outcome, c.Reason)
	}
}

// A capped wire line, a capped model body and text, and the descendants
// the runner killed are marked in the transcript.
func TestTranscriptMarksCapsAndKills(t *testing.T) {
	c := &Case{ID: "c", Title: "t", Source: "(test)"}
	ev := &Evidence{Case: c,
		Procs: []ProcResult{{Argv: []string{"agent"}, Killed: []string{"pid 42 (sleep)"}}},
		Wire:  []WireMsg{{Dir: Received, Line: "aaaa", Kind: KindInvalid, Capped: true, Size: 1 << 30, Problem: "a line of 1073741824 bytes, over the runner's cap"}},
		Journal: []mockmodel.JournalEntry{{Wire: mockmodel.WireOpenAIChat, RawCapped: true, RawBytes: 20 << 20, RawSHA256: "abc",
			Capped: []string{"messages[0].content[0].text: 20971520 bytes, sha256 def, first 1048576 kept"}}}}
	d := t.TempDir()
	if err := writeTranscript(d, &CaseResult{ID: "c", Title: "t", ev: ev}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(d, "transcript.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"killed by the runner: pid 42 (sleep)", "CAPPED: a line of 1073741824 bytes", "BODY CAPPED: 20971520 bytes, sha256 abc", "CAPPED: messages[0].content[0].text: 20971520 bytes"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the transcript does not say %q:\n%s", want, b)
		}
	}
}
