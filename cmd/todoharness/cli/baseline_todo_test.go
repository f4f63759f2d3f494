package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A baseline whose reasons are still the TODO --write-baseline wrote makes
// the run warn, and under --strict stops it before any agent starts.
func TestBaselineWithTODOReasons(t *testing.T) {
	dir := t.TempDir()
	baseline := filepath.Join(dir, "baseline.yaml")
	args := []string{"conform", "-q", "--in-process", "--env", "TODOHARNESS_FAULT=accept-duplicates", "--check", "TW-VALID-DUP", "--settle", "50ms"}
	var out, errw strings.Builder
	if code := Run(context.Background(), append(args, "--write-baseline", baseline), strings.NewReader(""), &out, &errw); code != 1 {
		t.Fatalf("exit %d, want 1\n%s%s", code, out.String(), errw.String())
	}
	b, err := os.ReadFile(baseline)
	if err != nil || !strings.Contains(string(b), `reason: "TODO"`) {
		t.Fatalf("baseline %q: %v", b, err)
	}
	out.Reset()
	errw.Reset()
	if code := Run(context.Background(), append(args, "--expected-failures", baseline), strings.NewReader(""), &out, &errw); code != 0 {
		t.Fatalf("exit %d, want 0 (the failure is expected)\n%s%s", code, out.String(), errw.String())
	}
	if want := "conform: warning: " + baseline + ": reason TODO left in 1 entry (TW-VALID-DUP)"; !strings.Contains(errw.String(), want) {
		t.Errorf("no warning %q:\n%s", want, errw.String())
	}
	out.Reset()
	errw.Reset()
	if code := Run(context.Background(), append(args, "--expected-failures", baseline, "--strict"), strings.NewReader(""), &out, &errw); code != 2 {
		t.Errorf("--strict: exit %d, want 2\n%s%s", code, out.String(), errw.String())
	}
	if !strings.Contains(errw.String(), "(--strict)") || strings.Contains(out.String(), "TW-VALID-DUP") {
		t.Errorf("--strict: not stopped before the run:\n%s%s", out.String(), errw.String())
	}
	if err := os.WriteFile(baseline, []byte("- id: TW-VALID-DUP\n  reason: the agent keeps duplicates on purpose\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	errw.Reset()
	if code := Run(context.Background(), append(args, "--expected-failures", baseline, "--strict"), strings.NewReader(""), &out, &errw); code != 0 || strings.Contains(errw.String(), "TODO") {
		t.Errorf("a filled-in baseline: exit %d\n%s%s", code, out.String(), errw.String())
	}
}

// A reason YAML cut at " #" is reported on stderr with its line and the
// quoted value to write; under --strict it stops the run (exit 2).
func TestBaselineReasonCutByComment(t *testing.T) {
	baseline := filepath.Join(t.TempDir(), "baseline.yaml")
	if err := os.WriteFile(baseline, []byte("- id: TW-VALID-DUP\n  reason: duplicates kept (tracked in #123)\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	args := []string{"conform", "-q", "--in-process", "--env", "TODOHARNESS_FAULT=accept-duplicates", "--check", "TW-VALID-DUP", "--settle", "50ms", "--expected-failures", baseline}
	var out, errw strings.Builder
	if code := Run(context.Background(), args, strings.NewReader(""), &out, &errw); code != 0 {
		t.Fatalf("exit %d, want 0 (the failure is expected)\n%s%s", code, out.String(), errw.String())
	}
	want := "conform: warning: " + baseline + `: TW-VALID-DUP: line 2: reason "duplicates kept (tracked in": YAML reads the rest of the line, "#123)", as a comment; if it belongs to the reason, quote it: reason: "duplicates kept (tracked in #123)"`
	if !strings.Contains(errw.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, errw.String())
	}
	out.Reset()
	errw.Reset()
	if code := Run(context.Background(), append(args, "--strict"), strings.NewReader(""), &out, &errw); code != 2 || !strings.Contains(errw.String(), "(--strict)") {
		t.Errorf("--strict: exit %d, want 2 before the run\n%s%s", code, out.String(), errw.String())
	}
}
