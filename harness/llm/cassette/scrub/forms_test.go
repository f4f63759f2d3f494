package scrub

import (
	"strings"
	"testing"

	vcr "gopkg.in/dnaeon/go-vcr.v3/cassette"
)

// Every form of KeyForms is removed by the scrubber with the whole token
// it is part of (nothing like "[REDACTED]M=" is left), and is found by
// ScanSecrets before scrubbing and not after: in a JSON body, an SSE
// body's text, a response header and a URL.
func TestEveryKeyFormIsScrubbedWholeAndFound(t *testing.T) {
	forms := KeyForms(unitSecret)
	for _, want := range []string{"plain", "base64, offset 0", "base64, offset 1", "base64, offset 2", "base64url, offset 2",
		"base32, offset 4", "base32 lower-case, offset 0", "hex", "hex upper-case", "JSON-escaped", "URL-encoded twice"} {
		found := false
		for _, f := range forms {
			found = found || f.Name == want
		}
		if !found {
			t.Fatalf("KeyForms lacks %q", want)
		}
	}
	s := New([]string{unitSecret})
	for _, f := range forms {
		t.Run(f.Name, func(t *testing.T) {
			text := "ref=" + f.Text + " end"
			if got := s.text(text); got != "ref="+Redacted+" end" {
				t.Errorf("scrubbed %q to %q, want the whole token redacted", text, got)
			}
			i := &vcr.Interaction{
				Request: vcr.Request{Method: "POST", URL: "https://api.example.com/v1/x?ref=" + f.Text,
					Body: `{"model":"m","messages":[{"role":"user","content":"ref=` + f.Text + `"}]}`},
				Response: vcr.Response{Code: 200,
					Headers: map[string][]string{"X-Debug-Echo": {f.Text}, "Content-Type": {"text/event-stream"}},
					Body:    "data: {\"choices\":[{\"delta\":{\"content\":\"your key: " + f.Text + "\"}}]}\n\ndata: [DONE]\n\n"},
			}
			raw, err := yamlOf(i)
			if err != nil {
				t.Fatal(err)
			}
			if len(ScanSecrets(raw, []string{unitSecret})) == 0 {
				t.Fatalf("ScanSecrets misses the %s form in\n%s", f.Name, raw)
			}
			s.Interaction(i)
			clean, err := yamlOf(i)
			if err != nil {
				t.Fatal(err)
			}
			if found := ScanSecrets(clean, []string{unitSecret}); len(found) > 0 {
				t.Fatalf("the scrubbed cassette still holds it: %v\n%s", found, clean)
			}
			if strings.Contains(string(clean), f.Needle) {
				t.Fatalf("the scrubbed cassette holds %q\n%s", f.Needle, clean)
			}
		})
	}
}

// The scan of credential-shaped text (no secret known, as `cassette scan`
// runs) decodes hex, both cases, and base32 runs too.
func TestScanCredentialsDecodesHexAndBase32(t *testing.T) {
	for _, f := range KeyForms(unitSecret) {
		if !strings.HasPrefix(f.Name, "hex") && !strings.HasPrefix(f.Name, "base32") {
			continue
		}
		if len(ScanCredentials([]byte("echo: "+f.Text+"\n"))) == 0 {
			t.Errorf("%s: ScanCredentials finds nothing in %q", f.Name, f.Text)
		}
	}
}

// A finding prints masked (first 4 characters, length, hash); Reveal
// prints it whole. So does the error of a refused save.
func TestFindingsAreMasked(t *testing.T) {
	found := ScanSecrets([]byte("key: "+unitSecret+"\n"), []string{unitSecret})
	if len(found) == 0 {
		t.Fatal("nothing found")
	}
	for _, f := range found {
		if strings.Contains(f.String(), unitSecret[4:12]) || !strings.Contains(f.String(), "sha256 ") {
			t.Errorf("String() = %q, want it masked", f.String())
		}
		if !strings.Contains(f.Reveal(), unitSecret) && !strings.Contains(unitSecret, strings.SplitN(f.Reveal(), ": ", 3)[2]) {
			t.Errorf("Reveal() = %q, want the match whole", f.Reveal())
		}
	}
	if got := Mask(unitSecret); !strings.HasPrefix(got, unitSecret[:4]+"…") || strings.Contains(got, unitSecret[4:8]) {
		t.Errorf("Mask = %q", got)
	}
}

// RedactText (what a printed diff goes through) leaves no form of a known
// secret.
func TestRedactTextLeavesNoForm(t *testing.T) {
	for _, f := range KeyForms(unitSecret) {
		diff := "-  \"content\": \"ref=[REDACTED]\"\n+  \"content\": \"ref=" + f.Text + "\"\n"
		got := RedactText(diff, []string{unitSecret})
		if strings.Contains(got, f.Needle) || len(ScanSecrets([]byte(got), []string{unitSecret})) > 0 {
			t.Errorf("%s: %q", f.Name, got)
		}
	}
}
