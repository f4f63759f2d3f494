package driver

import (
	"fmt"
	"strings"
)

// Suggest says which of valid a mistyped name most likely meant, and lists
// them all: ": did you mean plan-basic? (cases: a, b, ...)".
func Suggest(name string, valid []string, what string) string {
	best, bestD := "", -1
	for _, v := range valid {
		d := editDistance(strings.ToLower(name), strings.ToLower(v))
		if bestD < 0 || d < bestD {
			best, bestD = v, d
		}
	}
	s := ""
	if best != "" && bestD <= max(2, len(name)/3) {
		s = fmt.Sprintf(": did you mean %s?", best)
	}
	return s + fmt.Sprintf(" (%s: %s)", what, strings.Join(valid, ", "))
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}
