package cli

import (
	"context"
	"regexp"
	"strings"
	"testing"
)

// Under --repeat the header counts the runs and the progress columns line
// up, whatever the case IDs and the run numbers.
func TestProgressUnderRepeat(t *testing.T) {
	var out, errw strings.Builder
	args := []string{"conform", "--in-process", "--case", "reject-empty", "--case", "load-after-several", "--repeat", "2", "--settle", "50ms"}
	// Exit 3: the other MUST checks are not judged by these cases.
	if code := Run(context.Background(), args, strings.NewReader(""), &out, &errw); code != 3 {
		t.Fatalf("exit %d\n%s", code, errw.String())
	}
	if !strings.Contains(errw.String(), ": 2 cases + the probe × 2 runs = 6 case runs, timeout") || !strings.Contains(errw.String(), "[ 6/6]") {
		t.Errorf("the header does not count the runs:\n%s", errw.String())
	}
	line := regexp.MustCompile(`(?m)^\[[ \d]+/\d+\] .* +\d+\.\d\ds  ok$`)
	lines := line.FindAllString(errw.String(), -1)
	if len(lines) < 4 {
		t.Fatalf("%d progress lines:\n%s", len(lines), errw.String())
	}
	col := -1
	for _, l := range lines {
		c := strings.Index(l, "s  ok")
		if col >= 0 && c != col {
			t.Errorf("columns do not line up:\n%s", strings.Join(lines, "\n"))
			break
		}
		col = c
	}
}

// An exploration whose standard error is not a terminal (a CI job's log)
// still says how far it is: whole lines, never a carriage return, and the
// last one counts every scenario; -q silences them.
func TestExploreProgressInALog(t *testing.T) {
	args := []string{"conform", "--in-process", "--no-builtin", "--settle", "20ms", "--explore", "8", "--seed", "1"}
	var out, errw strings.Builder
	if code := Run(context.Background(), args, strings.NewReader(""), &out, &errw); code != 0 {
		t.Fatalf("exit %d\n%s", code, errw.String())
	}
	if strings.Contains(errw.String(), "\r") {
		t.Errorf("a carriage return in a log:\n%q", errw.String())
	}
	if !regexp.MustCompile(`(?m)^explore: 8/8 scenarios, 0 failure\(s\), [\d.]+/s \(\d+ a minute\)(, [\d.]+(µs|ms|s) CPU a scenario)?, 0s left$`).MatchString(errw.String()) {
		t.Errorf("no whole progress line counting the 8 scenarios:\n%s", errw.String())
	}
	errw.Reset()
	if code := Run(context.Background(), append(args, "-q"), strings.NewReader(""), &out, &errw); code != 0 {
		t.Fatalf("-q: exit %d\n%s", code, errw.String())
	}
	if strings.Contains(errw.String(), "scenarios, 0 failure(s)") {
		t.Errorf("-q printed progress:\n%s", errw.String())
	}
}
