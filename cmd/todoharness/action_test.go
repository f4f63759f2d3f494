package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/cmd/todoharness/cli"
	"github.com/todoharness/todoharness/internal/testutil/selfexec"
)

// The action's scripts run the test binary as todoharness.
func TestMain(m *testing.M) {
	selfexec.Main(m, selfexec.Programs{"todoharness": cli.Main})
}

// runner is what a GitHub Actions runner gives a step: its files
// ($GITHUB_OUTPUT, $GITHUB_STEP_SUMMARY, $GITHUB_PATH) and variables.
type runner struct {
	dir, output, summary, path string
}

func newRunner(t *testing.T) runner {
	t.Helper()
	dir := t.TempDir()
	r := runner{dir: dir, output: filepath.Join(dir, "output"), summary: filepath.Join(dir, "summary.md"), path: filepath.Join(dir, "path")}
	for _, f := range []string{r.output, r.summary, r.path} {
		if err := os.WriteFile(f, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "temp"), 0o755); err != nil {
		t.Fatal(err)
	}
	return r
}

// run runs one of the action's scripts as a runner runs a step, with
// env (the step's inputs) added; it returns the exit status and the
// step's log (stdout and stderr).
func (r runner) run(t *testing.T, script string, env ...string) (int, string) {
	t.Helper()
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("the action's scripts run in bash, and there is none here")
	}
	path, err := filepath.Abs(filepath.Join("..", "..", "action", script))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("bash", path)
	cmd.Dir = r.dir
	cmd.Env = append(os.Environ(),
		"GITHUB_ACTIONS=true", "CI=true", "RUNNER_OS=Linux", "RUNNER_ARCH=X64",
		"RUNNER_TEMP="+filepath.Join(r.dir, "temp"), "GITHUB_WORKSPACE="+r.dir,
		"GITHUB_OUTPUT="+r.output, "GITHUB_STEP_SUMMARY="+r.summary, "GITHUB_PATH="+r.path,
		"TODOHARNESS="+selfexec.Path())
	cmd.Env = append(cmd.Env, selfexec.Environ("todoharness")...)
	cmd.Env = append(cmd.Env, env...)
	out, err := cmd.CombinedOutput()
	if cmd.ProcessState == nil {
		t.Fatal(err) // it did not start
	}
	return cmd.ProcessState.ExitCode(), string(out)
}

// wantStep runs the conform step with env and wants it to pass with
// outputs and a job summary that start as given.
func (r runner) wantStep(t *testing.T, outputs, summary string, env ...string) {
	t.Helper()
	code, log := r.run(t, "conform.sh", env...)
	if code != 0 || !strings.HasPrefix(r.read(t, r.output), outputs) {
		t.Errorf("exit %d, outputs %q, want 0 and %q\n%s", code, r.read(t, r.output), outputs, log)
	}
	if got := r.read(t, r.summary); !strings.HasPrefix(got, summary) {
		t.Errorf("summary:\n%s\nwant it to start with:\n%s", got, summary)
	}
}

