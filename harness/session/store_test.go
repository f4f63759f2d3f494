package session_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/internal/testutil"
)

// The test binary doubles as the second process of the multi-process specs:
// with SESSION_TEST_CHILD set it runs child() instead of the tests.
func TestMain(m *testing.M) {
	if mode := os.Getenv("SESSION_TEST_CHILD"); mode != "" {
		if err := child(mode, os.Getenv("SESSION_TEST_DIR"), os.Getenv("SESSION_TEST_ID")); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

func fixedClock() int64 { return 1000 }

// child runs in a second process. "hold" opens the session and holds it
// until stdin closes; "mid-turn" starts a turn, subscribes like the ACP
// bridge does and prints each event's seq as the subscriber is told of it,
// then waits to be killed.
func child(mode, dir, id string) error {
	d := session.Dir{Path: dir}
	switch mode {
	case "hold":
		l, _, err := d.Open(id)
		if err != nil {
			return err
		}
		fmt.Println("holding")
		_, _ = io.Copy(io.Discard, os.Stdin)
		return l.Close()
	case "mid-turn":
		l, err := d.Create(id, "/cwd", session.WithClock(fixedClock))
		if err != nil {
			return err
		}
		l.Subscribe(func(e session.Event) { fmt.Printf("seen %d %s\n", e.Seq, e.Type) })
		for _, a := range midTurn(1) {
			if _, err := l.Append(a.typ, a.data, a.opts...); err != nil {
				return err
			}
		}
		fmt.Println("waiting")
		time.Sleep(time.Minute) // the child process itself, waiting for the test to kill it
		return errors.New("not killed")
	}
	return fmt.Errorf("unknown mode %q", mode)
}

type appendArgs struct {
	typ  string
	data any
	opts []session.AppendOption
}

// midTurn is a turn cut off after its todo_write call returned and a second
// tool call started: the client was shown tool_call, plan, tool_call_update
// and a second tool_call.
func midTurn(turn int) []appendArgs {
	todos := []session.TodoItem{{Content: "read", Status: "in_progress"}, {Content: "fix", Status: "pending"}}
	text := func(s string) []llm.Part { return []llm.Part{{Type: llm.PartText, Text: s}} }
	return []appendArgs{
		{typ: session.TypeTurnStart, data: session.TurnStart{Turn: turn, Trigger: session.Trigger{Kind: "message"}}},
		{typ: session.TypeUserMessage, data: session.UserMessage{Content: text("plan it")}},
		{typ: session.TypeStepStart, data: session.Step{Turn: turn, Step: 1}},
		{typ: session.TypeAssistantChunk, data: session.AssistantChunk{Turn: turn, Step: 1, Chunk: llm.Chunk{Type: llm.ChunkTextDelta, Index: llm.IntPtr(0), Text: "ok"}}},
		{typ: session.TypeToolCall, data: session.ToolCall{Turn: turn, Step: 1, CallID: "c1", Name: "todo_write", Arguments: `{"todos":[]}`}},
		{typ: session.TypeTodoWrite, data: session.TodoWrite{Todos: todos}},
		{typ: session.TypeToolResult, data: session.ToolResult{Turn: turn, Step: 1, CallID: "c1", Content: text("updated")}, opts: []session.AppendOption{session.WithSourceEventSeqs(5)}},
		{typ: session.TypeToolCall, data: session.ToolCall{Turn: turn, Step: 1, CallID: "c2", Name: "bash", Arguments: `{"cmd":"sleep 100"}`}},
	}
}

func startChild(t *testing.T, mode, dir, id string) (*exec.Cmd, *bufio.Reader, io.WriteCloser) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "SESSION_TEST_CHILD="+mode, "SESSION_TEST_DIR="+dir, "SESSION_TEST_ID="+id)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	return cmd, bufio.NewReader(out), stdin
}

func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("child output: %q: %v", line, err)
	}
	return strings.TrimSuffix(line, "\n")
}

