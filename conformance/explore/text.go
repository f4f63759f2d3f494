package explore

import (
	"math/rand/v2"
	"strings"
	"unicode/utf8"

	"github.com/todoharness/todoharness/harness/todo"
	"github.com/todoharness/todoharness/harness/todolist"
)

// scripts are the alphabets item content is drawn from: each draws one
// piece of text. Content mixes them, so a long item crosses scripts.
var scripts = []struct {
	name string
	draw func(r *rand.Rand) string
}{
	{"ascii", func(r *rand.Rand) string {
		return string(pick(r, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789     .,;:-_()[]/"))
	}},
	{"cjk", func(r *rand.Rand) string {
		switch r.IntN(3) {
		case 0:
			return string(rune(0x4E00 + r.IntN(0x9FFF-0x4E00)))
		case 1:
			return string(rune(0x3041 + r.IntN(0x30FF-0x3041)))
		}
		return string(rune(0xAC00 + r.IntN(0xD7A3-0xAC00)))
	}},
	{"emoji", func(r *rand.Rand) string {
		return []string{"😀", "🚀", "✅", "👍🏽", "👨‍👩‍👧", "🇫🇷", "🧪", "❤️", "🔥", "🐛", "\U0001F9D1\u200D\U0001F4BB"}[r.IntN(11)]
	}},
	{"combining", func(r *rand.Rand) string {
		s := string(pick(r, "aeiouAEIOUnc"))
		for k := 0; k <= r.IntN(3); k++ {
			s += string(rune(0x0300 + r.IntN(0x70)))
		}
		return s
	}},
	{"rtl", func(r *rand.Rand) string {
		switch r.IntN(4) {
		case 0:
			return string(rune(0x05D0 + r.IntN(27)))
		case 1:
			return string(rune(0x0627 + r.IntN(36)))
		case 2:
			return "\u200F"
		}
		return "\u202E" // right-to-left override
	}},
	{"control", func(r *rand.Rand) string {
		return []string{"\t", "\x01", "\x1b[31m", "\x7f", "\u0085", "\u2028", "\u200B", "\uFEFF", "\x00", "\b"}[r.IntN(10)]
	}},
	{"quotes", func(r *rand.Rand) string {
		return []string{`"`, `'`, "`", `\`, `\"`, `</plan>`, `{{.Cwd}}`, `%s`, `&amp;`, `'; --`}[r.IntN(10)]
	}},
	{"newlines", func(r *rand.Rand) string { return []string{"\n", "\r\n", "\n\n", "\r"}[r.IntN(4)] }},
}

func pick(r *rand.Rand, s string) []byte { return []byte{s[r.IntN(len(s))]} }

// content draws an item's text of about n runes. It never comes out blank,
// under the contract's trim or any other common one (todolist.TrimAny: the
// generator breaks that rule on purpose only, with whitespace every trim
// function removes).
func content(r *rand.Rand, n int) string {
	var b strings.Builder
	// Most items stay in one or two scripts; some mix all of them.
	a := r.IntN(len(scripts))
	c := r.IntN(len(scripts))
	for utf8.RuneCountInString(b.String()) < n {
		k := a
		switch x := r.IntN(10); {
		case x >= 7 && x < 9:
			k = c
		case x == 9:
			k = r.IntN(len(scripts))
		}
		b.WriteString(scripts[k].draw(r))
	}
	s := b.String()
	if todolist.TrimAny(s) == "" {
		s = "x" + s
	}
	return s
}

// words make the promptTexts and the model's text: plain words that no item
// drawn from the scripts spells (TW-HISTORY-1 looks for item text in what
// the model is sent, so the case's own texts must not carry it).
var words = []string{"working", "on", "it", "now", "checking", "the", "next", "step", "done", "progress", "noted", "carry", "on", "looks", "good"}

func sentence(r *rand.Rand) string {
	n := 2 + r.IntN(6)
	ws := make([]string, n)
	for i := range ws {
		ws[i] = words[r.IntN(len(words))]
	}
	return strings.Join(ws, " ") + "."
}

var promptTexts = []string{
	"Plan the work with your todo tool, then reply DONE.",
	"Continue the work and keep your todo list current, then reply DONE.",
	"Update your todo list as you go, then reply DONE.",
	"Finish the work and keep your todo list current, then reply DONE.",
}

// knownTexts are texts an agent sends the model beside the case's own:
// the reference tool's description and result. An item spelling part of
// them would make TW-HISTORY-1 see a leak that is not one.
var knownTexts = []string{
	todo.Description(todo.Config{}), todo.Description(todo.Config{AllowParallelInProgress: true}),
	todo.FormatSummary(10, 10, 10), strings.Join(promptTexts, " "), strings.Join(words, " "),
}
