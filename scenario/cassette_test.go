package scenario

import (
	"strings"
	"testing"
)

// The error of a recording whose replay differs prints both sides with
// the key redacted: the replayed side too, where a key the scrubber missed
// (here written \u0073k-… inside a todo item, escaped once more by the
// log's JSON) would otherwise reach the terminal.
func TestNotReproducedPrintsNoKey(t *testing.T) {
	key := "sk-proj-" + strings.Repeat("Q7xv", 6) // key-shaped, built at run time
	escaped := `\\u0073` + key[1:]
	live := Goldens{
		ACP: []byte(`{"params":{"update":{"entries":[{"content":"rotate [REDACTED]"}]}}}` + "\n"),
		Log: []byte(`todo/write {"todos":[{"content":"rotate [REDACTED]"}]}` + "\n"),
	}
	replayed := Goldens{
		ACP: []byte(`{"params":{"update":{"entries":[{"content":"rotate ` + escaped + `"}]}}}` + "\n"),
		Log: []byte(`todo/write {"todos":[{"content":"rotate ` + escaped + `"}]}` + "\n"),
	}
	err := notReproduced("rotate", "cassette.yaml", live, replayed, []string{key})
	for _, leak := range []string{key[1:], key[8:20], escaped} {
		if strings.Contains(err.Error(), leak) {
			t.Errorf("the error prints %q:\n%v", leak, err)
		}
	}
	if !strings.Contains(err.Error(), "replayed ACP:") || !strings.Contains(err.Error(), "rotate [REDACTED]") {
		t.Errorf("the error lost the diff's sides:\n%v", err)
	}
}

// With no secret known, a credential-shaped value the replayed side holds
// only escaped (\u0073k-…) is redacted too: it would decode to a key on
// the terminal.
func TestNotReproducedRedactsAnEscapedKeyNoOneNamed(t *testing.T) {
	key := "sk-proj-" + strings.Repeat("Zq3w", 6)
	for _, escaped := range []string{`\u0073` + key[1:], `\\u0073` + key[1:], "sk%2D" + key[3:]} {
		replayed := Goldens{ACP: []byte(`{"params":{"update":{"entries":[{"content":"rotate ` + escaped + `"}]}}}` + "\n")}
		err := notReproduced("rotate", "cassette.yaml", Goldens{}, replayed, nil)
		if strings.Contains(err.Error(), key[8:20]) {
			t.Errorf("%s: the error prints the key:\n%v", escaped, err)
		}
	}
}
