package scrub

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

func TestScrubber(t *testing.T) {
	s := New([]string{"hunter2-long-secret"})
	h := http.Header{
		"Authorization": {"Bearer x"}, "X-Api-Key": {"k"}, "Api-Key": {"k"}, "Cookie": {"c"},
		"X-Goog-Api-Key": {"k"}, "Openai-Project": {"p"}, "Content-Type": {"application/json"},
		"X-Note": {"uses sk-abcdefghijklmnop and hunter2-long-secret"},
	}
	orig := h.Clone()
	got := s.headers(h)
	if fmt.Sprint(h) != fmt.Sprint(orig) {
		t.Error("scrubbing changed the live header map")
	}
	for _, k := range []string{"Authorization", "X-Api-Key", "Api-Key", "Cookie", "X-Goog-Api-Key"} {
		if _, ok := got[k]; ok {
			t.Errorf("header %s kept", k)
		}
	}
	if got.Get("Content-Type") != "application/json" || got.Get("Openai-Project") != "p" {
		t.Errorf("harmless headers lost: %v", got)
	}
	if v := got.Get("X-Note"); strings.Contains(v, "sk-abc") || strings.Contains(v, "hunter2") {
		t.Errorf("credential text kept in %q", v)
	}
	u := s.rawURL("https://user:pw@api.example.com/v1/x?api_key=abc&key=def&access-token=ghi&model=m")
	for _, bad := range []string{"abc", "def", "ghi", "pw"} {
		if strings.Contains(u, "="+bad) || strings.Contains(u, ":"+bad+"@") {
			t.Errorf("URL keeps %q: %s", bad, u)
		}
	}
	if !strings.Contains(u, "model=m") {
		t.Errorf("URL lost model=m: %s", u)
	}
	body := s.Body(`{"model":"m","apiKey":"abc","auth":{"token":"def","kind":"x"},"messages":[{"content":"keep me"}],"secret":null}`)
	for _, bad := range []string{"abc", "def"} {
		if strings.Contains(body, bad) {
			t.Errorf("body keeps %q: %s", bad, body)
		}
	}
	if !strings.Contains(body, "keep me") || !strings.Contains(body, `"kind":"x"`) {
		t.Errorf("body lost content: %s", body)
	}
	untouched := `{"b": 1,  "a": "no secrets here"}`
	if s.Body(untouched) != untouched {
		t.Errorf("a body without credentials was rewritten: %s", s.Body(untouched))
	}
}
