package cli

import (
	"bytes"
	"context"
	"errors"
	"os"
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
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
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

// `log check` of a FIFO whose writer is silent stops when the command's
// context ends (what SIGINT/SIGTERM do in main).
func TestLogCheckOfASilentFIFOStopsOnTheCommandContext(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
	w, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if _, err := w.WriteString(`{"type":"session","version":0,"id":"s","createdAt":0}` + "\n"); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan string, 1)
	go func() {
		_, stderr, _ := runCLI(ctx, "log", "check", path)
		done <- stderr
	}()
	time.Sleep(100 * time.Millisecond)
	cancel()
	select {
	case stderr := <-done:
		if !strings.Contains(stderr, "context canceled") {
			t.Fatalf("stderr %q, want the read to stop on the cancelled context", stderr)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("log check did not stop when its context was cancelled")
	}
}
