package cli

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/todoharness/todoharness/conformance"
)

// A report that cannot be written (issue 42, 14: a full disk; here
// /dev/full, where every write fails with ENOSPC) costs neither the verdict
// nor the other reports: --html is still written, the exit status is the
// verdict's (1, FAIL), and stderr names the report that was not written.
func TestAReportThatCannotBeWrittenKeepsTheVerdict(t *testing.T) {
	if _, err := os.Stat("/dev/full"); err != nil {
		t.Skipf("no /dev/full here: %v", err)
	}
	dir := t.TempDir()
	saved := filepath.Join(dir, "saved")
	writeShard(t, saved, savedRun(t))
	page := filepath.Join(dir, "conform.html")
	code, out := conformRun(t, "conform", "-q", "--judge", saved, "--json", "/dev/full", "--html", page)
	if code != 1 {
		t.Fatalf("exit %d, want 1 (the verdict, FAIL)\n%s", code, out)
	}
	if !strings.Contains(out, "--json /dev/full was not written") || !strings.Contains(out, "no space left on device") {
		t.Errorf("the output does not name the report that was not written:\n%s", out)
	}
	if !strings.Contains(out, "FAIL") {
		t.Errorf("no verdict printed:\n%s", out)
	}
	if !strings.Contains(out, "reports: HTML (open it in a browser) "+page+"\n") {
		t.Errorf("the reports line does not list exactly the report written:\n%s", out)
	}
	if b, err := os.ReadFile(page); err != nil || !bytes.Contains(b, []byte("<html")) {
		t.Errorf("--html was not written: %v", err)
	}
}

// An --out the run could not write whole is left marked (issue 42, 14):
// --judge refuses it rather than judge part of the run, and the verdict
// of the run that wrote it stands. Here a case folder that is a link
// stops the writing part way.
func TestAPartialOutIsMarkedAndRefused(t *testing.T) {
	dir := t.TempDir()
	saved, out := filepath.Join(dir, "saved"), filepath.Join(dir, "out")
	writeShard(t, saved, savedRun(t))
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(t.TempDir(), filepath.Join(out, "reject-duplicate")); err != nil {
		t.Fatal(err)
	}
	code, text := conformRun(t, "conform", "-q", "--judge", saved, "--out", out)
	if code != 1 || !strings.Contains(text, "--out "+out+" was not written") {
		t.Fatalf("exit %d, want 1 (FAIL) naming --out\n%s", code, text)
	}
	if _, err := os.Stat(filepath.Join(out, conformance.IncompleteFile)); err != nil {
		t.Fatalf("the partial --out is not marked: %v", err)
	}
	code, text = conformRun(t, "conform", "-q", "--judge", out)
	if code != 2 || !strings.Contains(text, conformance.IncompleteFile) {
		t.Fatalf("--judge of the partial folder: exit %d, want 2 naming %s\n%s", code, conformance.IncompleteFile, text)
	}
	// Written whole, the folder is no longer marked.
	os.Remove(filepath.Join(out, "reject-duplicate"))
	if code, text := conformRun(t, "conform", "-q", "--judge", saved, "--out", out); code != 1 {
		t.Fatalf("again: exit %d\n%s", code, text)
	}
	if _, err := os.Stat(filepath.Join(out, conformance.IncompleteFile)); err == nil {
		t.Fatal("the marker stayed after a whole write")
	}
	if code, text := conformRun(t, "conform", "-q", "--judge", out); code != 1 {
		t.Fatalf("--judge of the whole folder: exit %d, want 1\n%s", code, text)
	}
}

// TestFileSizeLimitChild is the process
// TestReportsUnderAFileSizeLimitAreReplacedWhole runs: Main under
// RLIMIT_FSIZE (a write past it fails with EFBIG, as on a full disk; Go
// ignores SIGXFSZ).
func TestFileSizeLimitChild(t *testing.T) {
	args, limit := os.Getenv("TODOHARNESS_FSIZE_CHILD"), os.Getenv("TODOHARNESS_FSIZE")
	if args == "" {
		t.Skip("helper process of TestReportsUnderAFileSizeLimitAreReplacedWhole, not a test on its own")
	}
	n, err := strconv.ParseUint(limit, 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: n, Max: n}); err != nil {
		t.Fatal(err)
	}
	os.Exit(Main(strings.Split(args, "\n")))
}

// Under a file size limit (issue 42, 14: `ulimit -f`) a report too large
// for it never replaces the good one with a truncated one, the verdict's
// exit status stands (1), and stderr names what was not written.
func TestReportsUnderAFileSizeLimitAreReplacedWhole(t *testing.T) {
	dir := t.TempDir()
	saved := filepath.Join(dir, "saved")
	writeShard(t, saved, savedRun(t))
	jsonOut, page := filepath.Join(dir, "conform.json"), filepath.Join(dir, "conform.html")
	for _, p := range []string{jsonOut, page} {
		if err := os.WriteFile(p, []byte("the good report"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestFileSizeLimitChild$")
	cmd.Env = append(os.Environ(), "TODOHARNESS_FSIZE=4096",
		"TODOHARNESS_FSIZE_CHILD="+strings.Join([]string{"conform", "-q", "--judge", saved, "--json", jsonOut, "--html", page}, "\n"))
	out, err := cmd.CombinedOutput()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 1 {
		t.Fatalf("exit %d, want 1 (the verdict, FAIL)\n%s", code, out)
	}
	for _, p := range []string{jsonOut, page} {
		if b, _ := os.ReadFile(p); string(b) != "the good report" {
			t.Errorf("%s was replaced by %d bytes of a report the limit cut", p, len(b))
		}
		if !strings.Contains(string(out), p+" was not written") {
			t.Errorf("the output does not name %s:\n%s", p, out)
		}
	}
	if es, _ := filepath.Glob(filepath.Join(dir, ".*tmp-*")); len(es) > 0 {
		t.Errorf("temporary files left: %v", es)
	}
}
