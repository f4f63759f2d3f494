package cli

import "io"

// useColor reports whether the summary written to w gets colour: w is a
// terminal and NO_COLOR is unset or empty (no-color.org). A pipe, a file
// or /dev/null gets none.
func useColor(w io.Writer, getenv func(string) string) bool {
	if getenv("NO_COLOR") != "" {
		return false
	}
	return onTerminal(w)
}
