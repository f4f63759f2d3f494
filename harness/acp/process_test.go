package acp_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/todoharness/todoharness/harness/acp"
	"github.com/todoharness/todoharness/harness/acp/acptest"
	"github.com/todoharness/todoharness/harness/builtin"
	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
)

// The test binary doubles as the reference agent: with childDirEnv set it
// serves the bridge on its stdio over that sessions directory, with the
// deterministic model childModel (childModeEnv picks its behaviour), so the
// tests can SIGKILL a real agent process without building one.
const (
	childDirEnv  = "TODOHARNESS_ACP_TEST_AGENT_SESSIONS"
	childModeEnv = "TODOHARNESS_ACP_TEST_AGENT_MODE"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(childDirEnv); dir != "" {
		os.Exit(runChildAgent(dir, os.Getenv(childModeEnv)))
	}
	os.Exit(m.Run())
}

func runChildAgent(dir, mode string) int {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	reg, err := builtin.Compose("")
	if err != nil {
		logger.Error("compose", "err", err)
		return 2
	}
	b, err := acp.New(acp.Config{Sessions: session.Dir{Path: dir}, Model: childModel{mode: mode}, Tools: reg, Logger: logger})
	if err != nil {
		logger.Error("bridge", "err", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	if err := b.Serve(ctx, os.Stdin, os.Stdout); err != nil {
		logger.Error("serve", "err", err)
		return 1
	}
	return 0
}

// Modes of the child agent's model.
const (
	// modeTodoThenText answers a user message with reasoning and a
	// todo_write call, and the tool's result with text: each prompt shows
	// thought chunks, tool_call, plan, tool_call_update, message chunks.
	modeTodoThenText = ""
	// modeTodoThenHang is the same, but after the tool's result it streams
	// some reasoning and then never finishes: the turn stays open.
	modeTodoThenHang = "todo-then-hang"
	// modePaced is modeTodoThenText with a pause of a millisecond before
	// each chunk, so that a kill lands inside a turn, not after it.
	modePaced = "paced"
)

// childModel answers from the request alone, so that a restarted agent
// continues the same script.
type childModel struct{ mode string }

func (m childModel) Stream(ctx context.Context, req llm.Request, onChunk func(llm.Chunk) error) (llm.Response, error) {
	if m.mode == modePaced {
		next := onChunk
		onChunk = func(c llm.Chunk) error {
			select {
			case <-time.After(time.Millisecond):
			case <-ctx.Done():
				return ctx.Err()
			}
			return next(c)
		}
	}
	n := len(req.Messages)
	if n > 0 && req.Messages[n-1].Role == llm.RoleTool {
		if m.mode == modeTodoThenHang {
			return streamTurn(ctx, fakeTurn{reasoning: "Now the slow part.", hang: true}, onChunk)
		}
		return streamTurn(ctx, fakeTurn{text: fmt.Sprintf("Step %d is done, the list is up to date.", n)}, onChunk)
	}
	return streamTurn(ctx, fakeTurn{
		reasoning: "Plan the work first, then do it.",
		calls: []fakeCall{{id: fmt.Sprintf("call_%d", n), name: "todo_write",
			args: todos(fmt.Sprintf("task %d", n), "in_progress", fmt.Sprintf("task %d follow-up", n), "pending")}},
	}, onChunk)
}

// agentProc is the agent as a subprocess with a recording client on its
// stdio.
type agentProc struct {
	cmd     *exec.Cmd
	conn    *acptest.Conn
	toIn    *os.File // our end of its stdin
	fromOut *os.File // our end of its stdout
	stderr  *cappedBuffer
	exited  chan struct{}
	err     error // of Wait, once exited is closed
}

// startAgent starts the test binary as the agent over dir.
func startAgent(tb testing.TB, dir, mode string) *agentProc {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	inR, inW, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		tb.Fatal(err)
	}
	p := &agentProc{toIn: inW, fromOut: outR, stderr: &cappedBuffer{max: 64 << 10}, exited: make(chan struct{})}
	p.cmd = exec.Command(exe, "-test.run=^$")
	p.cmd.Env = append(os.Environ(), childDirEnv+"="+dir, childModeEnv+"="+mode)
	p.cmd.Stdin, p.cmd.Stdout, p.cmd.Stderr = inR, outW, p.stderr
	if err := p.cmd.Start(); err != nil {
		tb.Fatalf("start agent: %v", err)
	}
	_ = inR.Close()
	_ = outW.Close()
	go func() {
		p.err = p.cmd.Wait()
		close(p.exited)
	}()
	p.conn = acptest.Connect(inW, outR)
	tb.Cleanup(func() { p.kill(tb) })
	return p
}

// kill SIGKILLs the agent and returns once its last output was read.
func (p *agentProc) kill(tb testing.TB) {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	p.wait(tb)
}

// stop closes the agent's stdin, as an editor does, and waits for it.
func (p *agentProc) stop(tb testing.TB) {
	_ = p.toIn.Close()
	p.wait(tb)
	if p.err != nil {
		tb.Errorf("agent exited with %v; stderr:\n%s", p.err, p.stderr)
	}
}

func (p *agentProc) wait(tb testing.TB) {
	select {
	case <-p.exited:
	case <-time.After(time.Minute):
		tb.Fatalf("agent did not exit; stderr:\n%s", p.stderr)
	}
	select {
	case <-p.conn.Done():
	case <-time.After(time.Minute):
		tb.Fatal("the client did not see the end of the agent's output")
	}
	_ = p.toIn.Close()
	_ = p.fromOut.Close()
}

// cappedBuffer keeps the first max bytes written to it.
type cappedBuffer struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (c *cappedBuffer) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if room := c.max - c.buf.Len(); room > 0 {
		c.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (c *cappedBuffer) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.buf.String()
}

// updateKeys returns the session/update objects of lines (for session id,
// all when empty), each as canonical JSON, in order; user_message_chunk is
// left out when dropUser is set.
func updateKeys(lines [][]byte, id string, dropUser bool) []string {
	var out []string
	for _, l := range lines {
		var m struct {
			Method string `json:"method"`
			Params struct {
				SessionID string         `json:"sessionId"`
				Update    map[string]any `json:"update"`
			} `json:"params"`
		}
		if json.Unmarshal(l, &m) != nil || m.Method != "session/update" || (id != "" && m.Params.SessionID != id) {
			continue
		}
		if dropUser && m.Params.Update["sessionUpdate"] == "user_message_chunk" {
			continue
		}
		b, err := json.Marshal(m.Params.Update) // map keys sorted
		if err != nil {
			panic(err)
		}
		out = append(out, string(b))
	}
	return out
}

// missingFrom returns the first element of seen that is not matched, in
// order, in replayed (seen must be a subsequence of replayed), or "".
func missingFrom(seen, replayed []string) (missing string, index int) {
	j := 0
	for i, s := range seen {
		for j < len(replayed) && replayed[j] != s {
			j++
		}
		if j == len(replayed) {
			return s, i
		}
		j++
	}
	return "", -1
}

// checkLogFile runs the log's invariants, as `todoharness log check` does,
// and returns the reason of the last turn/end and whether a turn is open.
func checkLogFile(tb testing.TB, path string) (lastEnd string, open bool) {
	tb.Helper()
	ld, err := session.LoadFile(path)
	if err != nil {
		tb.Fatalf("log check %s: %v", filepath.Base(path), err)
	}
	var c session.Checker
	for i, e := range ld.Events {
		if err := c.Check(e); err != nil {
			tb.Fatalf("log check %s line %d: %v", filepath.Base(path), ld.Lines[i], err)
		}
		if e.Type == session.TypeTurnEnd {
			var d session.TurnEnd
			if err := e.Decode(&d); err != nil {
				tb.Fatalf("log check %s line %d: %v", filepath.Base(path), ld.Lines[i], err)
			}
			lastEnd = d.Reason.Kind
		}
	}
	t, _ := c.State()
	return lastEnd, t != 0
}
