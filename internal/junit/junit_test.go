package junit

import (
	"strings"
	"testing"
	"time"
)

// Errors and Skipped are written when set, zero or not, and left out
// when nil; a case's time only when given.
func TestWrite(t *testing.T) {
	var b strings.Builder
	s := Suite{Name: "a & b", Tests: 2, Failures: 1, Skipped: Count(0), Time: Seconds(1500 * time.Millisecond), Cases: []Case{
		{Name: "one", Classname: "c", Failure: &Message{Message: "bad", Body: "x < y"}},
		{Name: "two", Classname: "c", Time: Millis(time.Second), SystemOut: "out"},
	}}
	if err := Write(&b, s); err != nil {
		t.Fatal(err)
	}
	want := `<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="a &amp; b" tests="2" failures="1" skipped="0" time="1.5">
    <testcase name="one" classname="c">
      <failure message="bad">x &lt; y</failure>
    </testcase>
    <testcase name="two" classname="c" time="1.000">
      <system-out>out</system-out>
    </testcase>
  </testsuite>
</testsuites>
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
