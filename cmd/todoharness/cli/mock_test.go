package cli

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// `mock serve` prints its base URL on the first line, answers on it, writes
// the journal, and stops when its context ends.
func TestMockServePrintsBaseURLAndServes(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "script.yaml")
	if err := os.WriteFile(script, []byte("turns:\n  - text: hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(dir, "journal.jsonl")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pr, pw := io.Pipe()
	cmd := NewRootCmd()
	cmd.SetOut(pw)
	cmd.SetErr(io.Discard)
	cmd.SetArgs([]string{"mock", "serve", "--script", script, "--journal", journal})
	done := make(chan error, 1)
	go func() { done <- cmd.ExecuteContext(ctx); pw.Close() }()

	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the first line: %v", err)
	}
	base := strings.TrimSpace(line)
	if !strings.HasPrefix(base, "http://127.0.0.1:") || !strings.HasSuffix(base, "/v1") {
		t.Fatalf("first line %q is not a loopback base URL ending in /v1", base)
	}
	go io.Copy(io.Discard, pr)

	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/chat/completions",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "hello") {
		t.Fatalf("POST %s/chat/completions: %d %s", base, resp.StatusCode, body)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil && ctx.Err() == nil {
			t.Fatalf("mock serve: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("mock serve did not stop after its context ended")
	}
	j, err := os.ReadFile(journal)
	if err != nil || !strings.Contains(string(j), `"hi"`) {
		t.Fatalf("journal %s: %v %q", journal, err, j)
	}
}
