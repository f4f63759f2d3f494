// Package termtext makes text that came from an agent safe to print: what
// a terminal would act on instead of showing (escape and control
// sequences, carriage returns, bidirectional overrides) is written
// visibly, as \x1b or \u202e, never passed on; and for the two other
// places the command line writes such text to, a GitHub Actions log
// (workflow commands) and a Markdown table cell, it escapes what those
// read as syntax.
//
// Visible is for one value inside a line the program writes; Writer is
// the backstop every human-readable stream of the command line goes
// through, so that text no one escaped at its source still cannot reach
// the terminal raw.
package termtext

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Visible returns s with every character a terminal would act on rather
// than show written as an escape: C0 controls (tab, newline and carriage
// return included, as \t, \n, \r; ESC as \x1b), DEL, the C1 controls
// (\u009b), the bidirectional controls, zero-width characters and the
// line and paragraph separators (\u202e), and each byte that is not
// UTF-8 (\xff). The result is one line, and shows everything it holds.
func Visible(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		writeRune(&b, s[i:i+n], r, n)
		i += n
	}
	return b.String()
}

// clean reports whether s holds nothing Visible escapes.
func clean(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c == 0x7f || c >= 0x80 {
			// Not ASCII text: look closer.
			for _, r := range s[i:] {
				if r == utf8.RuneError || Hidden(r) {
					return false
				}
			}
			return true
		}
	}
	return true
}

// writeRune writes one decoded rune of Visible (raw: its bytes; n == 1
// with r == utf8.RuneError: a byte that is not UTF-8).
func writeRune(b *strings.Builder, raw string, r rune, n int) {
	switch {
	case r == utf8.RuneError && n == 1:
		fmt.Fprintf(b, `\x%02x`, raw[0])
	case r == '\t':
		b.WriteString(`\t`)
	case r == '\n':
		b.WriteString(`\n`)
	case r == '\r':
		b.WriteString(`\r`)
	case r < 0x20 || r == 0x7f:
		fmt.Fprintf(b, `\x%02x`, r)
	case Hidden(r):
		fmt.Fprintf(b, `\u%04x`, r)
	default:
		b.WriteString(raw)
	}
}

// Hidden reports whether r is a character a terminal acts on or does not
// show: a C0 or C1 control, DEL, a bidirectional control (U+061C,
// U+200E-F, U+202A-E, U+2066-9), a zero-width or invisible character
// (U+200B-D, U+2060-4, U+FEFF), the line and paragraph separators
// (U+2028-9) or an interlinear annotation mark (U+FFF9-B).
func Hidden(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x061c, r >= 0x200b && r <= 0x200f, r >= 0x2028 && r <= 0x202e,
		r >= 0x2060 && r <= 0x2064, r >= 0x2066 && r <= 0x2069, r == 0xfeff, r >= 0xfff9 && r <= 0xfffb:
		return true
	}
	return false
}

// Writer passes what is written to it on to W, with every character
// Visible escapes shown visibly, except newline and tab (the lines and
// columns of the program's own output). On a terminal (Terminal set: the
// program paints its output) two more pass: the colour codes the program
// paints with (ESC [ digits and semicolons m), and a carriage return that
// starts a Write (a progress line redrawn in place). Anything else, an
// escape sequence that moves the cursor, sets the window title or writes
// the clipboard (OSC 52) included, arrives as text.
//
// With GitHub set (a GitHub Actions log), a line that GitHub's runner
// would read as a workflow command (::error, ::stop-commands, ##[...) gets
// Defused written before it: only WriteCommand writes one.
//
// Each Write is escaped on its own, except that a character split across
// two Writes is kept whole. Writer is not safe for concurrent use unless
// W's writes are serialised by the caller, as with any io.Writer.
type Writer struct {
	W        io.Writer
	Terminal bool
	GitHub   bool
	// partial holds the first bytes of a UTF-8 character a Write ended in.
	partial []byte
	// midLine: something other than white space was written since the
	// last line break.
	midLine bool
}

