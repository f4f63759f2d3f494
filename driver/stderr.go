package driver

import (
	"regexp"
	"strings"
)

// stackFrame matches a line of a stack trace that names a frame only (a
// JavaScript or Java "    at f (file:1:2)"), and trailer a line that says
// nothing about the failure (Node's closing "Node.js v20.11.0").
var (
	stackFrame = regexp.MustCompile(`^\s+at\s`)
	trailer    = regexp.MustCompile(`^Node\.js v\d`)
	headline   = regexp.MustCompile(`(?i)\b(error|exception|panic|fatal|cannot|not found)\b`)
)

// StderrGist is what an agent's stderr says about why it failed, in at
// most n lines: its lines without stack frames ("    at ...") and
// trailers, from the last line that names an error (Node's "Error: Cannot
// find module", Python's "ModuleNotFoundError: ...", Go's "panic: ..."),
// or the last n lines when none does. The last n lines of a Node stack
// trace are frames and "Node.js v20": this is the line above them.
func StderrGist(stderr string, n int) []string {
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		l = strings.TrimRight(l, " \t\r")
		if strings.TrimSpace(l) == "" || stackFrame.MatchString(l) || trailer.MatchString(l) {
			continue
		}
		lines = append(lines, l)
	}
	if len(lines) <= n {
		return lines
	}
	for i := len(lines) - 1; i >= 0; i-- {
		if headline.MatchString(lines[i]) {
			if i+n > len(lines) {
				i = len(lines) - n
			}
			return lines[i : i+n]
		}
	}
	return lines[len(lines)-n:]
}
