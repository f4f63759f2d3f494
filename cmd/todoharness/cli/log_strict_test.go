package cli

import (
	"context"
	"strings"
	"testing"
)

// log check warns about what it does not model and passes the log; under
// --strict a warning fails it (exit 1), with the count.
func TestLogCheckStrictFailsOnWarnings(t *testing.T) {
	ctx := context.Background()
	pc := headFixture("head-packed-chunks")
	stdout, stderr, err := runCLI(ctx, "log", "check", "--policy", "parallel", pc)
	if err != nil || !strings.Contains(stderr, "warning:") || !strings.Contains(stdout, "ok ") {
		t.Fatalf("without --strict: %v\n%s%s", err, stdout, stderr)
	}
	stdout, stderr, err = runCLI(ctx, "log", "check", "--policy", "parallel", "--strict", pc)
	if code, ok := err.(exitCode); !ok || code != 1 {
		t.Fatalf("--strict: err %v, want exit 1\n%s%s", err, stdout, stderr)
	}
	if !strings.Contains(stderr, "warning(s) (--strict)") || strings.Contains(stdout, "ok ") {
		t.Errorf("--strict: the log is not failed for its warnings:\n%s%s", stdout, stderr)
	}
}

// log check, record and replay document their exit statuses in --help.
func TestExitStatusesDocumented(t *testing.T) {
	for _, cmd := range [][]string{{"log", "check"}, {"record"}, {"replay"}} {
		stdout, stderr, err := runCLI(context.Background(), append(cmd, "--help")...)
		if err != nil {
			t.Fatalf("%v --help: %v\n%s", cmd, err, stderr)
		}
		for _, want := range []string{"Exit status: 0 when", "1 when", "2 when"} {
			if cmd[0] == "record" && want == "1 when" {
				continue // record has no 1: a failed recording is an error
			}
			if !strings.Contains(stdout, want) {
				t.Errorf("%v --help does not say %q", cmd, want)
			}
		}
	}
}
