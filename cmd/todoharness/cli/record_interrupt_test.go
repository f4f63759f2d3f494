package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/todoharness/todoharness/scenario"
)

// A record interrupted by a signal (its context cancelled, as Main's
// SIGINT/SIGTERM handler does) while the agent waits on the model says it
// was interrupted and exits 130, leaving the scenario as it was; it does
// not call the half-made cassette corrupt.
func TestRecordInterruptedExits130(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "rotate")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	in := `{"steps":[{"op":"initialize"},{"op":"newSession"},{"op":"prompt","text":"Plan it with todo_write."}]}`
	if err := os.WriteFile(filepath.Join(dir, scenario.InputFile), []byte(in), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var once sync.Once
	up := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		once.Do(cancel) // the signal arrives while the model is thinking
		http.Error(w, "overloaded", http.StatusServiceUnavailable)
	}))
	defer up.Close()
	t.Setenv("TODOHARNESS_TEST_RECORD_KEY", "sk-test-interrupted-0123456789")
	var stdout, stderr bytes.Buffer
	code := Run(ctx, []string{"record", "--upstream", up.URL + "/v1", "--key-env", "TODOHARNESS_TEST_RECORD_KEY", dir}, nil, &stdout, &stderr)
	if code != 130 {
		t.Errorf("exit status %d, want 130\nstderr: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "rotate") || strings.Contains(stderr.String(), "corrupt") {
		t.Errorf("stderr should say the recording was interrupted, not that a cassette is corrupt:\n%s", stderr.String())
	}
	if _, err := os.Stat(filepath.Join(dir, scenario.CassetteFile)); !os.IsNotExist(err) {
		t.Errorf("a cassette was written: %v", err)
	}
}
