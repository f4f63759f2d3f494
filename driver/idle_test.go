package driver

import (
	"sync/atomic"
	"testing"
)

// Idle reports are parsed the same from the pipe and in process: a count
// per line, in pieces or several per write; what is not a count, and a
// count below the last, leave the last count as it was.
func TestIdleLinesKeepTheLastCount(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		writes []string
		want   int64
	}{
		{"none", nil, -1},
		{"one", []string{"12\n"}, 12},
		{"no line end yet", []string{"12"}, -1},
		{"split", []string{"1", "2", "3\n"}, 123},
		{"several in a write", []string{"5\n9\n40\n"}, 40},
		{"garbage ignored", []string{"7\nbusy\n"}, 7},
		{"smaller ignored", []string{"30\n20\n"}, 30},
		{"negative ignored", []string{"-4\n"}, -1},
		{"overlong line ignored", []string{"1", string(make([]byte, 100)), "\n"}, -1},
		{"after an overlong line", []string{string(make([]byte, 100)), "\n9\n"}, 9},
		{"spaces trimmed", []string{" 8 \r\n"}, 8},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var at atomic.Int64
			at.Store(-1)
			l := &idleLines{at: &at}
			for _, w := range tc.writes {
				if n, err := l.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write(%q) = %d, %v", w, n, err)
				}
			}
			if got := at.Load(); got != tc.want {
				t.Errorf("after %q: %d, want %d", tc.writes, got, tc.want)
			}
		})
	}
}
