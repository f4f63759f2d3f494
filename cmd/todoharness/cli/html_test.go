package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// conform --html FILE writes the page, and judging saved evidence again
// writes it too; a FILE that cannot be written stops the run before any
// agent starts (exit 2).
func TestConformWritesHTML(t *testing.T) {
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	evidence := filepath.Join(dir, "evidence")
	var out bytes.Buffer
	args := []string{"conform", "-q", "--in-process", "--env", "TODOHARNESS_FAULT=accept-duplicates", "--check", "TW-VALID-DUP", "--settle", "50ms",
		"--html", page, "--out", evidence}
	if code := Run(context.Background(), args, strings.NewReader(""), &out, &out); code != 1 {
		t.Fatalf("exit %d, want 1\n%s", code, out.String())
	}
	b, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<!DOCTYPE html>", `<span class="word">FAIL</span>`, `id="check-TW-VALID-DUP"`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	again := filepath.Join(dir, "again.html")
	if code := Run(context.Background(), []string{"conform", "-q", "--judge", evidence, "--html", again}, strings.NewReader(""), &out, &out); code != 1 {
		t.Fatalf("--judge: exit %d, want 1\n%s", code, out.String())
	}
	if b, err := os.ReadFile(again); err != nil || !strings.Contains(string(b), `id="check-TW-VALID-DUP"`) {
		t.Errorf("--judge --html: %v", err)
	}
	out.Reset()
	blocked := filepath.Join(dir, "file")
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := Run(context.Background(), []string{"conform", "--html", filepath.Join(blocked, "r.html")}, strings.NewReader(""), &out, &out); code != 2 || !strings.Contains(out.String(), "--html") {
		t.Errorf("an unwritable --html: exit %d, want 2 naming the flag\n%s", code, out.String())
	}
}