func (r runner) read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The conformance step: conform with annotations and every report, the
// Markdown summary added to what the job's summary held, the verdict,
// exit status and report folder as outputs; the step itself passes (the
// action's last step fails the job, after the upload).
func TestActionConformStep(t *testing.T) {
	t.Parallel()
	narrow := "--in-process --settle 50ms --check TW-VALID-DUP"
	t.Run("a failing agent", func(t *testing.T) {
		t.Parallel()
		r := newRunner(t)
		if err := os.WriteFile(r.summary, []byte("an earlier step's summary\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		// The quoted --env is one argument, as in a shell.
		code, log := r.run(t, "conform.sh", "INPUT_FLAGS="+narrow+` --env "TODOHARNESS_FAULT=accept-duplicates"`)
		if code != 0 {
			t.Fatalf("exit %d, want 0 (the verdict is an output)\n%s", code, log)
		}
		report := filepath.Join(r.dir, "temp", "todoharness-conform")
		if got, want := r.read(t, r.output), "verdict=FAIL\nexit-code=1\nreport-dir="+report+"\n"; got != want {
			t.Errorf("$GITHUB_OUTPUT:\n%s\nwant:\n%s", got, want)
		}
		summary := r.read(t, r.summary)
		if !strings.HasPrefix(summary, "an earlier step's summary\n### todoharness conform: ❌ FAIL\n") || !strings.Contains(summary, "| TW-VALID-DUP | MUST | FAIL | **yes** |") {
			t.Errorf("$GITHUB_STEP_SUMMARY:\n%s", summary)
		}
		if !strings.Contains(log, "::error title=TW-VALID-DUP::") {
			t.Errorf("no annotation in the step's log:\n%s", log)
		}
		for _, f := range []string{"conform.json", "conform.xml", "conform.html", "summary.md", "transcripts/reject-duplicate/transcript.txt"} {
			if _, err := os.Stat(filepath.Join(report, f)); err != nil {
				t.Errorf("report folder: %v", err)
			}
		}
	})
	t.Run("a passing agent", func(t *testing.T) {
		t.Parallel()
		r := newRunner(t)
		r.wantStep(t, "verdict=PASS\nexit-code=0\n", "### todoharness conform: ✅ PASS\n", "INPUT_FLAGS="+narrow)
	})
	t.Run("flags are split, never run", func(t *testing.T) {
		t.Parallel()
		r := newRunner(t)
		pwned := filepath.Join(r.dir, "pwned")
		// conform refuses the words as arguments: the run did not start.
		r.wantStep(t, "verdict=ERROR\nexit-code=2\n", "### todoharness conform: ⚠️ ERROR\n\nThe run did not start (exit 2)",
			"INPUT_FLAGS=--strict $(touch "+pwned+") `touch "+pwned+"`")
		if _, err := os.Stat(pwned); err == nil {
			t.Fatal("a command in the flags input ran")
		}
	})
	t.Run("a bad input", func(t *testing.T) {
		t.Parallel()
		for _, env := range []string{"INPUT_EXPLORE=ten minutes\n::warning::forged", `INPUT_FLAGS=--seed "42`} {
			r := newRunner(t)
			code, log := r.run(t, "conform.sh", env)
			if code != 2 || !strings.Contains(log, "::error title=todoharness action::") || r.read(t, r.output) != "" {
				t.Errorf("%q: exit %d, outputs %q, want 2, an annotation and none\n%s", env, code, r.read(t, r.output), log)
			}
			if strings.Contains(log, "\n::warning::forged") {
				t.Errorf("%q: the input forged an annotation:\n%s", env, log)
			}
		}
	})
}

// The install step downloads the runner's archive and checksums.txt of the
// release (here from a server on 127.0.0.1), refuses an archive whose
// SHA-256 does not match, and puts the binary on $GITHUB_PATH; latest
// follows the releases page's redirect to the newest tag.
func TestActionInstallStep(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("the install step downloads with curl, and there is none here")
	}
	var archive bytes.Buffer
	gz := gzip.NewWriter(&archive)
	tw := tar.NewWriter(gz)
	bin := "#!/bin/sh\necho 'todoharness v1.2.0 (commit 0123456789ab, 2026-12-07T04:15:00Z)'\n"
	for _, f := range []struct{ name, body string }{{"README.md", "readme"}, {"todoharness", bin}} {
		if err := tw.WriteHeader(&tar.Header{Name: f.name, Mode: 0o755, Size: int64(len(f.body))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(f.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	name := "todoharness_1.2.0_linux_amd64.tar.gz"
	good := fmt.Sprintf("%x  %s\n", sha256.Sum256(archive.Bytes()), name)
	bad := fmt.Sprintf("%x  %s\n", sha256.Sum256([]byte("another")), name)
	serve := func(sums string) *httptest.Server {
		mux := http.NewServeMux()
		mux.HandleFunc("/latest", func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/tag/v1.2.0", http.StatusFound)
		})
		mux.HandleFunc("/tag/v1.2.0", func(w http.ResponseWriter, r *http.Request) {})
		mux.HandleFunc("/download/v1.2.0/"+name, func(w http.ResponseWriter, r *http.Request) { w.Write(archive.Bytes()) })
		mux.HandleFunc("/download/v1.2.0/checksums.txt", func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, sums) })
		srv := httptest.NewServer(mux)
		t.Cleanup(srv.Close)
		return srv
	}
	for _, version := range []string{"v1.2.0", "latest"} {
		r := newRunner(t)
		code, log := r.run(t, "install.sh", "INPUT_VERSION="+version, "TODOHARNESS_RELEASES="+serve(good).URL)
		dir := filepath.Join(r.dir, "temp", "todoharness-1.2.0")
		if code != 0 || r.read(t, r.path) != dir+"\n" || r.read(t, r.output) != "version=1.2.0\n" || !strings.Contains(log, "todoharness v1.2.0 (commit") {
			t.Errorf("%s: exit %d, $GITHUB_PATH %q, $GITHUB_OUTPUT %q\n%s", version, code, r.read(t, r.path), r.read(t, r.output), log)
		}
	}
	r := newRunner(t)
	code, log := r.run(t, "install.sh", "INPUT_VERSION=v1.2.0", "TODOHARNESS_RELEASES="+serve(bad).URL)
	if code != 1 || r.read(t, r.path) != "" || !strings.Contains(log, "does not match the release's checksums.txt") {
		t.Errorf("a tampered archive: exit %d, $GITHUB_PATH %q\n%s", code, r.read(t, r.path), log)
	}
	r = newRunner(t)
	code, log = r.run(t, "install.sh", "INPUT_VERSION=main; rm -rf /", "TODOHARNESS_RELEASES="+serve(good).URL)
	if code != 2 || !strings.Contains(log, "is not a release") {
		t.Errorf("a version that is no release: exit %d\n%s", code, log)
	}
}
