package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/conformance/report"
	"github.com/todoharness/todoharness/driver"
	"github.com/todoharness/todoharness/internal/testutil"
)

// readDoc reads a file of the repository.
func readDoc(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testutil.RepoRoot(), filepath.FromSlash(rel)))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The GitHub Actions job of docs/ci.md installs this module's command and
// runs `todoharness conform` with flags the command has, with a baseline,
// GitHub annotations, JUnit and the transcripts folder; the README names
// the same go install line.
func TestCIDocJobUsesRealFlags(t *testing.T) {
	doc := readDoc(t, "docs/ci.md")
	install := regexp.MustCompile(`go install (\S+)@`).FindAllStringSubmatch(doc, -1)
	if len(install) == 0 {
		t.Fatal("docs/ci.md has no go install line")
	}
	for _, m := range install {
		if m[1] != "github.com/todoharness/todoharness/cmd/todoharness" {
			t.Errorf("docs/ci.md installs %s, not this module's command", m[1])
		}
	}
	if _, err := os.Stat(filepath.Join(testutil.RepoRoot(), "cmd", "todoharness")); err != nil {
		t.Errorf("the installed package: %v", err)
	}
	if !strings.Contains(readDoc(t, "README.md"), "`go install github.com/todoharness/todoharness/cmd/todoharness@") {
		t.Error("README.md does not name the go install line")
	}

	// The conform step: "todoharness conform" then one flag per line.
	i := strings.Index(doc, "todoharness conform\n")
	if i < 0 {
		t.Fatal("docs/ci.md has no multi-line todoharness conform step")
	}
	var words []string
	for _, line := range strings.Split(doc[i+len("todoharness conform\n"):], "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "-") {
			break
		}
		words = append(words, line)
	}
	args, err := driver.SplitCommand(strings.Join(words, " "))
	if err != nil {
		t.Fatal(err)
	}
	cmd := newConformCmd()
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("docs/ci.md: todoharness conform %s: %v", strings.Join(args, " "), err)
	}
	for flag, want := range map[string]string{"format": report.FormatGitHub, "expected-failures": "", "junit": "", "out": "", "agent": ""} {
		f := cmd.Flags().Lookup(flag)
		if !f.Changed || (want != "" && f.Value.String() != want) {
			t.Errorf("docs/ci.md: the conform step does not set --%s %s", flag, want)
		}
	}
	if !strings.Contains(doc, "uses: actions/upload-artifact@") || !strings.Contains(doc, "if: failure()") {
		t.Error("docs/ci.md: the job does not keep the transcripts as an artifact when it fails")
	}
}
