package todolist

import (
	"fmt"
	"regexp"
)

// Policy is how many tasks may be in_progress at once.
type Policy string

// The policies, as their --policy names: the contract's rule allows one
// task in_progress; the original implementation's current default
// composition allows several when work runs in parallel
// (allowParallelInProgress).
const (
	Single   Policy = "single"
	Parallel Policy = "parallel"
)

// ParsePolicy accepts "single" or "parallel".
func ParsePolicy(s string) (Policy, error) {
	switch Policy(s) {
	case Single, Parallel:
		return Policy(s), nil
	}
	return "", fmt.Errorf("unknown policy %q: want single or parallel", s)
}

// Allows reports whether the policy accepts a list with active tasks
// in_progress.
func (p Policy) Allows(active int) bool { return active <= 1 || p == Parallel }

var (
	// parallelPatterns: the description allows several tasks in progress
	// (tried in order; the first that matches is quoted).
	parallelPatterns = []*regexp.Regexp{
		regexp.MustCompile(`(?i)\b(several|multiple|more than one|many)\b[^.;]{0,60}in[ _-]?progress`),
		regexp.MustCompile(`(?i)in[ _-]?progress[^.;]{0,60}\b(in parallel|at once|at the same time|concurrently)\b`),
	}
	// singlePatterns: the description allows only one.
	singlePatterns = []*regexp.Regexp{
		regexp.MustCompile(`(?i)\b(at most|only|exactly|just|no more than) one\b[^.;]{0,40}in[ _-]?progress`),
		regexp.MustCompile(`(?i)in[ _-]?progress[^.;]{0,40}\bat a time\b`),
	}
)

// firstMatch is the text the first matching pattern finds in s ("" if none).
func firstMatch(res []*regexp.Regexp, s string) string {
	for _, re := range res {
		if m := re.FindString(s); m != "" {
			return m
		}
	}
	return ""
}

// DetectPolicy reads the in_progress policy from a todo tool's
// description: Parallel when it says several tasks may be in progress (in
// parallel, at once) and nothing limits them to one, Single otherwise. why
// quotes what decided it. The conformance runner (`conform --policy auto`,
// from the tools an agent offers the model) and `log check --policy auto`
// (from the tools a session log recorded in its request headers) both use
// it.
func DetectPolicy(description string) (policy Policy, why string) {
	par := firstMatch(parallelPatterns, description)
	one := firstMatch(singlePatterns, description)
	switch {
	case par != "" && one == "":
		return Parallel, fmt.Sprintf("the tool description says %q", par)
	case par != "" && one != "":
		return Single, fmt.Sprintf("the tool description says both %q and %q: the contract's rule (single) applies", par, one)
	case one != "":
		return Single, fmt.Sprintf("the tool description says %q", one)
	case description == "":
		return Single, "the tool has no description: the contract's rule (single) applies"
	default:
		return Single, "the tool description says nothing about parallel work: the contract's rule (single) applies"
	}
}
