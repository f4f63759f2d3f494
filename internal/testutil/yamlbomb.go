package testutil

import (
	"fmt"
	"strings"
)

// AliasBomb returns the lines of a YAML mapping of nested aliases ("a
// billion laughs"): nine anchors, each a list of nine aliases of the one
// before, so the last expands to 9^9 (387,420,489) strings from about 600
// bytes. indent prefixes every line; the mapping is valid wherever a
// mapping may stand at that indent (tool call arguments, a composition's
// config).
func AliasBomb(indent string) string {
	var b strings.Builder
	prev := ""
	for i := 0; i < 9; i++ {
		name := string(rune('a' + i))
		var items []string
		for j := 0; j < 9; j++ {
			if prev == "" {
				items = append(items, "lol")
			} else {
				items = append(items, "*"+prev)
			}
		}
		fmt.Fprintf(&b, "%s%s: &%s [%s]\n", indent, name, name, strings.Join(items, ","))
		prev = name
	}
	return b.String()
}
