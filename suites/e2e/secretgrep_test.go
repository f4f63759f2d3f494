package e2e

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/llm/cassette/scrub"
	"github.com/todoharness/todoharness/internal/yamlx"
)

// encodings returns every form of s a file could hold it in: plain,
// JSON-escaped (default, `\/`, every character as \u00XX), URL-encoded
// (query and path), and base64 in both alphabets, padded or not, alone or
// at any alignment inside a longer base64 text.
func encodings(s string) []string {
	js, _ := json.Marshal(s)
	u := jsonEscapedAll(s)
	out := []string{s, strings.Trim(string(js), `"`), strings.ReplaceAll(s, "/", `\/`), u,
		strings.ReplaceAll(strings.ToUpper(u), `\U`, `\u`), url.QueryEscape(s), url.PathEscape(s)}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
		out = append(out, enc.EncodeToString([]byte(s)))
		for k := 0; k < 3; k++ {
			e := enc.EncodeToString(append(bytes.Repeat([]byte{'x'}, k), s...))
			skip := 4 // the first quantum holds bits of the k x's
			if k == 0 {
				skip = 0
			}
			out = append(out, e[skip:len(e)-4]) // the rest, but for the last quantum, holds only bits of s
		}
	}
	// And every form the scrubber and `cassette scan` know (base32 at every
	// alignment, hex in both cases, URL-encoded twice, ...): the same list.
	for _, f := range scrub.KeyForms(s) {
		out = append(out, f.Needle)
	}
	return out
}

var (
	jsonEscape    = regexp.MustCompile(`\\u([0-9a-fA-F]{4})`)
	percentEscape = regexp.MustCompile(`%([0-9a-fA-F]{2})`)
)

// decodedViews returns text as it reads with its JSON escapes (\uXXXX,
// \/) decoded once and twice (a JSON text inside a JSON string), and with
// its percent escapes decoded, before and after: the forms an encoder
// mixes within one value (\u0073k-…, only some characters escaped), which
// no list of forms can hold. The decoding is the spec's own, not the
// scrubber's.
func decodedViews(text string) []string {
	unJSON := func(s string) string {
		s = jsonEscape.ReplaceAllStringFunc(s, func(m string) string {
			n, _ := strconv.ParseUint(m[2:], 16, 32)
			return string(rune(n))
		})
		return strings.ReplaceAll(s, `\/`, "/")
	}
	unPercent := func(s string) string {
		return percentEscape.ReplaceAllStringFunc(s, func(m string) string {
			n, _ := strconv.ParseUint(m[1:], 16, 8)
			return string([]byte{byte(n)})
		})
	}
	once := unJSON(text)
	return []string{text, once, unJSON(once), unPercent(text), unPercent(unPercent(text)), unPercent(once), unJSON(unPercent(text))}
}

// streamTexts joins the string values of a stream's JSON documents by
// their path (choices.0.delta.content, params.update.content.text, ...)
// across the documents, as a client joins a stream's deltas: the data:
// events of each response body of a cassette, the lines of a JSON-lines
// file (path says which data is). A secret split across deltas is whole
// in one of them.
func streamTexts(path string, data []byte) []string {
	var streams [][]string
	switch {
	case strings.HasSuffix(path, ".yaml"):
		var c struct {
			Interactions []struct {
				Response struct {
					Body string `yaml:"body"`
				} `yaml:"response"`
			} `yaml:"interactions"`
		}
		if yamlx.Unmarshal(data, &c, false) != nil {
			return nil // not a cassette; the plain grep still reads it
		}
		for _, in := range c.Interactions {
			var docs []string
			for _, l := range strings.Split(in.Response.Body, "\n") {
				if d, ok := strings.CutPrefix(strings.TrimSpace(l), "data:"); ok {
					docs = append(docs, d)
				}
			}
			streams = append(streams, docs)
		}
	case strings.HasSuffix(path, ".jsonl"):
		streams = append(streams, strings.Split(string(data), "\n"))
	}
	var out []string
	for _, docs := range streams {
		joined := map[string]*strings.Builder{}
		var order []string
		var walk func(v any, at string)
		walk = func(v any, at string) {
			switch v := v.(type) {
			case string:
				if joined[at] == nil {
					joined[at] = &strings.Builder{}
					order = append(order, at)
				}
				joined[at].WriteString(v)
			case map[string]any:
				for k, x := range v {
					walk(x, at+"."+k)
				}
			case []any:
				for i, x := range v {
					walk(x, fmt.Sprintf("%s.%d", at, i))
				}
			}
		}
		for _, d := range docs {
			var v any
			if json.Unmarshal([]byte(d), &v) == nil {
				walk(v, "")
			}
		}
		for _, at := range order {
			out = append(out, joined[at].String())
		}
	}
	return out
}

