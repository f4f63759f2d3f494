package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"time"

	"github.com/spf13/cobra"

	"github.com/todoharness/todoharness/harness/agent"
	"github.com/todoharness/todoharness/harness/builtin"
	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/llm/openaichat"
	"github.com/todoharness/todoharness/harness/session"
	"github.com/todoharness/todoharness/harness/stdio"
)

type chatFlags struct {
	script      string
	model       string
	sessions    string
	composition string
	maxSteps    int
}

// newChatCmd is `todoharness chat`: the stdio UI of the reference harness.
func newChatCmd() *cobra.Command {
	var f chatFlags
	cmd := &cobra.Command{
		Use:   "chat [--script FILE] [--model NAME] [--sessions DIR]",
		Short: "Chat with the reference harness in the terminal (readline prompt, [todos] checklist)",
		Long: `Chat with the reference harness: each line you enter is one turn. Assistant
text streams as it arrives; every todo_write prints the [todos] checklist
([x] completed, [~] in progress, [ ] pending).

Model: --script FILE plays a mock-model script (YAML, no network); otherwise
DeepSeek when $DEEPSEEK_API_KEY is set ($DEEPSEEK_BASE_URL, $DEEPSEEK_MODEL or
--model). With neither, chat refuses to start.

With a terminal on stdin the prompt has line editing and history; piped
input is read line by line and echoed after the prompt, so a transcript reads
like a terminal session. Ctrl-C cancels the running turn (it ends with reason
cancelled); at the prompt, Ctrl-C or Ctrl-D (or /quit) ends the chat.

The session is persisted as <id>.jsonl under --sessions, else $` + sessionsEnv + `,
else $XDG_STATE_HOME/todoharness/sessions; its path is printed on stderr.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runChat(cmd, f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.script, "script", "", "mock model script (YAML): chat with the scripted model")
	fl.StringVar(&f.model, "model", "", "model name (default $DEEPSEEK_MODEL or "+openaichat.DefaultModel+")")
	fl.StringVar(&f.sessions, "sessions", "", "sessions directory (default $"+sessionsEnv+" or the user state dir)")
	fl.StringVar(&f.composition, "composition", "", "composition file (default: the shipped one)")
	fl.IntVar(&f.maxSteps, "max-steps", 0, "steps per turn before it stops with reason max-steps (default 25)")
	return cmd
}

func runChat(cmd *cobra.Command, f chatFlags) error {
	model, modelName, desc, err := chatModel(environOf(cmd.Context()), f)
	if err != nil {
		return err
	}
	reg, err := builtin.Compose(f.composition)
	if err != nil {
		return fmt.Errorf("composition: %w", err)
	}
	dir, err := sessionsDir(environOf(cmd.Context()), f.sessions)
	if err != nil {
		return err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return fmt.Errorf("chat: %w", err)
	}
	id, err := newChatSessionID()
	if err != nil {
		return err
	}
	log, err := session.Dir{Path: dir}.Create(id, cwd)
	if err != nil {
		return fmt.Errorf("chat: %w", err)
	}
	a := agent.New(log, agent.Config{Model: model, Tools: reg, ModelName: modelName, MaxSteps: f.maxSteps})

	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	in, interactive, err := stdio.NewInput(cmd.InOrStdin(), out, stdio.DefaultPrompt)
	if err != nil {
		_ = log.Close()
		return fmt.Errorf("chat: %w", err)
	}
	defer in.Close()
	chat := &stdio.Chat{Agent: a, Out: out, Echo: !interactive}
	fmt.Fprintf(errOut, "todoharness chat: model %s; session %s (%s)\n", desc, id, log.Store().Path())
	if interactive {
		fmt.Fprintln(errOut, "Ctrl-C cancels a turn; Ctrl-D or /quit ends the chat.")
	}

	// Ctrl-C belongs to the chat: it cancels the running turn, or at the
	// prompt ends the chat. SIGTERM (cmd's context) ends everything; the
	// turn in flight is cancelled and the log flushed either way.
	ctx := cmd.Context()
	// leaveIdle ends a chat waiting at a piped prompt: a blocked read of
	// stdin cannot be interrupted, so exit now; no turn runs (Interrupt said
	// so and stopped the chat) and the log is complete.
	leaveIdle := func(code int) {
		_ = in.Close()
		_ = log.Close()
		os.Exit(code)
	}
	stop := handleInterrupts(ctx, chat, leaveIdle)
	defer stop()

	runErr := chat.Run(ctx, in)
	if err := log.Close(); err != nil {
		return errors.Join(runErr, fmt.Errorf("chat: close session log: %w", err))
	}
	return runErr
}

// handleInterrupts gives Ctrl-C to the chat until stop is called: it
// cancels the running turn, or at the prompt ends the chat (leaveIdle
// 130); ctx ending (SIGTERM) stops the chat, ending an idle one with
// leaveIdle 143.
func handleInterrupts(ctx context.Context, chat *stdio.Chat, leaveIdle func(code int)) (stop func()) {
	signal.Reset(os.Interrupt)
	sigc := make(chan os.Signal, 1)
	signal.Notify(sigc, os.Interrupt)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-done:
				return
			case <-ctx.Done():
				running := chat.Interrupt()
				chat.Stop()
				if !running {
					leaveIdle(143)
				}
				return
			case <-sigc:
				if !chat.Interrupt() {
					leaveIdle(130)
				}
			}
		}
	}()
	return func() {
		close(done)
		signal.Stop(sigc)
	}
}

// chatModel picks the model: --script, else DeepSeek when DEEPSEEK_API_KEY
// is set.
func chatModel(env environ, f chatFlags) (model llm.Model, name, desc string, err error) {
	return modelChoice{script: f.script, model: f.model}.build(env,
		"no model: DEEPSEEK_API_KEY is not set, so --script FILE is required (a mock-model script, see `todoharness mock serve --help`); set DEEPSEEK_API_KEY to chat with DeepSeek")
}

// newChatSessionID returns "chat-<UTC time>-<8 random hex digits>".
func newChatSessionID() (string, error) {
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("chat: session id: %w", err)
	}
	return "chat-" + time.Now().UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:]), nil
}