// 13.1: every event a subscriber (the bridge) was told about survives a
// SIGKILL; reopening closes the killed turn as interrupted, appending only.
func TestKilledTurnReloadsCompleteAndIsClosedAsInterrupted(t *testing.T) {
	dir := t.TempDir()
	cmd, out, _ := startChild(t, "mid-turn", dir, "k")
	var seen []string
	for {
		line := readLine(t, out)
		if line == "waiting" {
			break
		}
		seen = append(seen, line)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()
	if len(seen) != len(midTurn(1)) {
		t.Fatalf("subscriber saw %d events, want %d: %q", len(seen), len(midTurn(1)), seen)
	}
	path := filepath.Join(dir, "k.jsonl")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	// A pure read sees every event the client saw and changes nothing.
	ld, err := session.LoadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(ld.Events) != len(seen) {
		t.Fatalf("after SIGKILL the file holds %d events, the client saw %d", len(ld.Events), len(seen))
	}
	for i, e := range ld.Events {
		if want := fmt.Sprintf("seen %d %s", e.Seq, e.Type); seen[i] != want {
			t.Fatalf("event %d: file has %q, client saw %q", i, want, seen[i])
		}
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(after, before) {
		t.Fatal("LoadFile modified the log")
	}

	l, warnings, err := session.Dir{Path: dir}.Open("k", session.WithClock(fixedClock))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	if len(warnings) != 1 || !strings.Contains(warnings[0], "closed it as interrupted") {
		t.Fatalf("warnings %q, want one saying the turn was closed as interrupted", warnings)
	}
	if turn, step, _ := l.OpenTurn(); turn != 0 || step != 0 {
		t.Fatalf("turn %d step %d still open after reopen", turn, step)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.HasPrefix(after, before) {
		t.Fatal("reopen rewrote the log instead of appending")
	}
	tail := strings.Split(strings.TrimSuffix(string(after[len(before):]), "\n"), "\n")
	want := []string{
		`{"type":"tool/result","seq":8,"time":1000,"data":{"turn":1,"step":1,"callId":"c2","content":[{"type":"text","text":"interrupted: the agent stopped before this turn ended"}],"isError":true},"surfaceOp":"append"}`,
		`{"type":"step/end","seq":9,"time":1000,"data":{"turn":1,"step":1}}`,
		`{"type":"turn/end","seq":10,"time":1000,"data":{"turn":1,"reason":{"kind":"interrupted","message":"interrupted: the agent stopped before this turn ended"}}}`,
	}
	if strings.Join(tail, "\n") != strings.Join(want, "\n") {
		t.Fatalf("appended on reopen:\n%s\nwant\n%s", strings.Join(tail, "\n"), strings.Join(want, "\n"))
	}
	if err := session.CheckEvents(l.Events()); err != nil {
		t.Fatal(err)
	}
}

// 13.1: a subscriber finds the event on disk when it is told about it,
// fsynced or (Dir.NoFsync) only written to the kernel.
func TestSubscriberIsToldOnlyAfterTheEventIsOnDisk(t *testing.T) {
	for _, noFsync := range []bool{false, true} {
		t.Run(fmt.Sprint("NoFsync ", noFsync), func(t *testing.T) {
			subscriberFindsTheEventInTheFile(t, session.Dir{Path: t.TempDir(), NoFsync: noFsync})
		})
	}
}

func subscriberFindsTheEventInTheFile(t *testing.T, dir session.Dir) {
	l, err := dir.Create("s", "", session.WithClock(fixedClock))
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	path, _ := dir.File("s")
	var missing []string
	l.Subscribe(func(e session.Event) {
		ld, err := session.LoadFile(path)
		if err != nil || len(ld.Events) == 0 || ld.Events[len(ld.Events)-1].Seq != e.Seq {
			missing = append(missing, fmt.Sprintf("%d %s", e.Seq, e.Type))
		}
	})
	for _, a := range midTurn(1) {
		if _, err := l.Append(a.typ, a.data, a.opts...); err != nil {
			t.Fatal(err)
		}
	}
	if len(missing) > 0 {
		t.Fatalf("subscriber told before the event was on disk: %q", missing)
	}
}

// 13.3: one holder per session; the second opener learns who holds it.
func TestSecondOpenerGetsLockedErrorNamingTheHolder(t *testing.T) {
	dir := session.Dir{Path: t.TempDir()}
	l, err := dir.Create("s", "", session.WithClock(fixedClock))
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = dir.Open("s")
	var le *session.LockedError
	if !errors.As(err, &le) || !errors.Is(err, session.ErrLocked) {
		t.Fatalf("second open in one process: %v, want a *LockedError", err)
	}
	if le.Holder == nil || le.Holder.PID != os.Getpid() || !strings.Contains(err.Error(), "pid "+strconv.Itoa(os.Getpid())) {
		t.Fatalf("holder %+v, error %q: want this process's pid", le.Holder, err)
	}
	if _, err := dir.Create("s", ""); !errors.As(err, &le) {
		t.Fatalf("Create over a held session: %v, want a *LockedError (and no truncation)", err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	r, _, err := dir.Open("s")
	if err != nil {
		t.Fatalf("open after the holder closed: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestSecondProcessGetsLockedErrorNamingTheHolder(t *testing.T) {
	dir := closedSession(t)
	cmd, out, stdin := startChild(t, "hold", dir.Path, "s")
	if got := readLine(t, out); got != "holding" {
		t.Fatalf("child: %q", got)
	}
	_, _, err := dir.Open("s")
	var le *session.LockedError
	if !errors.As(err, &le) || le.Holder == nil || le.Holder.PID != cmd.Process.Pid {
		t.Fatalf("open while another process holds it: %v (holder %+v), want a *LockedError naming pid %d", err, le, cmd.Process.Pid)
	}
	if !strings.Contains(err.Error(), "command ") || !strings.Contains(err.Error(), filepath.Base(os.Args[0])) {
		t.Fatalf("error %q does not name the holder's command", err)
	}
	stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("child: %v", err)
	}
	r, _, err := dir.Open("s")
	if err != nil {
		t.Fatalf("open after the other process exited: %v", err)
	}
	r.Close()
}

const hdr = `{"type":"session","version":0,"id":"s","createdAt":0}` + "\n"
const turnStart = `{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}` + "\n"

// 13.2 and the smaller ones: what is an error (naming file:line), what is a
// warning, and that no read (nor a refused reopen) modifies the file.
func TestReadRules(t *testing.T) {
	cases := []struct {
		name, content string
		wantErr       string // substring of the error; "" means it loads
		wantWarn      string
		events        int
	}{
		{name: "fractional time, last line complete", content: hdr + turnStart + `{"type":"turn/end","seq":1,"time":1796113208218.5,"data":{"turn":1}}` + "\n",
			wantErr: `:3: field "time": number 1796113208218.5`},
		{name: "string seq, last line complete", content: hdr + turnStart + `{"type":"turn/end","seq":"1","time":0,"data":{"turn":1}}` + "\n",
			wantErr: `:3: field "seq": string`},
		{name: "bad line followed by a blank line", content: hdr + turnStart + `{"type":"turn/end",` + "\n\n",
			wantErr: `:3: invalid JSON`},
		{name: "bad line last without newline is torn", content: hdr + turnStart + `{"type":"turn/end",`,
			wantWarn: ":3: dropped torn last line", events: 1},
		{name: "good last line without newline", content: hdr + turnStart + `{"type":"turn/end","seq":1,"time":0,"data":{"turn":1}}`,
			wantWarn: ":3: last line has no trailing newline", events: 2},
		{name: "invalid UTF-8", content: hdr + turnStart + "{\"type\":\"user/message\",\"seq\":1,\"time\":0,\"data\":{\"content\":[{\"type\":\"text\",\"text\":\"a\xffb\"}]},\"surfaceOp\":\"append\"}\n",
			wantErr: ":3: invalid UTF-8 at byte"},
		{name: "invalid UTF-8 in the header", content: "{\"type\":\"session\",\"version\":0,\"id\":\"s\xc3\",\"createdAt\":0}\n",
			wantErr: ":1: session header: invalid UTF-8"},
		{name: "byte order mark", content: "\xef\xbb\xbf" + hdr + turnStart,
			wantWarn: ":1: skipped a UTF-8 byte order mark", events: 1},
		{name: "blank lines between events", content: hdr + "\n" + turnStart + "  \n",
			events: 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "s.jsonl")
			if err := os.WriteFile(path, []byte(c.content), 0o644); err != nil {
				t.Fatal(err)
			}
			ld, err := session.LoadFile(path)
			if c.wantErr != "" {
				var le *session.LineError
				if err == nil || !strings.Contains(err.Error(), path+c.wantErr) || !errors.As(err, &le) {
					t.Fatalf("LoadFile: %v, want a *LineError containing %q", err, path+c.wantErr)
				}
				// A reopen for append refuses it too, and leaves it alone.
				if _, _, err := (session.Dir{Path: dir}).Open("s"); err == nil {
					t.Fatal("Dir.Open accepted what LoadFile refused")
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				if len(ld.Events) != c.events {
					t.Fatalf("%d events, want %d", len(ld.Events), c.events)
				}
				if c.wantWarn == "" && len(ld.Warnings) > 0 || c.wantWarn != "" && (len(ld.Warnings) != 1 || !strings.Contains(ld.Warnings[0], path+c.wantWarn)) {
					t.Fatalf("warnings %q, want %q", ld.Warnings, c.wantWarn)
				}
			}
			after, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(after) != c.content {
				t.Fatalf("reading modified the file:\n%q\nwas\n%q", after, c.content)
			}
		})
	}
}

func TestNegativeSeqFailsTheInvariants(t *testing.T) {
	ld, err := session.Read(strings.NewReader(hdr+`{"type":"future/kind","seq":-1,"time":0,"data":{}}`+"\n"), "n.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	err = session.CheckEvents(ld.Events)
	if err == nil || !strings.Contains(err.Error(), "seq -1 is negative") {
		t.Fatalf("CheckEvents: %v, want a negative-seq violation", err)
	}
}

// 13.10: one line is capped, so a log with no newline fails instead of
// growing without bound.
func TestLineLimit(t *testing.T) {
	r := session.NewReader(io.MultiReader(strings.NewReader(hdr), zeros{}), "zero", session.ReadOptions{MaxLineBytes: 1 << 20})
	_, err := r.Next(context.Background())
	var le *session.LineError
	if !errors.Is(err, session.ErrLineTooLong) || !errors.As(err, &le) || le.Line != 2 || !strings.Contains(err.Error(), "limit of 1048576 bytes") {
		t.Fatalf("endless line: %v, want ErrLineTooLong at zero:2 naming the limit", err)
	}
	long := hdr + `{"type":"x","seq":0,"data":"` + strings.Repeat("a", 2000) + `"}` + "\n"
	_, err = session.NewReader(strings.NewReader(long), "long", session.ReadOptions{MaxLineBytes: 1000}).Next(context.Background())
	if !errors.Is(err, session.ErrLineTooLong) || !strings.Contains(err.Error(), "long:2:") {
		t.Fatalf("long line: %v", err)
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	clear(p)
	return len(p), nil
}

// 13.10: a read from a FIFO whose writer never writes stops on the context.
func TestReadStopsOnContextOnASilentFIFO(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	// The writer end is open (O_RDWR does not wait for a reader) and silent
	// after the header.
	w, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.WriteString(hdr); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, err := session.LoadFileContext(ctx, path)
		done <- err
	}()
	testutil.WaitFIFODrained(t, path) // the header is read: the next read waits on the silent writer
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("LoadFileContext: %v, want context.Canceled", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("LoadFileContext did not stop on cancel")
	}
}

// closedSession is a folder holding session "s", created and closed.
func closedSession(t *testing.T) session.Dir {
	t.Helper()
	dir := session.Dir{Path: t.TempDir()}
	l, err := dir.Create("s", "", session.WithClock(fixedClock))
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// A lock held by a descriptor that recorded no holder (a closed store's
// descriptor shared by a child between fork and exec, or a holder that is
// starting) is waited for, briefly; when it is not released, the opener
// gets a *LockedError with no holder. The wait is timed on a synctest
// bubble's clock (a flock with LOCK_NB never blocks): the holder lets go
// 100 ms into the opener's one-second wait, or never.
func TestOpenWaitsForALockWithNoRecordedHolder(t *testing.T) {
	dir := closedSession(t)
	path, err := dir.File("s")
	if err != nil {
		t.Fatal(err)
	}
	// hold takes the flock on a description of its own, as the inherited
	// copy does, and records nothing.
	hold := func(t *testing.T) *os.File {
		f, err := os.OpenFile(path, os.O_RDWR, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
			t.Fatal(err)
		}
		return f
	}

	t.Run("released", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := hold(t)
			released := make(chan struct{})
			go func() {
				defer close(released)
				time.Sleep(100 * time.Millisecond) // the bubble's clock
				f.Close()
			}()
			r, _, err := dir.Open("s")
			<-released
			if err != nil {
				t.Fatalf("open while an unrecorded holder lets go: %v, want it to wait and open", err)
			}
			if err := r.Close(); err != nil {
				t.Fatal(err)
			}
		})
	})

	t.Run("kept", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := hold(t)
			defer f.Close()
			_, _, err := dir.Open("s")
			var le *session.LockedError
			if !errors.As(err, &le) || le.Holder != nil || !strings.Contains(err.Error(), "holder unknown") {
				t.Fatalf("open while an unrecorded holder keeps the lock: %v, want a *LockedError with no holder", err)
			}
		})
	})
}
