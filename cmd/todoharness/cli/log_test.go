package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/todoharness/todoharness/internal/testutil"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// runCLI runs the root command in-process with ctx and returns its output.
func runCLI(ctx context.Context, args ...string) (stdout, stderr string, err error) {
	var out, errb bytes.Buffer
	cmd := NewRootCmd()
	cmd.SetOut(&out)
	cmd.SetErr(&errb)
	cmd.SetArgs(args)
	err = cmd.ExecuteContext(ctx)
	return out.String(), errb.String(), err
}

// `log check` of an endless line stops at the documented line limit.
func TestLogCheckOfDevZeroStopsAtTheLineLimit(t *testing.T) {
	if _, err := os.Stat("/dev/zero"); err != nil {
		t.Skipf("no /dev/zero: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, stderr, err := runCLI(ctx, "log", "check", "/dev/zero")
	var code exitCode
	if !errors.As(err, &code) || code != 1 {
		t.Fatalf("exit %v, want 1", err)
	}
	if !strings.Contains(stderr, "FAIL /dev/zero:1: line too long") || !strings.Contains(stderr, "limit of 67108864 bytes") {
		t.Fatalf("stderr %q, want a line-too-long failure naming /dev/zero:1 and the limit", stderr)
	}
}

// waitOpen waits until process pid has path open (Linux /proc).
func waitOpen(t *testing.T, pid int, path string) {
	t.Helper()
	fds := fmt.Sprintf("/proc/%d/fd", pid)
	if real, err := filepath.EvalSymlinks(path); err == nil {
		path = real
	}
	// Polls a real process (/proc/PID/fd): no fake clock reaches it.
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		entries, err := os.ReadDir(fds)
		if err != nil {
			t.Skipf("cannot see the child's open files: %v", err)
		}
		for _, e := range entries {
			if target, err := os.Readlink(filepath.Join(fds, e.Name())); err == nil && target == path {
				return
			}
		}
	}
	t.Fatalf("the child never opened %s", path)
}

// silentFIFO returns a FIFO whose writer (kept open until the test ends)
// wrote content and then nothing more.
func silentFIFO(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	w, err := os.OpenFile(path, os.O_RDWR, 0) // does not wait for a reader
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	if _, err := w.WriteString(content); err != nil {
		t.Fatal(err)
	}
	return path
}

// `log check` of a FIFO whose writer is silent stops when the command's
// context ends (what SIGINT/SIGTERM do in main).
func TestLogCheckOfASilentFIFOStopsOnTheCommandContext(t *testing.T) {
	path := silentFIFO(t, `{"type":"session","version":0,"id":"s","createdAt":0}`+"\n")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan string, 1)
	go func() {
		_, stderr, _ := runCLI(ctx, "log", "check", path)
		done <- stderr
	}()
	testutil.WaitFIFODrained(t, path) // the header is read: the next read waits on the silent writer
	cancel()
	select {
	case stderr := <-done:
		if !strings.Contains(stderr, "context canceled") {
			t.Fatalf("stderr %q, want the read to stop on the cancelled context", stderr)
		}
	case <-time.After(time.Minute):
		t.Fatal("log check did not stop when its context was cancelled")
	}
}

func headFixture(name string) string {
	return filepath.Join(testutil.RepoRoot(), "fixtures", "interop", "deepseek-harness", name)
}

