package todolist

import (
	"testing"
)

// edgeRunes, which edgeSpace reads first, are the characters of
// EdgeSpaces in its order: a character added to one and not the other
// would be an edge space to one reader and not the other.
func TestEdgeRunesAreTheEdgeSpaces(t *testing.T) {
	var runes []rune
	for _, e := range EdgeSpaces() {
		runes = append(runes, e.Rune)
	}
	if got := []rune(edgeRunes); string(got) != string(runes) {
		t.Errorf("edgeRunes %U, EdgeSpaces %U: want the same", got, runes)
	}
	for _, r := range runes {
		if e, ok := edgeSpace(r); !ok || e.Rune != r {
			t.Errorf("edgeSpace(%U) = %U, %v: want its entry", r, e.Rune, ok)
		}
	}
	for _, r := range []rune{' ', '\t', 'a', 0xA0, 0x2028, 0xFFFD, -1, 0x110000} {
		if e, ok := edgeSpace(r); ok {
			t.Errorf("edgeSpace(%U) = %+v: want none", r, e)
		}
	}
}

// A trim of content with no edge character at its ends allocates
// nothing: the explorer's generator and the judge trim every item of
// every list, and building EdgeSpaces' table for each character they look
// at was 2% of the bytes an exploration of the reference agent allocated.
func TestTrimAnyAllocatesNothing(t *testing.T) {
	for _, s := range []string{"  write the tests\t", "\u00a0plan\u3000", "item"} {
		if n := testing.AllocsPerRun(100, func() {
			_ = TrimAny(s)
			_ = TrimsDiffer(s)
		}); n != 0 {
			t.Errorf("TrimAny and TrimsDiffer of %q: %g allocations, want none", s, n)
		}
	}
}
