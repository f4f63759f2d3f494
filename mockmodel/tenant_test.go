package mockmodel

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// post sends one chat request with these user and assistant messages
// (alternating, user first) and returns the status and body.
func post(t *testing.T, srv *Server, texts ...string) (int, string) {
	t.Helper()
	var msgs []map[string]any
	for i, text := range texts {
		role := "user"
		if i%2 == 1 {
			role = "assistant"
		}
		msgs = append(msgs, map[string]any{"role": role, "content": text})
	}
	body, _ := json.Marshal(map[string]any{"model": "m", "messages": msgs,
		"tools": []any{map[string]any{"type": "function", "function": map[string]any{"name": "t", "parameters": map[string]any{"type": "object"}}}}})
	resp, err := srv.Client().Post(srv.BaseURL()+"/chat/completions", "application/json", strings.NewReader(string(body)))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func script(t *testing.T, yaml, name string) *Script {
	t.Helper()
	s, err := ParseScript([]byte(yaml), name)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// A pooled server answers each request from the script of the scenario
// whose marker its user messages carry, in the first request and in every
// later one of the conversation, each scenario on its own turns; each
// tenant journals its own requests.
func TestPooledServerAnswersEachScenarioFromItsScript(t *testing.T) {
	srv := NewPooledServer()
	defer srv.Close()
	a, err := srv.AddTenant("[scenario a]", script(t, "- text: a one\n- text: a two\n", "a.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := srv.AddTenant("[scenario b]", nil) // its script comes later
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Play(script(t, "- text: b one\n", "b.yaml")); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		texts []string
		want  string
	}{
		{[]string{"do x [scenario a]"}, "a one"},
		{[]string{"do y [scenario b]"}, "b one"},
		{[]string{"do x [scenario a]", "a one", "go on"}, "a two"},
	} {
		if code, body := post(t, srv, tc.texts...); code != http.StatusOK || !strings.Contains(body, tc.want) {
			t.Errorf("%q: %d %s, want %q", tc.texts, code, body, tc.want)
		}
	}
	if na, nb, ns := a.Journal().Len(), b.Journal().Len(), srv.Journal().Len(); na != 2 || nb != 1 || ns != 0 {
		t.Errorf("journals: a %d, b %d, the server's own %d; want 2, 1, 0", na, nb, ns)
	}
	if act := a.Activity(); act.Requests != 2 || act.Taken != 2 || act.InFlight != 0 || act.Failed != 0 {
		t.Errorf("a's activity: %+v", act)
	}
}

// A request that carries no scenario's marker, or the markers of two, is
// refused, never answered from a guess: the error names what it carried
// and quotes its user messages, and it is journaled in the server's own
// journal, not a tenant's.
func TestPooledServerRefusesARequestItCannotAttribute(t *testing.T) {
	srv := NewPooledServer()
	defer srv.Close()
	a, _ := srv.AddTenant("[scenario a]", script(t, "- text: a one\n", "a.yaml"))
	b, _ := srv.AddTenant("[scenario b]", script(t, "- text: b one\n", "b.yaml"))
	for _, tc := range []struct {
		texts []string
		want  []string
	}{
		{[]string{"no marker here"}, []string{"no scenario's marker", `"no marker here"`}},
		{[]string{"both [scenario a] and [scenario b]"}, []string{"the markers of 2 scenarios ([scenario a], [scenario b])"}},
		// A marker in an assistant message is not the user's text.
		{[]string{"plain", "[scenario a]", "again"}, []string{"no scenario's marker", `"plain"`, `"again"`}},
	} {
		code, body := post(t, srv, tc.texts...)
		if code != http.StatusBadRequest || !strings.Contains(body, CodeUnattributed) {
			t.Errorf("%q: %d %s, want 400 %s", tc.texts, code, body, CodeUnattributed)
		}
		for _, w := range tc.want {
			if !strings.Contains(body, strings.ReplaceAll(w, `"`, `\"`)) {
				t.Errorf("%q: the error %s does not say %s", tc.texts, body, w)
			}
		}
	}
	if na, nb := a.Journal().Len(), b.Journal().Len(); na != 0 || nb != 0 {
		t.Errorf("tenants journaled %d and %d requests they were not sent", na, nb)
	}
	if errs := srv.Journal().Errors(); len(errs) != 3 {
		t.Errorf("the server's journal has %d errors, want 3", len(errs))
	}
}

// A marker that another contains, or that contains another, is refused:
// no request could be told apart; so is one on a server that is not
// pooled.
func TestAddTenantRefusesMarkersThatOverlap(t *testing.T) {
	srv := NewPooledServer()
	defer srv.Close()
	if _, err := srv.AddTenant("[scenario load]", nil); err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"[scenario load]", "scenario load", "[scenario load] 2", " "} {
		if _, err := srv.AddTenant(m, nil); err == nil {
			t.Errorf("marker %q was accepted", m)
		}
	}
	plain := NewServer(nil)
	defer plain.Close()
	if _, err := plain.AddTenant("[scenario x]", nil); err == nil || !strings.Contains(err.Error(), "not pooled") {
		t.Errorf("AddTenant on a server that is not pooled: %v", err)
	}
}
