package termtext

import (
	"bytes"
	"strings"
	"testing"
)

// Every character a terminal acts on comes out as text; ordinary text,
// accents and emoji included, is left alone.
func TestVisible(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain text, ünïcödé ✓ 🎉", "plain text, ünïcödé ✓ 🎉"},
		{"\x1b]52;c;ZXZpbA==\x07", `\x1b]52;c;ZXZpbA==\x07`}, // OSC 52: the clipboard
		{"\x1b[2J\x1b[H", `\x1b[2J\x1b[H`},                   // clear screen
		{"\x1b]0;title\x1b\\", `\x1b]0;title\x1b\`},          // window title
		{"a\nb\rc\td", `a\nb\rc\td`},
		{"del\x7f", `del\x7f`},
		{"c1 \u009b31m", `c1 \u009b31m`},
		{"bidi \u202eevil\u202c \u2066x\u2069 \u200f", `bidi \u202eevil\u202c \u2066x\u2069 \u200f`},
		{"zw\u200bj\ufeff ls\u2028", `zw\u200bj\ufeff ls\u2028`},
		{"bad \xff\xfe utf8 \xe2\x82", `bad \xff\xfe utf8 \xe2\x82`},
	} {
		if got := Visible(tc.in); got != tc.want {
			t.Errorf("Visible(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// The writer keeps its own lines and columns, escapes everything else,
// and on a terminal lets the program's colour codes and a leading carriage
// return through, never another escape sequence.
func TestWriter(t *testing.T) {
	for _, tc := range []struct {
		name     string
		terminal bool
		writes   []string
		want     string
	}{
		{"file", false, []string{"ID\tOUTCOME\n", "\x1b[32mPASS\x1b[0m \x1b]52;c;eA==\x07\n"}, "ID\tOUTCOME\n" + `\x1b[32mPASS\x1b[0m \x1b]52;c;eA==\x07` + "\n"},
		{"terminal colours", true, []string{"\x1b[32mPASS\x1b[0m \x1b]52;c;eA==\x07 \x1b[2J\n"}, "\x1b[32mPASS\x1b[0m " + `\x1b]52;c;eA==\x07 \x1b[2J` + "\n"},
		{"terminal progress", true, []string{"\r[1/2] x", "\r[2/2] y\x1b[K\rz\n"}, "\r[1/2] x\r[2/2] y" + `\x1b[K\rz` + "\n"},
		{"file progress", false, []string{"\r[1/2] x\n"}, `\r[1/2] x` + "\n"},
		{"split character", false, []string{"caf\xc3", "\xa9 \xe2\x9c", "\x93\n"}, "café ✓\n"},
		{"bidi and C1", false, []string{"a\u202eb\u0085c\n"}, `a\u202eb\u0085c` + "\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			w := NewWriter(&b, tc.terminal)
			for _, s := range tc.writes {
				if n, err := w.Write([]byte(s)); err != nil || n != len(s) {
					t.Fatalf("Write(%q) = %d, %v", s, n, err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("got  %q\nwant %q", b.String(), tc.want)
			}
		})
	}
}

// A character left incomplete at the end shows as its bytes on Flush.
func TestWriterFlushIncomplete(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b, false)
	_, _ = w.Write([]byte("x\xe2\x82"))
	if b.String() != "x" {
		t.Fatalf("before Flush: %q", b.String())
	}
	_ = w.Flush()
	if b.String() != `x\xe2\x82` {
		t.Errorf("after Flush: %q", b.String())
	}
}

// In a GitHub Actions log no line the program did not write as a command
// starts like one: a forged ::error or ::stop-commands, after any white
// space, is defused; WriteCommand's lines are not.
func TestWriterGitHub(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b, false)
	w.GitHub = true
	_, _ = w.Write([]byte("agent info: x\n::error title=forged::pwned\n  \u00a0::stop-commands::x\n"))
	_, _ = w.Write([]byte("##[error]old\nok :: not at the start\n"))
	_, _ = w.Write([]byte("  "))
	_, _ = w.Write([]byte("::warning::split after spaces\n"))
	if err := w.WriteCommand("::error title=TW-1::" + GitHubData("real\n::error::no") + "\n"); err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
		if commandStart(l) && !strings.HasPrefix(l, "::error title=TW-1::") {
			t.Errorf("a forged workflow command: %q\nall:\n%s", l, b.String())
		}
	}
	if !strings.Contains(b.String(), "::error title=TW-1::real%0A::error::no\n") {
		t.Errorf("the program's own command is missing:\n%s", b.String())
	}
	if !strings.Contains(b.String(), "> ::error title=forged::pwned") {
		t.Errorf("the forged command is not shown defused:\n%s", b.String())
	}
}

func TestGitHubEscapes(t *testing.T) {
	if got, want := GitHubData("50% done\r\n\x1b]0;t\x07::x"), `50%25 done%0D%0A\x1b]0;t\x07::x`; got != want {
		t.Errorf("GitHubData = %q, want %q", got, want)
	}
	if got, want := GitHubProperty("a:b,c\n"), "a%3Ab%2Cc%0A"; got != want {
		t.Errorf("GitHubProperty = %q, want %q", got, want)
	}
}

func TestMarkdownCell(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"1.2.3", "1.2.3"},
		{"1.0 | x", `1.0 \| x`},
		{"![t](https://evil.example/p.png)", `\!\[t\]\(https://evil.example/p.png\)`},
		{"<img src=x>&amp;", `\<img src=x\>\&amp;`},
		{"*b* _i_ `c` ~s~ \\", "\\*b\\* \\_i\\_ \\`c\\` \\~s\\~ \\\\"},
		{"a\nb\x1b[31m", `a\\nb\\x1b\[31m`},
	} {
		if got := MarkdownCell(tc.in); got != tc.want {
			t.Errorf("MarkdownCell(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