// The original's HEAD fixtures: two in_progress todos are a clear finding
// with file:line under the single policy and pass under the parallel one.
func TestLogCheckHeadFixturesUnderBothPolicies(t *testing.T) {
	ctx := context.Background()
	tw, pc := headFixture("head-todo-write"), headFixture("head-packed-chunks")
	_, stderr, err := runCLI(ctx, "log", "check", tw)
	if code, ok := err.(exitCode); !ok || code != 1 {
		t.Fatalf("single policy: err %v, want exit 1", err)
	}
	want := "FAIL " + filepath.Join(tw, "session.jsonl") + ":21: todo/write seq 98: 2 todos are in_progress: invalid under the single policy"
	if !strings.Contains(stderr, want) || !strings.Contains(stderr, "[TODO-ACTIVE]") {
		t.Fatalf("stderr %q\nwant %q ... [TODO-ACTIVE]", stderr, want)
	}
	stdout, stderr, err := runCLI(ctx, "log", "check", "--policy", "parallel", tw, pc)
	if err != nil {
		t.Fatalf("parallel policy: %v\n%s", err, stderr)
	}
	for _, w := range []string{
		"ok " + filepath.Join(tw, "session.jsonl") + " [main]: session d9d967e8-0112-471c-a3b5-dfdc171aba61, 115 events (committed-fixture format)\n",
		"ok " + filepath.Join(pc, "session.jsonl") + " [main]: session ff1c1e99-3bd4-4ef8-a954-80d607d628ba, 124 events (committed-fixture format)\n",
	} {
		if !strings.Contains(stdout, w) {
			t.Fatalf("stdout %q lacks %q", stdout, w)
		}
	}
	// Once per type and log: the hooks are only in head-packed-chunks.
	for typ, logs := range map[string]int{"agent/inbox/spliced": 2, "session/title": 2, "request/header": 2, "request/context": 2, "hook/invoked": 1, "hook/result": 1} {
		if n := strings.Count(stderr, `unknown event type "`+typ+`"`); n != logs {
			t.Fatalf("unknown type %s warned %d times, want %d:\n%s", typ, n, logs, stderr)
		}
	}

	stdout, _, err = runCLI(ctx, "log", "show", tw)
	if err != nil {
		t.Fatal(err)
	}
	plan := "  [todos]\n    [~] read the code\n    [~] watch the background build\n    [ ] write the fix\n"
	if !strings.Contains(stdout, plan) || !strings.Contains(stdout, "INVALID (single policy) "+filepath.Join(tw, "session.jsonl")+":21: 2 todos are in_progress") {
		t.Fatalf("log show (single):\n%s", stdout)
	}
	if !strings.Contains(stdout, "session/title      1  (not modelled, kept)") || !strings.Contains(stdout, "5 events of types this tool does not model") {
		t.Fatalf("log show does not count the unknown types:\n%s", stdout)
	}
	stdout, _, err = runCLI(ctx, "log", "show", "--policy", "parallel", tw)
	if err != nil || !strings.Contains(stdout, plan) || strings.Contains(stdout, "INVALID") {
		t.Fatalf("log show (parallel): %v\n%s", err, stdout)
	}
}

const cliHeader = `{"type":"session","version":0,"id":"t","createdAt":0}`

func writeLines(t *testing.T, path string, lines ...string) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// Every way a todo/write payload breaks the contract fails log check with
// file:line and the invariant's ID; log show shows the write as invalid.
func TestLogCheckJudgesEveryTodoWrite(t *testing.T) {
	cases := map[string]struct{ data, want string }{
		"todos not an array": {`{"todos":"x"}`, `todos is a string, not an array [TODO-ARRAY]`},
		"todos missing":      {`{}`, `missing field "todos" [TODO-ARRAY]`},
		"item not an object": {`{"todos":[1]}`, `todos[0] is a number, not an object [TODO-ITEM]`},
		"blank content":      {`{"todos":[{"content":"  ","status":"pending"}]}`, `todos[0].content is empty once trimmed [TODO-ITEM]`},
		"content not string": {`{"todos":[{"content":5,"status":"pending"}]}`, `todos[0].content is a number, not a string [TODO-ITEM]`},
		"unknown status":     {`{"todos":[{"content":"a","status":"done"}]}`, `todos[0].status "done" is not pending, in_progress or completed [TODO-STATUS]`},
		"missing status":     {`{"todos":[{"content":"a"}]}`, `todos[0] has no status [TODO-STATUS]`},
		"duplicate content":  {`{"todos":[{"content":"a","status":"pending"},{"content":"a","status":"completed"}]}`, `todos[1].content "a" repeats todos[0] [TODO-UNIQUE]`},
		"two in_progress":    {`{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}`, `2 todos are in_progress: invalid under the single policy`},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			path := writeLines(t, filepath.Join(t.TempDir(), "s.jsonl"), cliHeader,
				`{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}`,
				`{"type":"todo/write","seq":1,"time":0,"data":`+c.data+`}`,
				`{"type":"turn/end","seq":2,"time":0,"data":{"turn":1}}`)
			_, stderr, err := runCLI(context.Background(), "log", "check", path)
			if code, ok := err.(exitCode); !ok || code != 1 {
				t.Fatalf("err %v, want exit 1", err)
			}
			if want := "FAIL " + path + ":3: todo/write seq 1: " + c.want; !strings.Contains(stderr, want) {
				t.Fatalf("stderr %q\nwant %q", stderr, want)
			}
			stdout, _, err := runCLI(context.Background(), "log", "show", path)
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(stdout, "no todo_write in this session") || !strings.Contains(stdout, "INVALID (single policy) "+path+":3: ") {
				t.Fatalf("log show of an invalid write:\n%s", stdout)
			}
		})
	}
}

