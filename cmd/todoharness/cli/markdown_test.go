package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// conform --summary-md FILE writes the Markdown summary beside the text
// one; --format markdown prints it on stdout instead of the text summary,
// the other lines on stderr; conform merge writes it too; a FILE that
// cannot be written stops the run before any agent starts (exit 2).
func TestConformWritesMarkdownSummary(t *testing.T) {
	dir := t.TempDir()
	md := filepath.Join(dir, "summary.md")
	evidence := filepath.Join(dir, "evidence")
	var stdout, stderr bytes.Buffer
	args := []string{"conform", "-q", "--in-process", "--env", "TODOHARNESS_FAULT=accept-duplicates", "--check", "TW-VALID-DUP", "--settle", "50ms",
		"--summary-md", md, "--out", evidence}
	if code := Run(context.Background(), args, strings.NewReader(""), &stdout, &stderr); code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, stdout.String(), stderr.String())
	}
	b, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"### todoharness conform: ❌ FAIL\n", "| TW-VALID-DUP | MUST | FAIL | **yes** |"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("--summary-md lacks %q:\n%s", want, b)
		}
	}
	if !strings.Contains(stdout.String(), "ID            LEVEL") || !strings.Contains(stdout.String(), "Markdown summary "+md) {
		t.Errorf("the text summary is not on stdout, or does not name the Markdown file:\n%s", stdout.String())
	}

	stdout.Reset()
	stderr.Reset()
	if code := Run(context.Background(), []string{"conform", "-q", "--judge", evidence, "--check", "TW-VALID-DUP", "--format", "markdown", "--out", filepath.Join(dir, "again")}, strings.NewReader(""), &stdout, &stderr); code != 1 {
		t.Fatalf("--judge --format markdown: exit %d, want 1\n%s%s", code, stdout.String(), stderr.String())
	}
	// The same Markdown but for the run's time.
	elapsed := regexp.MustCompile(`\| [0-9.]+ s \|`)
	if got := stdout.String(); elapsed.ReplaceAllString(got, "") != elapsed.ReplaceAllString(string(b), "") {
		t.Errorf("--format markdown printed, not the --summary-md file's Markdown alone:\n%s\nwant:\n%s", got, b)
	}
	if !strings.Contains(stderr.String(), "transcript: ") {
		t.Errorf("the lines after the summary are not on stderr:\n%s", stderr.String())
	}

	merged := filepath.Join(dir, "merged.md")
	stdout.Reset()
	if code := Run(context.Background(), []string{"conform", "merge", evidence, "--summary-md", merged}, strings.NewReader(""), &stdout, &stdout); code != 1 {
		t.Fatalf("merge: exit %d, want 1\n%s", code, stdout.String())
	}
	if b, err := os.ReadFile(merged); err != nil || !strings.Contains(string(b), "| TW-VALID-DUP | MUST | FAIL |") {
		t.Errorf("merge --summary-md: %v\n%s", err, b)
	}

	stdout.Reset()
	blocked := filepath.Join(dir, "file")
	if err := os.WriteFile(blocked, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := Run(context.Background(), []string{"conform", "--summary-md", filepath.Join(blocked, "s.md")}, strings.NewReader(""), &stdout, &stdout); code != 2 || !strings.Contains(stdout.String(), "--summary-md") {
		t.Errorf("an unwritable --summary-md: exit %d, want 2 naming the flag\n%s", code, stdout.String())
	}
}
