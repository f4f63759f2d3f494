package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/todoharness/todoharness/conformance"
)

// todoReason is the reason --write-baseline writes for each entry, to be
// replaced by why the failure is expected.
const todoReason = conformance.BaselineTODO

// checkBaselineReasons warns about the entries of the baseline at path
// whose reason is still TODO (as --write-baseline left it), and about each
// reason or match YAML cut at " #" (reason: tracked in #123, unquoted,
// reads as "tracked in"); under --strict they are an error, found before
// any agent starts.
func checkBaselineReasons(errw io.Writer, path string, es []conformance.ExpectedFailure, strict bool) error {
	var todo, cut []string
	for _, e := range es {
		if strings.EqualFold(strings.TrimSpace(e.Reason), todoReason) {
			todo = append(todo, e.ID)
		}
		for _, c := range e.Cut {
			cut = append(cut, e.ID+": "+c)
		}
	}
	for _, c := range cut {
		msg := fmt.Sprintf("%s: %s", path, c)
		if strict {
			return fmt.Errorf("conform: --expected-failures %s (--strict)", msg)
		}
		fmt.Fprintf(errw, "conform: warning: %s\n", msg)
	}
	if len(todo) == 0 {
		return nil
	}
	msg := fmt.Sprintf("%s: reason TODO left in %d entr%s (%s): write why each failure is expected", path, len(todo), plural(len(todo), "y", "ies"), strings.Join(todo, ", "))
	if strict {
		return fmt.Errorf("conform: --expected-failures %s (--strict)", msg)
	}
	fmt.Fprintf(errw, "conform: warning: %s\n", msg)
	return nil
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