// A scenario folder: the main log and its children, each checked and named.
func TestLogCheckOfAScenarioFolderNamesEachLog(t *testing.T) {
	dir := t.TempDir()
	turn := []string{`{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}`, `{"type":"turn/end","seq":1,"time":0,"data":{"turn":1}}`}
	writeLines(t, filepath.Join(dir, "session.jsonl"), append([]string{cliHeader}, turn...)...)
	writeLines(t, filepath.Join(dir, "session.2.jsonl"), append([]string{`{"type":"session","version":0,"id":"c2","createdAt":0,"delegationDepth":1,"parentSession":"t"}`}, turn...)...)
	writeLines(t, filepath.Join(dir, "session.10.jsonl"), `{"type":"session","version":0,"id":"c10","createdAt":0,"parentSession":"t"}`, turn[1])
	stdout, stderr, err := runCLI(context.Background(), "log", "check", dir)
	if code, ok := err.(exitCode); !ok || code != 1 {
		t.Fatalf("err %v, want exit 1 (child 10 is broken)", err)
	}
	wantOut := "ok " + filepath.Join(dir, "session.jsonl") + " [main]: session t, 2 events\n" +
		"ok " + filepath.Join(dir, "session.2.jsonl") + " [child 2 of session t]: session c2, 2 events\n"
	if stdout != wantOut {
		t.Fatalf("stdout\n%s\nwant\n%s", stdout, wantOut)
	}
	if want := "FAIL " + filepath.Join(dir, "session.10.jsonl") + ": line 2: event seq 1 (turn/end): turn/end with no open turn [LOG-TURN]"; !strings.Contains(stderr, want) {
		t.Fatalf("stderr %q\nwant %q", stderr, want)
	}
	stdout, _, err = runCLI(context.Background(), "log", "show", dir)
	if err != nil || !strings.Contains(stdout, "session c2 [child 2 of session t] (2 events)") || strings.Index(stdout, "session c2") > strings.Index(stdout, "session c10") {
		t.Fatalf("log show DIR: %v\n%s", err, stdout)
	}
}

func TestLogCheckListNamesEveryInvariant(t *testing.T) {
	stdout, _, err := runCLI(context.Background(), "log", "check", "--list")
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"LOG-LINE", "LOG-HEADER", "LOG-FORMAT", "LOG-TYPE", "LOG-SEQ", "LOG-DATA", "LOG-TURN", "LOG-STEP", "LOG-TOOL", "LOG-SURFACE", "TODO-ARRAY", "TODO-ITEM", "TODO-STATUS", "TODO-UNIQUE", "TODO-ACTIVE"} {
		if !strings.Contains(stdout, "\n"+id+" ") && !strings.HasPrefix(stdout, id+" ") {
			t.Fatalf("--list lacks %s:\n%s", id, stdout)
		}
	}
}

// TestLogCheckSignalChild is the process TestLogCheckStopsOnSIGINTAndSIGTERM
// signals: the test binary running Main, as the todoharness binary does.
func TestLogCheckSignalChild(t *testing.T) {
	args := os.Getenv("TODOHARNESS_LOGCHECK_CHILD")
	if args == "" {
		t.Skip("helper process of TestLogCheckStopsOnSIGINTAndSIGTERM, not a test on its own")
	}
	os.Exit(Main(strings.Split(args, "\n")))
}

// `log check` of a FIFO whose writer never ends its line stops when the
// process gets SIGINT or SIGTERM.
func TestLogCheckStopsOnSIGINTAndSIGTERM(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		t.Run(sig.String(), func(t *testing.T) {
			path := silentFIFO(t, `{"type":"session","version":0,"id":"s","createdAt":0}`+"\n"+`{"type":"turn/st`)
			cmd := exec.Command(os.Args[0], "-test.run=^TestLogCheckSignalChild$")
			cmd.Env = append(os.Environ(), "TODOHARNESS_LOGCHECK_CHILD=log\ncheck\n"+path)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			// Signal once the child reads the FIFO (Main has installed its
			// signal handling before that).
			waitOpen(t, cmd.Process.Pid, path)
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-done:
				var ee *exec.ExitError
				if !errors.As(err, &ee) || ee.ExitCode() != 1 || !strings.Contains(stderr.String(), "context canceled") {
					t.Fatalf("after %v: %v, stderr %q; want exit 1 naming the cancelled context", sig, err, stderr.String())
				}
			case <-time.After(time.Minute):
				_ = cmd.Process.Kill()
				t.Fatalf("log check still running a minute after %v", sig)
			}
		})
	}
}

