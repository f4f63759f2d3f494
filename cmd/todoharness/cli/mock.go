package cli

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/todoharness/todoharness/mockmodel"
)

// newMockCmd is `todoharness mock`: the scripted mock model.
func newMockCmd() *cobra.Command {
	mock := &cobra.Command{
		Use:   "mock",
		Short: "Scripted mock model: a server speaking " + wireAPIs(),
	}
	var script, addr, journal string
	serve := &cobra.Command{
		Use:   "serve --script FILE [--addr 127.0.0.1:0] [--journal FILE]",
		Short: "Serve a mock-model script over HTTP until interrupted",
		Long: `Serve a mock-model script (YAML; the format is in docs/mock-scripts.md) over
HTTP on ` + countWord(len(mockmodel.Wires())) + ` model APIs at once, each streaming and not, chosen by the path:

` + wireTable() + `
Every request takes the next turn of the script, whichever API it came on.
The first line on stdout is the base URL for OpenAI clients
(http://127.0.0.1:PORT/v1; ` + clientsWithoutV1() + ` clients take it without /v1).
Serves until SIGINT or SIGTERM. With --journal, every request is appended to
FILE as one JSON line as it arrives, in one canonical form whatever the API.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			return runMockServe(ctx, cmd, script, addr, journal)
		},
	}
	serve.Flags().StringVar(&script, "script", "", "mock-model script (YAML)")
	serve.Flags().StringVar(&addr, "addr", "127.0.0.1:0", "address to listen on")
	serve.Flags().StringVar(&journal, "journal", "", "append the request journal to this file (JSONL)")
	_ = serve.MarkFlagRequired("script")
	mock.AddCommand(serve)
	return mock
}

func runMockServe(ctx context.Context, cmd *cobra.Command, scriptPath, addr, journalPath string) error {
	script, err := mockmodel.LoadScript(scriptPath)
	if err != nil {
		return err
	}
	var lc net.ListenConfig
	l, err := lc.Listen(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("mock serve: listen: %w", err)
	}
	srv := mockmodel.NewUnstartedServer(script)
	srv.Listener = l
	var jf *os.File
	if journalPath != "" {
		jf, err = os.OpenFile(journalPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			_ = l.Close()
			return fmt.Errorf("mock serve: journal: %w", err)
		}
		srv.Journal().Tee(jf)
	}
	srv.Start()
	if _, err := fmt.Fprintln(cmd.OutOrStdout(), srv.BaseURL()); err != nil {
		srv.Close()
		return fmt.Errorf("mock serve: %w", err)
	}
	<-ctx.Done()
	srv.Close()
	if jf != nil {
		if err := srv.Journal().TeeErr(); err != nil {
			_ = jf.Close()
			return err
		}
		if err := jf.Close(); err != nil {
			return fmt.Errorf("mock serve: journal: %w", err)
		}
	}
	return nil
}

// wireAPIs names the APIs the mock speaks: "A, B and C".
func wireAPIs() string {
	var apis []string
	for _, w := range mockmodel.Wires() {
		apis = append(apis, w.API)
	}
	return andList(apis)
}

// wireTable lists the mock's APIs with their endpoints, a line each.
func wireTable() string {
	width := 0
	for _, w := range mockmodel.Wires() {
		width = max(width, len(w.API))
	}
	var b strings.Builder
	for _, w := range mockmodel.Wires() {
		fmt.Fprintf(&b, "  %-*s  %s\n", width, w.API, w.Serves)
	}
	return b.String()
}

// clientsWithoutV1 names the clients that take the mock's URL without /v1
// ({{.URL}}): "Anthropic and Gemini".
func clientsWithoutV1() string {
	var names []string
	for _, w := range mockmodel.Wires() {
		if w.WithoutV1() && !slices.Contains(names, w.Client) {
			names = append(names, w.Client)
		}
	}
	return andList(names)
}

// andList joins words as a sentence does: "a", "a and b", "a, b and c".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// countWord spells a small count out ("four"); larger ones are digits.
func countWord(n int) string {
	words := []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"}
	if n >= 0 && n < len(words) {
		return words[n]
	}
	return strconv.Itoa(n)
}
