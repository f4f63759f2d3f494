package scrub

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/todoharness/todoharness/harness/llm/cassette/internal/echoforms"
)

// Every form a careless upstream may echo a key in, planted in ordinary
// text, in a JSON body and in an SSE body: the scanner finds it (naming
// the form, never the key), the scrubber removes it whole (nothing of 12
// characters of the planted text is left), and the scrubbed text passes
// the scan.
func TestEveryEchoFormIsFoundAndScrubbed(t *testing.T) {
	key := echoforms.KeyShaped(1)
	s := New([]string{key})
	for _, f := range echoforms.Forms() {
		t.Run(f.Name, func(t *testing.T) {
			planted := f.Text(key)
			for _, text := range []string{
				"echo: " + planted + " end",
				`{"id":"x","echo":"` + jsonEscapeForTest(planted) + `","n":1}`,
				"data: {\"choices\":[{\"delta\":{\"content\":\"" + jsonEscapeForTest(planted) + "\"}}]}\n\ndata: [DONE]\n\n",
			} {
				found := ScanSecrets([]byte(text), []string{key})
				if len(found) == 0 {
					t.Fatalf("the scan misses it in %q", text)
				}
				for _, fd := range found {
					if strings.Contains(fd.String(), key[8:16]) {
						t.Errorf("a finding prints the key: %s", fd)
					}
				}
				clean := s.Body(text)
				// The key's public prefix (sk-proj-) may stay; nothing of
				// the rest may.
				if p := echoforms.Left(clean, f, key); p != "" {
					t.Errorf("the scrubbed text keeps %q of it:\n%s", p, clean)
				}
				if left := ScanSecrets([]byte(clean), []string{key}); len(left) > 0 {
					t.Errorf("the scrubbed text still fails the scan: %v\n%s", left, clean)
				}
			}
		})
	}
}

// jsonEscapeForTest is s as the inside of a JSON string.
func jsonEscapeForTest(s string) string {
	return strings.Trim(jsonString(s), `"`)
}

// A key split in two across two SSE comment lines, or across two fields
// of a JSON body, leaves neither half (each is a fragment), and the scan
// finds the halves in the unscrubbed text.
func TestSplitKeysLeaveNeitherHalf(t *testing.T) {
	key := echoforms.KeyShaped(2)
	a, b := key[:len(key)/2], key[len(key)/2:]
	s := New([]string{key})
	for name, text := range map[string]string{
		"two SSE comment lines": ": " + a + "\n: " + b + "\n\ndata: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n\n",
		"two JSON fields":       `{"first":"` + a + `","second":"` + b + `"}`,
		"two JSON strings":      `{"parts":["` + a + `","` + b + `"]}`,
	} {
		if len(ScanSecrets([]byte(text), []string{key})) == 0 {
			t.Errorf("%s: the scan misses it", name)
		}
		clean := s.Body(text)
		for _, half := range []string{a[8:], b} {
			if strings.Contains(clean, half) {
				t.Errorf("%s: %q kept:\n%s", name, half, clean)
			}
		}
		if strings.HasPrefix(text, "{") && !jsonValid(clean) {
			t.Errorf("%s: the scrubbed body is no longer JSON:\n%s", name, clean)
		}
	}
}

// A header named after the key (canonicalised, X-Sk-Proj-…) is dropped.
func TestHeaderNamedAfterTheKeyIsDropped(t *testing.T) {
	key := echoforms.KeyShaped(3)
	name := "X-" + strings.ToUpper(key[:1]) + key[1:]
	h := New([]string{key}).headers(map[string][]string{name: {"1"}, "Content-Type": {"text/plain"}})
	if len(h) != 1 || h.Get("Content-Type") == "" {
		t.Errorf("headers after scrubbing: %v", h)
	}
	raw := "    headers:\n      " + name + ":\n        - \"1\"\n"
	if len(ScanSecrets([]byte(raw), []string{key})) == 0 {
		t.Errorf("the scan misses the key in a header name")
	}
}

