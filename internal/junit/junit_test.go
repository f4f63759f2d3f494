package junit

import (
	"strings"
	"testing"
)

func TestWriteLeavesUnsetCountsAndTimesOut(t *testing.T) {
	skipped := 1
	var b strings.Builder
	err := Write(&b, Suite{Name: "s <1>", Tests: 2, Failures: 1, Skipped: &skipped, Time: "1.5", Cases: []Case{
		{Name: "a", Classname: "c", Failure: &Message{Message: "m", Body: "x & y"}},
		{Name: "b", Classname: "c", Skipped: &Message{Message: "n/a"}, SystemOut: "out"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want := `<?xml version="1.0" encoding="UTF-8"?>
<testsuites>
  <testsuite name="s &lt;1&gt;" tests="2" failures="1" skipped="1" time="1.5">
    <testcase name="a" classname="c">
      <failure message="m">x &amp; y</failure>
    </testcase>
    <testcase name="b" classname="c">
      <skipped message="n/a"></skipped>
      <system-out>out</system-out>
    </testcase>
  </testsuite>
</testsuites>
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
