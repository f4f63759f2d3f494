package textcut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Every bound over texts of 1- to 4-byte characters and invalid bytes:
// the prefix is valid UTF-8 when the text is, the longest such within the
// bound, and a prefix of the text; the same for the suffix.
func TestCutsOnlyBetweenCharacters(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "abc", "é", "aé", "日本語のテキスト", "a😀b😀", "x\u202ey", "€€€€", "ok\xffbad\x80\x80é"} {
		for n := -1; n <= len(s)+1; n++ {
			p, q := Prefix(s, n), Suffix(s, n)
			if !strings.HasPrefix(s, p) || len(p) > max(n, 0) || !strings.HasSuffix(s, q) || len(q) > max(n, 0) {
				t.Fatalf("Prefix(%q, %d) = %q, Suffix = %q: not within the bound", s, n, p, q)
			}
			if utf8.ValidString(s) && (!utf8.ValidString(p) || !utf8.ValidString(q)) {
				t.Errorf("Prefix(%q, %d) = %q, Suffix = %q: cut inside a character", s, n, p, q)
			}
			// The longest: one byte more (up to the bound) would split a character.
			if n > 0 && n < len(s) && utf8.ValidString(s) {
				if utf8.RuneStart(s[len(p)]) && len(p) < n && utf8.ValidString(s[:len(p)+1]) {
					t.Errorf("Prefix(%q, %d) = %q: not the longest", s, n, p)
				}
				if len(q) < n && utf8.RuneStart(s[len(s)-len(q)-1]) && utf8.ValidString(s[len(s)-len(q)-1:]) {
					t.Errorf("Suffix(%q, %d) = %q: not the longest", s, n, q)
				}
			}
			if b := Prefix([]byte(s), n); string(b) != p {
				t.Errorf("Prefix([]byte(%q), %d) = %q, the string's %q", s, n, b, p)
			}
		}
	}
}

// Invalid bytes are kept as bytes: a bound next to them cuts there.
func TestInvalidBytesCutAsBytes(t *testing.T) {
	t.Parallel()
	if got := Prefix("ab\x80\x80\x80\x80cd", 4); got != "ab\x80\x80" {
		t.Errorf("Prefix = %q, want the bytes up to the bound", got)
	}
	if got := Prefix("ab\xe6\x97", 4); got != "ab\xe6\x97" {
		t.Errorf("Prefix of a text ending in a broken character = %q, want it whole", got)
	}
}

func TestTruncate(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		s    string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly", 7, "exactly"},
		{"abcdef", 3, "abc…"},
		{"aé", 2, "a…"},       // é is 2 bytes: byte 2 is inside it
		{"日本語", 4, "日…"},      // 3-byte characters
		{"😀😀", 5, "😀…"},       // a 4-byte character
		{"x\u202ey", 3, "x…"}, // U+202E is 3 bytes
	} {
		if got := Truncate(tc.s, tc.n); got != tc.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tc.s, tc.n, got, tc.want)
		}
	}
}