// Ordinary text, the repository's cassettes and goldens, and every text
// of KeyForms of one key hold no fragment of another key.
func TestFragmentsOfOtherKeysAreNotFound(t *testing.T) {
	key, other := echoforms.KeyShaped(4), echoforms.KeyShaped(5)
	var texts []string
	for _, f := range KeyForms(other) {
		texts = append(texts, f.Text)
	}
	for _, f := range echoforms.Forms() {
		texts = append(texts, f.Text(other))
	}
	texts = append(texts, "The quick brown fox jumps over the lazy dog; sk-proj- keys look like this. [REDACTED]")
	root := filepath.Join("..", "..", "..", "..")
	for _, dir := range []string{"fixtures", "golden"} {
		err := filepath.WalkDir(filepath.Join(root, dir), func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err == nil && len(b) < 4<<20 {
				texts = append(texts, string(b))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if len(texts) < 50 {
		t.Fatalf("only %d texts read: the spec proves little", len(texts))
	}
	x := newFragmentIndex([]string{key})
	for _, text := range texts {
		if hits, _ := x.fragmentHits(text); len(hits) > 0 {
			t.Errorf("a fragment of an unrelated key in %.80q: %v", text, hits)
		}
	}
}

// Values that are not keys give no fragments: short ones, paths, URLs,
// words; a key's public prefix is never one.
func TestWhatGivesFragments(t *testing.T) {
	for _, v := range []string{"short", "/home/user/.config/some-key-file", "https://example.com/a/b/c", "two words here ok", "admin:passwordsecret"} {
		if newFragmentIndex([]string{v}) != nil {
			t.Errorf("%q gives fragments", v)
		}
	}
	x := newFragmentIndex([]string{echoforms.KeyShaped(6)})
	if hits, _ := x.fragmentHits("sk-proj-sk-proj-sk-ant-api03-"); len(hits) > 0 {
		t.Errorf("a public prefix is a fragment: %v", hits)
	}
	// Of a basic credential's user:password, the words are not fragments.
	x = newFragmentIndex([]string{"admin:password123"})
	if hits, _ := x.fragmentHits("enter the admin password here"); len(hits) > 0 {
		t.Errorf("a word is a fragment: %v", hits)
	}
}

func jsonValid(s string) bool { return json.Valid([]byte(s)) }

// The decoders of the fragment scan (Ascii85, base64, HTML entities)
// and the scan itself take any text: offsets stay inside it, the spans it
// reports are in order and inside the text, and redacting them leaves
// valid UTF-8 of valid UTF-8.
func FuzzFragmentScan(f *testing.F) {
	key := echoforms.KeyShaped(9)
	for _, form := range echoforms.Forms() {
		f.Add("echo " + form.Text(key) + " end")
	}
	f.Add(`{"a":"&#115;&#x6b;&amp;\u0026#45;","b":"<~87cURD]i,\"Ebo80~>"}`)
	f.Add("z!!!!zzu~~%41%4")
	x := newFragmentIndex([]string{key})
	f.Fuzz(func(t *testing.T, text string) {
		_ = ascii85Lenient(text)
		_ = base64Lenient(text)
		h := htmlUnescape(text)
		if len(h.at) != len(h.s)+1 || h.at[len(h.s)] != len(text) {
			t.Fatalf("htmlUnescape offsets: %d for %d bytes", len(h.at), len(h.s))
		}
		for i := 1; i < len(h.at); i++ {
			if h.at[i] < h.at[i-1] {
				t.Fatalf("htmlUnescape offsets go back at %d", i)
			}
		}
		spans := x.fragmentSpans(text)
		for i, s := range spans {
			if s.a < 0 || s.b > len(text) || s.a >= s.b || (i > 0 && s.a < spans[i-1].b) {
				t.Fatalf("span %v of %d bytes (after %v)", s.span, len(text), spans)
			}
		}
		if out := x.redactFragments(text); utf8.ValidString(text) && !utf8.ValidString(out) {
			t.Fatalf("redacting made invalid UTF-8: %q", out)
		}
	})
}

// benchText is n bytes of SSE body like a model's answer, with a key in
// it when withKey.
func benchText(n int, key string) string {
	var b strings.Builder
	for i := 0; b.Len() < n; i++ {
		fmt.Fprintf(&b, "data: {\"id\":\"chatcmpl-%d\",\"choices\":[{\"delta\":{\"content\":\"Step %d: update the todo list, then run the tests again (call_%x).\"}}]}\n\n", i, i, i*7919)
		if key != "" && i == 1000 {
			fmt.Fprintf(&b, "data: {\"choices\":[{\"delta\":{\"content\":%q}}]}\n\n", echoforms.Forms()[6].Text(key))
		}
	}
	return b.String()
}

// BenchmarkFragmentScan measures the fragment scan of one known key:
// ScanSecrets of the shipped todo-plan cassette (36 KB: each line, the file
// as one text, each field; ScanCredentials, no key known, beside it), and, on a 1 MiB SSE body holding the key as
// base64 of gzip, the fragment scan alone (every view, every encoded run
// decoded) and Scrubber.Body (exact forms, fragments, patterns).
func BenchmarkFragmentScan(b *testing.B) {
	key := echoforms.KeyShaped(10)
	cas, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "fixtures", "e2e", "todo-plan", "cassette.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	big := benchText(1<<20, key)
	s := New([]string{key})
	for _, c := range []struct {
		name string
		size int
		f    func()
	}{
		{"ScanCredentials/cassette-36KB", len(cas), func() { ScanCredentials(cas) }},
		{"ScanSecrets/cassette-36KB", len(cas), func() { ScanSecrets(cas, []string{key}) }},
		{"fragmentHits/sse-1MiB", len(big), func() { s.frag.fragmentHits(big) }},
		{"Body/sse-1MiB", len(big), func() { s.Body(big) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(c.size))
			for b.Loop() {
				c.f()
			}
		})
	}
}
