package todolist

import (
	"fmt"
	"slices"
	"strings"
)

// Trim is an item's content as the contract trims it: the tool writes it
// so, the rules judge it so, and a plan shows it so. The contract is the
// original TypeScript implementation's, which trims with JavaScript's
// String.prototype.trim() (packages/todo/tool-todo/src/index.ts: "trimmed,
// so the persisted value matches the dedupe/length key"): it removes the
// characters IsSpace names from both ends. That is not Go's
// strings.TrimSpace: JavaScript trims U+FEFF and keeps U+0085, Go does the
// other way round (EdgeSpaces lists where the common trim functions
// disagree).
func Trim(content string) string { return strings.TrimFunc(content, IsSpace) }

// Blank reports whether content is empty once trimmed.
func Blank(content string) bool { return Trim(content) == "" }

// IsSpace reports whether the contract's trim removes r: ECMAScript's
// WhiteSpace and LineTerminator (ECMA-262, String.prototype.trim): TAB,
// LF, VT, FF, CR, SPACE, NO-BREAK SPACE, U+1680, U+2000–U+200A, LINE
// SEPARATOR, PARAGRAPH SEPARATOR, U+202F, U+205F, U+3000 (every Unicode
// space separator, Zs) and ZERO WIDTH NO-BREAK SPACE (U+FEFF).
func IsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// EdgeSpace is a character the common trim functions disagree on: one of
// them removes it from the ends of a string and another keeps it.
type EdgeSpace struct {
	Rune rune
	// Name is the character's Unicode name.
	Name string
	// TrimmedBy names the trim functions that remove it, KeptBy those
	// that keep it.
	TrimmedBy, KeptBy []string
}

// The trim functions EdgeSpaces compares.
const (
	trimJS     = "JavaScript's String.prototype.trim() (the contract's)"
	trimGo     = "Go's strings.TrimSpace"
	trimPython = "Python's str.strip()"
	trimRust   = "Rust's str::trim"
	trimOldJS  = "JavaScript engines on Unicode before 6.3"
)

// EdgeSpaces are the characters that JavaScript's String.prototype.trim()
// (the contract's), Go's strings.TrimSpace, Python's str.strip() and
// Rust's str::trim disagree on: each removes every other character of
// IsSpace, and no character outside IsSpace and these. Measured over every
// code point with Node.js 20, Go 1.26, Python 3.11 and Rust 1.95: Go and
// Rust remove the Unicode White_Space characters (U+0085, not U+FEFF),
// Python those and U+001C–U+001F. U+180E was a space separator before
// Unicode 6.3, and JavaScript engines of that time trimmed it.
func EdgeSpaces() []EdgeSpace {
	notPython := []string{trimJS, trimGo, trimRust}
	return []EdgeSpace{
		{0x1C, "INFORMATION SEPARATOR FOUR", []string{trimPython}, notPython},
		{0x1D, "INFORMATION SEPARATOR THREE", []string{trimPython}, notPython},
		{0x1E, "INFORMATION SEPARATOR TWO", []string{trimPython}, notPython},
		{0x1F, "INFORMATION SEPARATOR ONE", []string{trimPython}, notPython},
		{0x85, "NEXT LINE (NEL)", []string{trimGo, trimPython, trimRust}, []string{trimJS}},
		{0x180E, "MONGOLIAN VOWEL SEPARATOR", []string{trimOldJS}, []string{trimJS, trimGo, trimPython, trimRust}},
		{0xFEFF, "ZERO WIDTH NO-BREAK SPACE (BOM)", []string{trimJS}, []string{trimGo, trimPython, trimRust}},
	}
}

// edgeRunes are the characters of EdgeSpaces, in its order: edgeSpace
// looks a character up in them before it builds the table (a trim asks it
// of every character it looks at).
const edgeRunes = "\x1c\x1d\x1e\x1f\u0085\u180e\ufeff"

// edgeSpace returns r's entry of EdgeSpaces.
func edgeSpace(r rune) (EdgeSpace, bool) {
	if !strings.ContainsRune(edgeRunes, r) {
		return EdgeSpace{}, false
	}
	i := slices.IndexFunc(EdgeSpaces(), func(e EdgeSpace) bool { return e.Rune == r })
	if i < 0 {
		return EdgeSpace{}, false
	}
	return EdgeSpaces()[i], true
}

// TrimAny is content with every character that some common trim function
// removes (IsSpace and EdgeSpaces) cut from its ends: what no common trim
// function keeps. Content TrimAny leaves non-empty is non-empty under the
// contract's trim and any other; two contents TrimAny keeps apart are
// apart under any of them, and are not duplicates.
func TrimAny(content string) string { return strings.TrimFunc(content, isAnySpace) }

// TrimsDiffer reports whether the common trim functions do not all trim
// content as the contract does: an edge character (EdgeSpaces) is among
// the characters some of them cut from its ends.
func TrimsDiffer(content string) bool {
	rest := strings.TrimLeftFunc(content, isAnySpace)
	core := strings.TrimRightFunc(rest, isAnySpace)
	return strings.ContainsFunc(content[:len(content)-len(rest)]+rest[len(core):], func(r rune) bool {
		_, edge := edgeSpace(r)
		return edge
	})
}

// isAnySpace reports whether some common trim function removes r.
func isAnySpace(r rune) bool {
	_, edge := edgeSpace(r)
	return IsSpace(r) || edge
}

// isEverySpace reports whether every common trim function removes r.
func isEverySpace(r rune) bool {
	_, edge := edgeSpace(r)
	return IsSpace(r) && !edge
}

// EdgeDiff reports whether shown, the content an agent shows for an item,
// differs from want, the content as the contract trims it, only in edge
// characters (EdgeSpaces) at its ends, as another common trim function
// leaves them: they differ, both are the same once every character any of
// those functions trims is cut from the ends, and shown begins and ends
// with no character every one of them trims (its author did trim). It
// returns the edge characters that differ, in order of appearance (none
// when shown is want or differs otherwise).
func EdgeDiff(shown, want string) []EdgeSpace {
	if shown == want || TrimAny(shown) != TrimAny(want) {
		return nil
	}
	if strings.TrimFunc(shown, isEverySpace) != shown {
		return nil
	}
	var out []EdgeSpace
	add := func(s string) {
		for _, r := range s {
			if e, ok := edgeSpace(r); ok && !slices.ContainsFunc(out, func(x EdgeSpace) bool { return x.Rune == r }) {
				out = append(out, e)
			}
		}
	}
	for _, s := range []string{shown, want} {
		rest := strings.TrimLeftFunc(s, isAnySpace)
		core := strings.TrimRightFunc(rest, isAnySpace)
		add(s[:len(s)-len(rest)])
		add(rest[len(core):])
	}
	return out
}

// SameShown reports whether content shown stands for want, the content as
// the contract trims it: it is want, or differs from it only in edge
// characters (EdgeDiff).
func SameShown(shown, want string) bool {
	return shown == want || len(EdgeDiff(shown, want)) > 0
}

// String names the character for a reason: "U+FEFF ZERO WIDTH NO-BREAK
// SPACE (BOM): trimmed by JavaScript's String.prototype.trim() (the
// contract's), kept by Go's strings.TrimSpace, Python's str.strip() and
// Rust's str::trim".
func (e EdgeSpace) String() string {
	return fmt.Sprintf("U+%04X %s: trimmed by %s, kept by %s", e.Rune, e.Name, and(e.TrimmedBy), and(e.KeptBy))
}

// and joins names as a sentence does: "a, b and c".
func and(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}