// --policy auto reads the policy from the todo_write description a log's
// request header recorded, says what it decided, and falls back to single
// (saying so) when the log recorded none.
func TestLogCheckPolicyAuto(t *testing.T) {
	twoActive := `{"type":"todo/write","seq":2,"time":0,"data":{"todos":[{"content":"a","status":"in_progress"},{"content":"b","status":"in_progress"}]}}`
	header := func(desc string) string {
		return `{"type":"request/header","seq":1,"time":0,"data":{"header":{"tools":[{"type":"function","function":{"name":"todo_write","description":"` + desc + `"}}]}}}`
	}
	mk := func(name, second string) string {
		return writeLines(t, filepath.Join(t.TempDir(), name), cliHeader,
			`{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}`, second, twoActive,
			`{"type":"turn/end","seq":3,"time":0,"data":{"turn":1}}`)
	}
	parallel := mk("parallel.jsonl", header("Several tasks may be in_progress at once when they truly run in parallel."))
	single := mk("single.jsonl", header("Keep exactly one task in_progress."))
	none := mk("none.jsonl", `{"type":"request/header","seq":1,"time":0,"data":{"header":{"tools":"{{tools}}"}}}`)
	ctx := context.Background()

	stdout, stderr, err := runCLI(ctx, "log", "check", "--policy", "auto", parallel)
	if err != nil || !strings.Contains(stdout, "ok "+parallel) || !strings.Contains(stderr, "policy: "+parallel+": parallel (--policy auto: the tool description says") {
		t.Fatalf("auto on a parallel description: %v\nstdout %s\nstderr %s", err, stdout, stderr)
	}
	for _, p := range []string{single, none} {
		_, stderr, err = runCLI(ctx, "log", "check", "--policy", "auto", p)
		if code, ok := err.(exitCode); !ok || code != 1 || !strings.Contains(stderr, "policy: "+p+": single") || !strings.Contains(stderr, "invalid under the single policy") {
			t.Fatalf("auto on %s: err %v\n%s", p, err, stderr)
		}
	}
	if !strings.Contains(stderr, "no request header in the log lists a todo_write tool") {
		t.Fatalf("the fallback does not say why:\n%s", stderr)
	}
	stdout, _, err = runCLI(ctx, "log", "show", "--policy", "auto", parallel)
	if err != nil || strings.Contains(stdout, "INVALID") {
		t.Fatalf("log show --policy auto: %v\n%s", err, stdout)
	}
	if _, _, err := runCLI(ctx, "log", "check", "--policy", "sometimes", parallel); err == nil || !strings.Contains(err.Error(), `unknown policy "sometimes"`) || !strings.Contains(err.Error(), "auto") {
		t.Fatalf("a bad --policy: %v", err)
	}
}

// A child log whose number does not fit an int is named as written, and
// comes after the smaller numbers.
func TestLogCheckNamesAHugeChildNumberAsWritten(t *testing.T) {
	dir := t.TempDir()
	turn := []string{`{"type":"turn/start","seq":0,"time":0,"data":{"turn":1}}`, `{"type":"turn/end","seq":1,"time":0,"data":{"turn":1}}`}
	writeLines(t, filepath.Join(dir, "session.jsonl"), append([]string{cliHeader}, turn...)...)
	child := `{"type":"session","version":0,"id":"c","createdAt":0,"parentSession":"t"}`
	writeLines(t, filepath.Join(dir, "session.99999999999999999999999.jsonl"), append([]string{child}, turn...)...)
	writeLines(t, filepath.Join(dir, "session.3.jsonl"), append([]string{child}, turn...)...)
	stdout, stderr, err := runCLI(context.Background(), "log", "check", dir)
	if err != nil {
		t.Fatalf("%v: %s", err, stderr)
	}
	huge, three := strings.Index(stdout, "[child 99999999999999999999999 of session t]"), strings.Index(stdout, "[child 3 of session t]")
	if huge < 0 || three < 0 || three > huge || strings.Contains(stdout, "9223372036854775807") {
		t.Fatalf("stdout\n%s\nwant child 3, then child 99999999999999999999999 named as written", stdout)
	}
}