// grepSecrets is the spec's own grep of a saved file (data, read from
// path), independent of the scrubber and of the cassette scan: each fake
// secret in every encoding (encodings), with some of its characters
// escaped (decodedViews), split across a stream's deltas (streamTexts);
// and a response body stored gzipped (raw, as YAML !!binary, or still
// marked Content-Encoding). It returns what it found.
func grepSecrets(path string, data []byte) []string {
	var found []string
	for _, sec := range fakeSecrets() {
		for _, form := range encodings(sec) {
			if strings.Contains(string(data), form) {
				found = append(found, fmt.Sprintf("%s holds %q (a form of %q)", path, form, sec))
			}
		}
		for _, view := range decodedViews(string(data)) {
			if strings.Contains(view, sec) {
				found = append(found, fmt.Sprintf("%s holds %q with some characters escaped", path, sec))
			}
		}
		for _, text := range streamTexts(path, data) {
			for _, view := range decodedViews(text) {
				if strings.Contains(view, sec) {
					found = append(found, fmt.Sprintf("%s holds %q split across a stream's deltas: %q", path, sec, text))
				}
			}
		}
	}
	for _, gz := range []string{"\x1f\x8b", "!!binary", "H4sI", "Content-Encoding"} {
		if strings.Contains(string(data), gz) {
			found = append(found, fmt.Sprintf("%s holds a gzip body (%q): response bodies are stored decoded", path, gz))
		}
	}
	return found
}

var _ = Describe("the spec's grep for the fake secrets", func() {
	DescribeTable("finds a fake secret planted in a saved file in any form",
		func(name, content, want string) {
			path := filepath.Join(GinkgoT().TempDir(), name)
			Expect(os.WriteFile(path, []byte(content), 0o644)).To(Succeed())
			data, err := os.ReadFile(path)
			Expect(err).NotTo(HaveOccurred())
			Expect(grepSecrets(path, data)).To(ContainElement(ContainSubstring(want)))
		},
		Entry("plain", "stdout.golden.jsonl", `{"text":"key `+fakeAgentKey+`"}`, "(a form of"),
		Entry("JSON-escaped, every character", "cassette.yaml", "body: '"+jsonEscapedAll(fakePassword)+"'", "(a form of"),
		Entry("JSON-escaped, one character (\\u0073k-…)", "plan.golden.jsonl", `{"content":"rotate \u0073`+fakeAgentKey[1:]+`"}`, "with some characters escaped"),
		Entry("JSON-escaped twice, in a JSON text inside a string", "cassette.yaml", `body: '{"a":"{\"b\":\"\\u0073`+fakeAgentKey[1:]+`\"}"}'`, "with some characters escaped"),
		Entry("URL-encoded", "cassette.yaml", "url: https://x.invalid/?u="+url.QueryEscape(fakeUser+":"+fakePassword), "(a form of"),
		Entry("URL-encoded, one character", "cassette.yaml", "url: https://x.invalid/?k=%73"+fakeAgentKey[1:], "with some characters escaped"),
		Entry("base64, alone", "cassette.yaml", "a: "+base64.StdEncoding.EncodeToString([]byte(fakePassword)), "(a form of"),
		Entry("base64, at the start of a longer text", "cassette.yaml", "a: "+base64.RawURLEncoding.EncodeToString([]byte(fakeAgentKey+"tail")), "(a form of"),
		Entry("base64, one byte into a longer text", "cassette.yaml", "a: "+base64.StdEncoding.EncodeToString([]byte("x"+fakePassword+"yz")), "(a form of"),
		Entry("base64, two bytes into a longer text", "cassette.yaml", "a: "+base64.URLEncoding.EncodeToString([]byte("apiuser:"+fakeAgentKey+"!")), "(a form of"),
		Entry("split across the deltas of an event stream in a cassette", "cassette.yaml",
			"interactions:\n  - response:\n      body: |\n        data: {\"choices\":[{\"delta\":{\"content\":\"key sk-proj-FA\"}}]}\n\n"+
				"        data: {\"choices\":[{\"delta\":{\"content\":\"KEtest0123456789abcdefXYZ\"}}]}\n\n", "split across a stream's deltas"),
		Entry("split across ACP notification lines, one piece escaped", "stdout.golden.jsonl",
			`{"params":{"update":{"content":{"text":"key \u0073k-proj-FA"}}}}`+"\n"+`{"params":{"update":{"content":{"text":"KEtest0123456789abcdefXYZ"}}}}`+"\n", "split across a stream's deltas"),
		Entry("a gzip body stored as YAML binary", "cassette.yaml", "body: !!binary H4sIAAAAAAAA/wEAAP//AAAAAAAAAAA=", "holds a gzip body"),
	)

	It("finds every form the scrubber and the cassette scan know, planted in a saved file, as the cassette scan does", func() {
		for _, sec := range fakeSecrets() {
			for _, f := range scrub.KeyForms(sec) {
				data := []byte("body: 'echo " + f.Text + " end'\n")
				Expect(grepSecrets("cassette.yaml", data)).NotTo(BeEmpty(), "the grep misses the %s form of %q", f.Name, sec)
				Expect(scrub.ScanSecrets(data, []string{sec})).NotTo(BeEmpty(), "the scan misses the %s form of %q", f.Name, sec)
			}
		}
	})

	It("finds nothing in a file that holds none of them", func() {
		text := `{"content":"rotate [REDACTED]","status":"in_progress"}` + "\n" + base64.StdEncoding.EncodeToString([]byte("an innocent text"))
		Expect(grepSecrets("plan.golden.jsonl", []byte(text))).To(BeEmpty())
	})
})

// jsonEscapedAll is s with every character written as \u00XX.
func jsonEscapedAll(s string) string {
	var b strings.Builder
	for _, r := range s {
		fmt.Fprintf(&b, `\u%04x`, r)
	}
	return b.String()
}