// NewWriter returns a Writer onto w; terminal as Writer.Terminal.
func NewWriter(w io.Writer, terminal bool) *Writer {
	return &Writer{W: w, Terminal: terminal}
}

// Write escapes p and writes it to W; it reports len(p) written when W
// took all of the escaped text.
func (w *Writer) Write(p []byte) (int, error) {
	s := string(p)
	if len(w.partial) > 0 {
		s = string(w.partial) + s
		w.partial = w.partial[:0]
	}
	// Keep an incomplete character at the end for the next Write.
	if cut := incompleteTail(s); cut < len(s) {
		w.partial = append(w.partial, s[cut:]...)
		s = s[:cut]
	}
	if _, err := io.WriteString(w.W, w.escape(s)); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteCommand writes one workflow command line (its own, escaped with
// GitHubData and GitHubProperty: no line break inside) without defusing
// it; the characters Visible escapes are still escaped.
func (w *Writer) WriteCommand(line string) error {
	if err := w.Flush(); err != nil {
		return err
	}
	gh := w.GitHub
	w.GitHub = false
	defer func() { w.GitHub = gh }()
	_, err := w.Write([]byte(line))
	return err
}

// Flush writes a character left incomplete by the last Write, escaped
// byte by byte.
func (w *Writer) Flush() error {
	if len(w.partial) == 0 {
		return nil
	}
	s := Visible(string(w.partial))
	w.partial = w.partial[:0]
	_, err := io.WriteString(w.W, s)
	return err
}

// Fd is W's file descriptor when W has one (a terminal stays one when
// wrapped), else ^0, which no terminal has.
func (w *Writer) Fd() uintptr {
	if f, ok := w.W.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

// Unwrap returns the writer w escapes into: for output that is data, not
// text for a person (a JSON report on stdout), which the program encodes
// itself.
func Unwrap(w io.Writer) io.Writer {
	for {
		tw, ok := w.(*Writer)
		if !ok {
			return w
		}
		w = tw.W
	}
}

// escape is Visible with Writer's exceptions.
func (w *Writer) escape(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == '\n', c == '\r' && i == 0 && w.Terminal:
			w.midLine = false
		case w.midLine:
		case c == ' ' || c == '\t':
		default:
			// The first character of a line that is not white space.
			if r, _ := utf8.DecodeRuneInString(s[i:]); !unicode.IsSpace(r) {
				if w.GitHub && commandStart(s[i:]) {
					b.WriteString(Defused)
				}
				w.midLine = true
			}
		}
		switch {
		case c == '\n' || c == '\t':
			b.WriteByte(c)
			i++
			continue
		case c == '\r' && i == 0 && w.Terminal:
			b.WriteByte(c)
			i++
			continue
		case c == 0x1b && w.Terminal:
			if n := sgrLen(s[i:]); n > 0 {
				b.WriteString(s[i : i+n])
				i += n
				continue
			}
		case c >= 0x20 && c < 0x7f:
			b.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		writeRune(&b, s[i:i+n], r, n)
		i += n
	}
	return b.String()
}

// sgrLen is the length of the colour code s starts with (ESC [ then digits
// and semicolons, then m), or 0.
func sgrLen(s string) int {
	if len(s) < 3 || s[0] != 0x1b || s[1] != '[' {
		return 0
	}
	for i := 2; i < len(s) && i < 32; i++ {
		switch c := s[i]; {
		case c == 'm':
			return i + 1
		case c == ';' || (c >= '0' && c <= '9'):
		default:
			return 0
		}
	}
	return 0
}

// incompleteTail is where an incomplete but so far valid UTF-8 character
// at the end of s starts (len(s) when there is none).
func incompleteTail(s string) int {
	for k := 1; k <= 3 && k <= len(s); k++ {
		c := s[len(s)-k]
		if c < 0x80 {
			return len(s)
		}
		if c >= 0xc0 { // a leading byte
			need := 2
			switch {
			case c >= 0xf0:
				need = 4
			case c >= 0xe0:
				need = 3
			}
			if need > k && !utf8.FullRuneInString(s[len(s)-k:]) {
				return len(s) - k
			}
			return len(s)
		}
	}
	return len(s)
}
