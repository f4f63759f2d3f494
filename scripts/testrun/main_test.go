package main

import (
	"slices"
	"strings"
	"testing"
)

// The digest repeats what failed, from a ginkgo failure's output: the
// failure lines and the gomega comparison, and nothing else.
func TestFailureDigest(t *testing.T) {
	out := strings.Join([]string{
		"=== RUN   TestConformance",
		"••••",
		"  [FAILED] the bridge answers before its updates",
		"  a long summary table the digest leaves out",
		"  Expected",
		"      <[]string | len:2, cap:2>: [\"ACP-TURN-1\", \"TW-LOAD-2\"]",
		"  to equal",
		"      <[]string | len:1, cap:1>: [\"ACP-TURN-1\"]",
		"  In [It] at: suites/conformance/conformance_test.go:293",
		"  more noise",
		"Summarizing 1 Failure:",
		"  [FAIL] breaking one behaviour at a time fails exactly these checks [It] bridge updates-after-response",
		"--- FAIL: TestConformance (167.60s)",
		"FAIL",
	}, "\n")
	want := []string{
		"[FAILED] the bridge answers before its updates",
		"Expected",
		"<[]string | len:2, cap:2>: [\"ACP-TURN-1\", \"TW-LOAD-2\"]",
		"to equal",
		"<[]string | len:1, cap:1>: [\"ACP-TURN-1\"]",
		"In [It] at: suites/conformance/conformance_test.go:293",
		"[FAIL] breaking one behaviour at a time fails exactly these checks [It] bridge updates-after-response",
		"--- FAIL: TestConformance (167.60s)",
	}
	if got := failureDigest([]byte(out)); !slices.Equal(got, want) {
		t.Errorf("digest:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// The digest is bounded: lines are cut at digestWidth, and there are at
// most digestLines of them.
func TestFailureDigestBounded(t *testing.T) {
	long := "--- FAIL: " + strings.Repeat("x", 2*digestWidth)
	out := strings.Repeat(long+"\n", 2*digestLines)
	got := failureDigest([]byte(out))
	if len(got) != digestLines {
		t.Fatalf("%d lines, want %d", len(got), digestLines)
	}
	if n := len(got[0]); n > digestWidth+len("…") {
		t.Errorf("a line of %d bytes, want at most %d", n, digestWidth+len("…"))
	}
}
