// Package textcut cuts text at a byte bound only between UTF-8
// characters: every cutter of todoharness (a reason on one line, a capped
// wire line's kept prefix, a stderr tail, a baseline comment) cuts through
// it, so what it writes stays valid UTF-8 wherever the bound falls (a YAML
// reader refuses a baseline comment cut inside a character: "invalid
// trailing UTF-8 octet").
//
// A byte sequence that is not valid UTF-8 is no character: it is kept or
// cut as bytes, as it came.
package textcut

import "unicode/utf8"

// Ellipsis marks where Truncate cut.
const Ellipsis = "…"

// Prefix is the longest prefix of s of at most n bytes that does not end
// inside a UTF-8 character: s itself when it is no longer than n, else
// s[:n] less the first bytes of a character that the bound splits (at most
// utf8.UTFMax-1 bytes less).
func Prefix[T ~string | ~[]byte](s T, n int) T {
	return s[:PrefixLen(s, n)]
}

// PrefixLen is the length of Prefix(s, n).
func PrefixLen[T ~string | ~[]byte](s T, n int) int {
	if n >= len(s) {
		return len(s)
	}
	if n <= 0 {
		return 0
	}
	// The character that holds byte n-1 starts at most UTFMax-1 bytes
	// before it; when it is whole and runs past n, cut before it.
	for j := n - 1; j >= 0 && j > n-1-utf8.UTFMax; j-- {
		if !utf8.RuneStart(s[j]) {
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[j:min(len(s), j+utf8.UTFMax)]))
		if (r != utf8.RuneError || size > 1) && j+size > n {
			return j
		}
		return n
	}
	return n
}

// Suffix is the longest suffix of s of at most n bytes that does not
// start inside a UTF-8 character (a tail kept of a longer text).
func Suffix[T ~string | ~[]byte](s T, n int) T {
	if n >= len(s) {
		return s
	}
	if n <= 0 {
		return s[len(s):]
	}
	i := len(s) - n
	// A character the bound splits starts at most UTFMax-1 bytes before
	// i: when it is whole and runs past i, start after it.
	start := i
	for j := i - 1; j >= 0 && j > i-utf8.UTFMax; j-- {
		if !utf8.RuneStart(s[j]) {
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[j:min(len(s), j+utf8.UTFMax)]))
		if (r != utf8.RuneError || size > 1) && j+size > i {
			start = j + size
		}
		break
	}
	return s[start:]
}

// Truncate is s cut to at most n bytes between characters, "…" marking a
// cut (so at most n+len(Ellipsis) bytes in all); s itself when it is no
// longer than n.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return Prefix(s, n) + Ellipsis
}
