package junit

import (
	"encoding/xml"
	"io"
)

// Suite is one <testsuite>. Errors and Skipped are written only when set
// (a report that has no such outcome leaves the attribute out); Time is
// written as given.
type Suite struct {
	Name     string `xml:"name,attr"`
	Tests    int    `xml:"tests,attr"`
	Failures int    `xml:"failures,attr"`
	Errors   *int   `xml:"errors,attr,omitempty"`
	Skipped  *int   `xml:"skipped,attr,omitempty"`
	Time     string `xml:"time,attr"`
	Cases    []Case `xml:"testcase"`
}

// Case is one <testcase>: passed when Failure, Error and Skipped are nil.
type Case struct {
	Name      string   `xml:"name,attr"`
	Classname string   `xml:"classname,attr"`
	Time      string   `xml:"time,attr,omitempty"`
	Failure   *Message `xml:"failure,omitempty"`
	Error     *Message `xml:"error,omitempty"`
	Skipped   *Message `xml:"skipped,omitempty"`
	SystemOut string   `xml:"system-out,omitempty"`
}

// Message is a failure, error or skip: a one-line message and details.
type Message struct {
	Message string `xml:"message,attr"`
	Body    string `xml:",chardata"`
}

type suites struct {
	XMLName xml.Name `xml:"testsuites"`
	Suites  []Suite  `xml:"testsuite"`
}

// Write writes s as a JUnit document: the XML header, <testsuites> holding
// s, indented by two spaces, and a final newline.
func Write(w io.Writer, s Suite) error {
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(suites{Suites: []Suite{s}}); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}
