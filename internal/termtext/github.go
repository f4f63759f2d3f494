package termtext

import (
	"strings"
	"unicode"
)

// GitHubData escapes the message of a GitHub Actions workflow command
// (::error ...::MESSAGE) as GitHub's runner unescapes it: % as %25, CR as
// %0D, LF as %0A; every other character Visible escapes is shown as
// Visible shows it. The result holds no line break: nothing in it can
// start a line, so nothing in it can be a workflow command.
func GitHubData(s string) string {
	return githubData.Replace(Lines(s))
}

// GitHubProperty escapes a property of a workflow command (title=...):
// as GitHubData, and : as %3A, , as %2C.
func GitHubProperty(s string) string {
	return githubProperty.Replace(Lines(s))
}

var (
	githubData     = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A")
	githubProperty = strings.NewReplacer("%", "%25", "\r", "%0D", "\n", "%0A", ":", "%3A", ",", "%2C")
)

// Lines is Visible but for the line breaks (LF, and CR before LF), which
// it keeps: text of several lines, each shown as Visible shows it.
func Lines(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	for i, l := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteByte('\n')
		}
		l, cr := strings.CutSuffix(l, "\r")
		b.WriteString(Visible(l))
		if cr {
			b.WriteByte('\r')
		}
	}
	return b.String()
}

// commandStart reports whether a line that starts with s would be read
// by GitHub's runner as a workflow command: after leading white space,
// "::" (::error, ::stop-commands, ...) or "##[" (the older syntax).
func commandStart(s string) bool {
	s = strings.TrimLeftFunc(s, unicode.IsSpace)
	return strings.HasPrefix(s, "::") || strings.HasPrefix(s, "##[")
}

// Defused is written before a line that would otherwise be read as a
// workflow command (Writer.GitHub).
const Defused = "> "
