package scrub

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCredentialPatternTestsNeverHideAMatch: a pattern's may test is false
// only for texts its expression cannot match, on texts built from the
// pieces the expressions look for (each shape's literal, cut and in other
// cases, hex runs across 32 digits, separators), so that the test skipping
// an expression never loses a finding.
func TestCredentialPatternTestsNeverHideAMatch(t *testing.T) {
	pieces := []string{
		"sk-", "sk", "-", "SK-", "Bearer", "bearer", "Basic", "BASIC", "AIza", "aiza", "eyJ", "eyj", ".",
		"://", ":/", "HTTPS", "https", "user", ":", "@", "/", " ", "\t", "\n", "_", "=", "\"", "'",
		"0123456789abcdef", "0123456789abcde", "f", "F", "0", "abcdefghijklmnopqrstuvwxyz0123", "ABCDEFGH", "é",
		"eyJhbGciOi.", "eyJzdWIiOi", "https://u:p@", "user:pw@", "Https://",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	matched := map[string]int{}
	for range 20000 {
		var b strings.Builder
		for range 1 + rng.IntN(12) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		s := b.String()
		for _, p := range credentialPatterns {
			if !p.re.MatchString(s) {
				continue
			}
			matched[p.kind]++
			if !p.may(s) {
				t.Fatalf("%s: the expression matches %q, the may test rules it out", p.kind, s)
			}
		}
	}
	// Every shape was matched (the texts reached each expression), and its
	// may test is not always true (it skips something).
	for _, p := range credentialPatterns {
		if matched[p.kind] == 0 {
			t.Errorf("%s: no text matched its expression", p.kind)
		}
		if p.may("plain words, nothing credential-shaped") {
			t.Errorf("%s: the may test lets plain words through", p.kind)
		}
	}
}
