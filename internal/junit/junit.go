package junit

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"time"
)

// Suite is one <testsuite>. Errors and Skipped are written when set (a
// writer that counts them sets them, zero or not), left out when nil.
type Suite struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   *int   `xml:"errors,attr,omitempty"`
	Skipped  *int   `xml:"skipped,attr,omitempty"`
	Time     string `xml:"time,attr"`
	Cases    []Case `xml:"testcase"`
}

// Case is one <testcase>: Failure, Error or Skipped (at most one) says
// why it did not pass; Time is left out when "".
type Case struct {
	Name      string   `xml:"name,attr"`
	Classname string   `xml:"classname,attr"`
	Time      string   `xml:"time,attr,omitempty"`
	Failure   *Message `xml:"failure,omitempty"`
	Error     *Message `xml:"error,omitempty"`
	Skipped   *Message `xml:"skipped,omitempty"`
	SystemOut string   `xml:"system-out,omitempty"`
}

// Message is a <failure>, <error> or <skipped>: a one-line message and a
// body.
type Message struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

type suites struct {
	XMLName xml.Name `xml:"testsuites"`
	Suites  []Suite  `xml:"testsuite"`
}

// Seconds is d in seconds, as short as it reads exactly ("1.5").
func Seconds(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'g', -1, 64) }

// Millis is d in seconds to the millisecond ("1.500").
func Millis(d time.Duration) string { return fmt.Sprintf("%.3f", d.Seconds()) }

// Count is n for Suite.Errors or Suite.Skipped.
func Count(n int) *int { return &n }

// Write writes s as a JUnit XML document (<testsuites> holding s),
// indented, with the XML header and a final newline.
func Write(w io.Writer, s Suite) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return fmt.Errorf("junit: write: %w", err)
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(suites{Suites: []Suite{s}}); err != nil {
		return fmt.Errorf("junit: write: %w", err)
	}
	if _, err := io.WriteString(w, "\n"); err != nil {
		return fmt.Errorf("junit: write: %w", err)
	}
	return nil
}
