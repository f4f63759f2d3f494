package report

import (
	"fmt"
	"strings"
	"testing"

	"github.com/todoharness/todoharness/conformance"
)

func TestCutReason(t *testing.T) {
	long := strings.Repeat("x", 200)
	for _, tc := range []struct {
		name, in string
		n        int
		want     string
	}{
		{"short", "a  b\nc", 20, "a b c"},
		{"no hint", long, 10, "xxxxxxxxxx…"},
		{"hint kept", long + "; do this", 120, strings.Repeat("x", 120-len("; do this")) + "…; do this"},
		{"the observation keeps 100 bytes", long + "; do this", 20, strings.Repeat("x", 100) + "…; do this"},
		{"a quoted semicolon is no hint", `"` + long + `; not a hint"`, 10, `"xxxxxxxxx…`},
		{"from the first \"; \" outside quotes", `"a; b" ` + long + "; first; second", 130, `"a; b" ` + strings.Repeat("x", 130-len(`"a; b" `)-len("; first; second")) + "…; first; second"},
		{"a hint too long is cut", "x; " + long + long, 120, "x; " + strings.Repeat("x", 117) + "…"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CutReason(tc.in, tc.n); got != tc.want {
				t.Errorf("CutReason(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
			}
		})
	}
}

func TestContainsWord(t *testing.T) {
	for _, tc := range []struct {
		s, w string
		want bool
	}{
		{"after call_1 no plan", "call_1", true},
		{"call_1", "call_1", true},
		{"after call_10 no plan", "call_1", false},
		{"xcall_1", "call_1", false},
		{"call_10 and (call_1)", "call_1", true},
	} {
		if got := containsWord(tc.s, tc.w); got != tc.want {
			t.Errorf("containsWord(%q, %q) = %v", tc.s, tc.w, got)
		}
	}
}

// Under Repeat the summary counts runs of cases, not cases: one case
// and the probe run twice are "4 case runs", not "4 cases".
func TestSummaryCountsCaseRunsUnderRepeat(t *testing.T) {
	t.Parallel()
	runs := func(repeat int) []*conformance.Evidence {
		var out []*conformance.Evidence
		for run := 1; run <= repeat; run++ {
			for _, ev := range savedRun(t, "fake-ok") {
				e := *ev
				if repeat > 1 {
					e.Repeat = run
				}
				out = append(out, &e)
			}
		}
		return out
	}
	cases := len(savedRun(t, "fake-ok"))
	for _, tc := range []struct {
		repeat int
		want   string
	}{
		{1, fmt.Sprintf("; %d cases in ", cases)},
		{2, fmt.Sprintf("; %d case runs in ", 2*cases)},
	} {
		rep, err := conformance.Judge(runs(tc.repeat), conformance.JudgeConfig{Checks: capturedChecks(t), Validator: sharedValidator(t)})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		if err := WriteSummary(&b, rep, false); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), tc.want) {
			t.Errorf("repeat %d: the summary does not say %q:\n%s", tc.repeat, tc.want, b.String())
		}
	}
}
