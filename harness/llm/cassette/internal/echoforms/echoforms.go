// Package echoforms is for tests: a key shaped like a real one, made at
// run time (no key-shaped value is written in the repository), and the
// forms a careless upstream may echo a key in that only the scrubber's
// fragment scan finds (issue 42 item 20).
package echoforms

import (
	"bytes"
	"compress/gzip"
	"encoding/ascii85"
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"
	"unicode/utf16"
)

// KeyShaped is a key shaped like a real one (an OpenAI project key: the
// prefix sk-proj- and 48 random letters and digits), the same for a seed.
func KeyShaped(seed uint64) string {
	const chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	r := rand.New(rand.NewPCG(seed, 42))
	b := []byte("sk-proj-")
	for range 48 {
		b = append(b, chars[r.IntN(len(chars))])
	}
	return string(b)
}

// PublicPrefix is the part of KeyShaped's keys that is every key's.
const PublicPrefix = "sk-proj-"

// Form is one way an upstream echoes a key. Encoded says whether the
// form is an encoding of the whole key (base64, Ascii85: only the whole
// text tells), rather than the key's characters each written another way.
type Form struct {
	Name    string
	Text    func(key string) string
	Encoded bool
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// Reversed is s backwards (bytes).
func Reversed(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// Rot13 is s with its ASCII letters rotated by 13.
func Rot13(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z':
			return 'a' + (r-'a'+13)%26
		case r >= 'A' && r <= 'Z':
			return 'A' + (r-'A'+13)%26
		}
		return r
	}, s)
}

// Forms are the forms of issue 42 item 20: reversed, rot13, upper-cased,
// zero-width spaces between the characters, HTML entities, base64 of
// UTF-16LE, base64 of gzip, double base64, spaced hex, Ascii85.
func Forms() []Form {
	return []Form{
		{Name: "reversed", Text: Reversed},
		{Name: "rot13", Text: Rot13},
		{Name: "upper-cased", Text: strings.ToUpper},
		{Name: "zero-width spaces between its characters", Text: func(k string) string {
			return strings.Join(strings.Split(k, ""), "\u200b")
		}},
		{Name: "HTML entities", Text: func(k string) string {
			var b strings.Builder
			for i, r := range k {
				if i%2 == 0 {
					fmt.Fprintf(&b, "&#%d;", r)
				} else {
					fmt.Fprintf(&b, "&#x%x;", r)
				}
			}
			return b.String()
		}},
		{Name: "base64 of UTF-16LE", Encoded: true, Text: func(k string) string {
			var b []byte
			for _, u := range utf16.Encode([]rune(k)) {
				b = binary.LittleEndian.AppendUint16(b, u)
			}
			return b64(b)
		}},
		{Name: "base64 of gzip", Encoded: true, Text: func(k string) string {
			var buf bytes.Buffer
			zw := gzip.NewWriter(&buf)
			_, _ = zw.Write([]byte(k))
			_ = zw.Close()
			return b64(buf.Bytes())
		}},
		{Name: "double base64", Encoded: true, Text: func(k string) string { return b64([]byte(b64([]byte(k)))) }},
		{Name: "spaced hex", Text: func(k string) string { return fmt.Sprintf("% x", k) }},
		{Name: "Ascii85", Encoded: true, Text: func(k string) string {
			b := make([]byte, ascii85.MaxEncodedLen(len(k)))
			return string(b[:ascii85.Encode(b, []byte(k))])
		}},
	}
}

// Survives returns the first 12-byte piece of planted that text holds
// ("" for none): what a scrubber left of a planted form, read without the
// scanner. For a form that is not Encoded, pass the form of the key
// without its public prefix (which may stay).
func Survives(text, planted string) string {
	for i := 0; i+12 <= len(planted); i++ {
		if p := planted[i : i+12]; strings.Contains(text, p) {
			return p
		}
	}
	return ""
}

// Left is what of key's form f text still holds ("" for nothing): the
// whole encoded text for an encoding, the form of the key but for its
// public prefix otherwise.
func Left(text string, f Form, key string) string {
	if f.Encoded {
		return Survives(text, f.Text(key))
	}
	return Survives(text, f.Text(strings.TrimPrefix(key, PublicPrefix)))
}
