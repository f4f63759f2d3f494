package report

import (
	"strings"
	"testing"

	"github.com/todoharness/todoharness/conformance"
)

func TestEscapeGitHub(t *testing.T) {
	for _, tc := range []struct{ in, data, property string }{
		{"plain text", "plain text", "plain text"},
		{"100% done", "100%25 done", "100%25 done"},
		{"line one\nline two\r\n", "line one%0Aline two%0D%0A", "line one%0Aline two%0D%0A"},
		{"TW-PLAN-1: a, b", "TW-PLAN-1: a, b", "TW-PLAN-1%3A a%2C b"},
		// Already escaped-looking input is escaped again, not left as is.
		{"%0A", "%250A", "%250A"},
	} {
		if got := EscapeGitHubData(tc.in); got != tc.data {
			t.Errorf("EscapeGitHubData(%q) = %q, want %q", tc.in, got, tc.data)
		}
		if got := EscapeGitHubProperty(tc.in); got != tc.property {
			t.Errorf("EscapeGitHubProperty(%q) = %q, want %q", tc.in, got, tc.property)
		}
	}
}

// --format github: one annotation per check that failed, ::error when it
// fails the run, ::warning for a SHOULD that does not, ::notice for INFO;
// a stale entry is an error; the verdict of an INCOMPLETE run is one.
func TestWriteGitHub(t *testing.T) {
	t.Parallel()
	annotations := func(rep *conformance.Report) []string {
		var b strings.Builder
		if err := WriteGitHub(&b, rep); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		if out == "" {
			lines = nil
		}
		for _, l := range lines {
			if strings.Count(l, "::") < 2 || strings.ContainsAny(l, "\r") {
				t.Errorf("not one workflow command: %q", l)
			}
		}
		return lines
	}
	heads := func(lines []string) []string {
		var out []string
		for _, l := range lines {
			out = append(out, l[:strings.Index(l[2:], "::")+2])
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		rep    *conformance.Report
		want   []string
		detail string // a part of the first annotation
	}{
		{"a MUST failure and the INFO check it drags", judgeSaved(t, "fake-wrong-counts", false, nil),
			[]string{"::error title=TW-COUNTS-1", "::notice title=TW-COUNTS-2"},
			"::MUST TW-COUNTS-1 fails: a successful result reports the pending, in-progress and completed counts of the new list%0Acase "},
		{"a SHOULD failure", judgeSaved(t, "fake-slow-exit", false, nil), []string{"::warning title=ACP-EXIT-1"},
			"(a SHOULD check: it does not fail the run without --strict)%0Acase "},
		{"a SHOULD failure under --strict", judgeSaved(t, "fake-slow-exit", true, nil), []string{"::error title=ACP-EXIT-1"}, "%0Aspec: \""},
		{"a stale baseline entry", judgeSaved(t, "fake-ok", false, []conformance.ExpectedFailure{{ID: "TW-PLAN-1", Reason: "plans, later"}}),
			[]string{"::error title=TW-PLAN-1"}, "a baseline entry (plans, later) matches no failure"},
		{"a pass", judgeSaved(t, "fake-ok", false, nil), nil, ""},
		{"an incomplete run", judgeSaved(t, "fake-ok", false, nil, "plan-basic"), []string{"::error title=conform INCOMPLETE"}, "::INCOMPLETE: MUST checks not judged"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := annotations(tc.rep)
			if strings.Join(heads(got), "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("annotations:\n%s\nwant the heads %q", strings.Join(got, "\n"), tc.want)
			}
			if len(got) > 0 && !strings.Contains(got[0], tc.detail) {
				t.Errorf("%q\ndoes not contain %q", got[0], tc.detail)
			}
		})
	}
}

func TestParseFormat(t *testing.T) {
	for _, f := range append(Formats(), "") {
		if _, err := ParseFormat(f); err != nil {
			t.Errorf("ParseFormat(%q): %v", f, err)
		}
	}
	_, err := ParseFormat("githb")
	if err == nil || !strings.Contains(err.Error(), `unknown format "githb": did you mean github? (formats: text, github, markdown)`) {
		t.Errorf("ParseFormat(githb) = %v", err)
	}
}
