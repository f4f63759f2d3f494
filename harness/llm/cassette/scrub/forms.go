package scrub

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"net/url"
	"regexp"
	"strings"
)

// This file is the one owner of the forms a secret is looked for in: the
// scrubber removes every one of them, ScanSecrets and `cassette scan` look
// for every one of them (ScanCredentials decodes the same encodings to
// find credential-shaped text in them), and KeyForms lists them for the
// tests that plant a key and grep every saved file for it.
//
// A form is an encoding of the secret's bytes (keyEncodings: plain,
// base64 in both alphabets at each of the 3 alignments, base32 at each of
// the 5, hex in both cases) seen through a transport escape (escapes:
// none, JSON-escaped, URL-encoded once or twice, and their mixes). A
// secret split across a stream's deltas is joined first (redactStreams,
// joinedStrings).

// keyEncoding is one way a secret's bytes are written down.
type keyEncoding struct {
	name string
	// needles are the parts of the encoded secret that do not depend on
	// the bytes around it.
	needles func(secret string) []string
	// token reports whether c belongs to an encoded token: a match is
	// widened to the whole token, so nothing of it is left behind (nil:
	// the match alone). pad is the padding that may end a token.
	token func(c byte) bool
	pad   byte
	// run finds encoded tokens in a text and decode decodes one, for the
	// scan of credential-shaped text (nil: nothing to decode).
	run    *regexp.Regexp
	decode func(run string) ([]byte, bool)
	// plant returns the forms a test plants: name and text (the secret
	// encoded inside a longer text at each alignment), and the needle.
	plant func(secret string) []KeyForm
}

// KeyForm is one form of a secret: Text is what a test plants (the secret
// encoded, for the offset forms inside a longer text), Needle the part of
// it that is the secret's alone (no saved file may hold it).
type KeyForm struct {
	Name   string
	Text   string
	Needle string
}

// fragments returns, for an encoding of bits bits a character and quantum
// bytes a block, the part of the encoding of secret that depends on the
// secret alone when it starts k bytes into a block, for each k.
func fragments(enc func([]byte) string, bits, quantum int, secret string) []KeyForm {
	var out []KeyForm
	n := len(secret)
	for k := 0; k < quantum; k++ {
		full := enc(append(append([]byte(strings.Repeat("~", k)), secret...), "~~~~"[:quantum-1]...))
		lo := (8*k + bits - 1) / bits
		hi := 8*(k+n)/bits - 1 // the last character made of secret bits only
		if hi < lo || hi >= len(full) || hi+1-lo < minSecret {
			continue
		}
		out = append(out, KeyForm{Name: fmt.Sprintf("offset %d", k), Text: full, Needle: full[lo : hi+1]})
	}
	return out
}

func inSet(set string) func(byte) bool {
	return func(c byte) bool { return strings.IndexByte(set, c) >= 0 }
}

const (
	base64Chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_"
	base32Chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz234567"
	hexChars    = "0123456789abcdefABCDEF"
)

func needlesOf(plant func(string) []KeyForm) func(string) []string {
	return func(secret string) []string {
		var out []string
		for _, f := range plant(secret) {
			out = append(out, f.Needle)
		}
		return out
	}
}

func named(prefix string, fs []KeyForm) []KeyForm {
	for i := range fs {
		fs[i].Name = prefix + ", " + fs[i].Name
	}
	return fs
}

func base64Forms(secret string) []KeyForm {
	return append(named("base64", fragments(base64.StdEncoding.EncodeToString, 6, 3, secret)),
		named("base64url", fragments(base64.URLEncoding.EncodeToString, 6, 3, secret))...)
}

func base32Forms(secret string) []KeyForm {
	upper := named("base32", fragments(base32.StdEncoding.EncodeToString, 5, 5, secret))
	lower := named("base32 lower-case", fragments(func(b []byte) string { return strings.ToLower(base32.StdEncoding.EncodeToString(b)) }, 5, 5, secret))
	return append(upper, lower...)
}

func hexForms(secret string) []KeyForm {
	lo := hex.EncodeToString([]byte(secret))
	return []KeyForm{{"hex", lo, lo}, {"hex upper-case", strings.ToUpper(lo), strings.ToUpper(lo)}}
}

// keyEncodings are the encodings of a secret's bytes, plain first.
var keyEncodings = []keyEncoding{
	{name: "plain", needles: func(s string) []string { return []string{s} },
		plant: func(s string) []KeyForm { return []KeyForm{{"plain", s, s}} }},
	{name: "base64", needles: needlesOf(base64Forms), token: inSet(base64Chars), pad: '=', plant: base64Forms,
		run: regexp.MustCompile(`[A-Za-z0-9+/_-]{16,}={0,2}`),
		decode: func(run string) ([]byte, bool) {
			for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding, base64.RawStdEncoding, base64.RawURLEncoding} {
				if b, err := enc.DecodeString(run); err == nil {
					return b, true
				}
			}
			return nil, false
		}},
	{name: "base32", needles: needlesOf(base32Forms), token: inSet(base32Chars), pad: '=', plant: base32Forms,
		run: regexp.MustCompile(`[A-Z2-7]{16,}=*|[a-z2-7]{16,}=*`),
		decode: func(run string) ([]byte, bool) {
			run = strings.ToUpper(run)
			for _, enc := range []*base32.Encoding{base32.StdEncoding, base32.StdEncoding.WithPadding(base32.NoPadding)} {
				if b, err := enc.DecodeString(run); err == nil {
					return b, true
				}
			}
			return nil, false
		}},
	{name: "hex", needles: needlesOf(hexForms), token: inSet(hexChars), plant: hexForms,
		run: regexp.MustCompile(`[0-9a-fA-F]{16,}`),
		decode: func(run string) ([]byte, bool) {
			b, err := hex.DecodeString(run[:len(run)&^1])
			return b, err == nil
		}},
}

// decodings are the views of a text through its transport escapes, with
// their offsets into it: as written, JSON-unescaped once and twice (a JSON
// text inside a JSON string: a todo item in a log line), URL-decoded once
// and twice, and their mixes.
func decodings(s string) []decoded {
	plain := identity(s)
	j := jsonUnescape(s)
	p := plain.then(percentDecode)
	return []decoded{plain, j, j.then(jsonUnescape), p, p.then(percentDecode), j.then(percentDecode), p.then(jsonUnescape)}
}

// escapeForms are the transport escapes KeyForms plants the secret in.
var escapeForms = []struct {
	name   string
	escape func(string) string
}{
	{"JSON-escaped", func(s string) string {
		var b strings.Builder
		for _, r := range s {
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		return b.String()
	}},
	{"URL-encoded", percentAll},
	{"URL-encoded twice", func(s string) string { return url.QueryEscape(percentAll(s)) }},
}

// percentAll writes every byte of s as %XX.
func percentAll(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		fmt.Fprintf(&b, "%%%02X", s[i])
	}
	return b.String()
}

// KeyForms lists the forms of secret that the scrubber removes and the
// scans find: each encoding (plain, base64 and base64url at each
// alignment, base32 in both cases at each alignment, hex in both cases)
// as it is, and the plain secret through each escape (JSON-escaped, URL-
// encoded once and twice). A split across a stream's deltas is not a form
// of its own: the stream is joined before any form is looked for.
func KeyForms(secret string) []KeyForm {
	var out []KeyForm
	for _, e := range keyEncodings {
		out = append(out, e.plant(secret)...)
	}
	for _, e := range escapeForms {
		t := e.escape(secret)
		out = append(out, KeyForm{Name: e.name, Text: t, Needle: t})
	}
	return out
}
