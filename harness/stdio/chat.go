package stdio

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/todoharness/todoharness/harness/agent"
	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/session"
)

// DefaultPrompt is the chat's input prompt.
const DefaultPrompt = "> "

// Chat is the terminal chat: it reads the user's lines, runs each as one
// turn of its agent and renders the turn from the session log as it is
// written: assistant text as it streams, a line for a failed tool call, the
// [todos] checklist on every todo/write, and a note when a turn does not
// complete. It renders off the log (Subscribe), never off the model or the
// tools, like every UI of the harness.
type Chat struct {
	Agent *agent.Agent
	Out   io.Writer
	// Prompt is the input prompt (DefaultPrompt when empty). It is written
	// by the LineReader on a terminal, by Chat when Echo is set.
	Prompt string
	// Echo writes the prompt and every line read to Out before its turn:
	// the transcript of piped input then reads like a terminal session.
	Echo bool

	mu      sync.Mutex
	cancel  context.CancelFunc
	stopped bool
}

// LineReader gives the chat the user's lines; io.EOF ends the chat.
type LineReader interface {
	ReadLine() (string, error)
}

// Run reads lines until EOF, "/quit", Stop or ctx's end, running each
// non-empty line as a turn. It returns an error only when the session log
// refused an event or reading failed.
func (c *Chat) Run(ctx context.Context, in LineReader) error {
	for {
		if ctx.Err() != nil || c.isStopped() {
			return nil
		}
		line, err := in.ReadLine()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("chat: read input: %w", err)
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if c.Echo {
			if _, err := fmt.Fprintf(c.Out, "%s%s\n", c.prompt(), line); err != nil {
				return fmt.Errorf("chat: %w", err)
			}
		}
		if line == "/quit" || line == "/exit" {
			return nil
		}
		if _, err := c.Turn(ctx, line); err != nil {
			return err
		}
	}
}

func (c *Chat) prompt() string {
	if c.Prompt == "" {
		return DefaultPrompt
	}
	return c.Prompt
}

// Turn runs one turn for text and renders it to Out. It returns how the
// turn ended; the error is the agent's (a log refusal) or agent.ErrBusy.
func (c *Chat) Turn(ctx context.Context, text string) (session.TurnEndReason, error) {
	turnCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.mu.Lock()
	if c.stopped {
		c.mu.Unlock()
		return session.TurnEndReason{Kind: session.TurnCancelled}, nil
	}
	c.cancel = cancel
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		c.cancel = nil
		c.mu.Unlock()
	}()
	r := &renderer{out: c.Out, names: map[string]string{}, atLineStart: true}
	unsubscribe := c.Agent.Session().Subscribe(r.event)
	defer unsubscribe()
	return c.Agent.Prompt(turnCtx, []llm.Part{{Type: llm.PartText, Text: text}})
}

// Interrupt cancels the running turn and reports whether there was one.
// With no turn running it stops the chat instead: Run starts no other turn.
// It is what Ctrl-C does.
func (c *Chat) Interrupt() (cancelledTurn bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cancel != nil {
		c.cancel()
		return true
	}
	c.stopped = true
	return false
}

// Stop cancels the running turn, if any, and makes Run return.
func (c *Chat) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stopped = true
	if c.cancel != nil {
		c.cancel()
	}
}

func (c *Chat) isStopped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stopped
}

// renderer writes one turn's events. Write errors are ignored: a closed
// terminal must not stop the turn (the log keeps everything).
type renderer struct {
	out         io.Writer
	names       map[string]string // callId -> tool name
	atLineStart bool
}

func (r *renderer) write(s string) {
	if s == "" {
		return
	}
	_, _ = io.WriteString(r.out, s)
	r.atLineStart = strings.HasSuffix(s, "\n")
}

// newline ends the current line, if any text is on it.
func (r *renderer) newline() {
	if !r.atLineStart {
		r.write("\n")
	}
}

func (r *renderer) event(e session.Event) {
	switch e.Type {
	case session.TypeStepStart:
		r.newline()
	case session.TypeAssistantChunk:
		var d session.AssistantChunk
		if e.Decode(&d) == nil && d.Chunk.Type == llm.ChunkTextDelta {
			r.write(d.Chunk.Text)
		}
	case session.TypeToolCall:
		var d session.ToolCall
		if e.Decode(&d) == nil {
			r.names[d.CallID] = d.Name
		}
	case session.TypeToolResult:
		var d session.ToolResult
		if e.Decode(&d) == nil && d.IsError {
			r.newline()
			r.write(fmt.Sprintf("\n  [%s failed] %s\n", r.names[d.CallID], oneLine(llm.Message{Content: d.Content}.Text())))
		}
	case session.TypeTodoWrite:
		var d session.TodoWrite
		if e.Decode(&d) == nil {
			r.newline()
			r.write(RenderTodos(d.Todos))
		}
	case session.TypeTurnEnd:
		var d session.TurnEnd
		if e.Decode(&d) != nil {
			return
		}
		r.newline()
		if note := TurnNote(d.Reason); note != "" {
			r.write(note + "\n")
		}
	}
}

// TurnNote is the line the chat prints when a turn ends other than
// completed: "[cancelled]", "[error] <message>", "[max-steps] <message>".
func TurnNote(reason session.TurnEndReason) string {
	if reason.Kind == session.TurnCompleted || reason.Kind == "" {
		return ""
	}
	if reason.Message == "" {
		return "[" + reason.Kind + "]"
	}
	return "[" + reason.Kind + "] " + oneLine(reason.Message)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
