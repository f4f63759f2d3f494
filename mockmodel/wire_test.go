package mockmodel

import (
	"net/http/httptest"
	"strings"
	"testing"
)

// modelPath is a request path of r that a model request is sent to: the
// route's pattern completed with its suffix's first form.
func modelPath(r route) string {
	p := r.path
	if r.suffix != "" {
		s, _, _ := strings.Cut(r.suffix, "|")
		p += strings.ReplaceAll(s, "{model}", "m")
	}
	return p
}

// Every wire is one consistent value: its name, flag and description are
// set and its own, the paths of its routes are its (WireOfPath, the 404's
// guess) and no other wire's, and the endpoint the presets name is one it
// owns. A wire added with a piece missing fails here.
func TestEveryWireIsOneConsistentValue(t *testing.T) {
	names, flags := map[string]bool{}, map[string]bool{}
	for i, w := range wires() {
		in := w.info()
		t.Run(in.Name, func(t *testing.T) {
			if in.Name == "" || in.Flag == "" || in.API == "" || in.Client == "" || in.Serves == "" || in.Endpoint == "" {
				t.Fatalf("wires()[%d]: a field is empty: %+v", i, in)
			}
			if names[in.Name] || flags[in.Flag] {
				t.Fatalf("wires()[%d]: name %q or flag %q taken by an earlier wire", i, in.Name, in.Flag)
			}
			names[in.Name], flags[in.Flag] = true, true
			if got, ok := WireNamed(in.Name); !ok || got != in {
				t.Errorf("WireNamed(%q) = %+v, %v", in.Name, got, ok)
			}
			method, endpoint, ok := strings.Cut(in.Endpoint, " ")
			endpoint = strings.NewReplacer("{{.BaseURL}}", "/v1", "{{.URL}}", "", "MODEL", "m").Replace(endpoint)
			if !ok || method != "POST" || WireOfPath(endpoint) != in.Name {
				t.Errorf("Endpoint %q: %s %s is not one of its paths (WireOfPath: %q)", in.Endpoint, method, endpoint, WireOfPath(endpoint))
			}
			owned := 0
			for _, r := range w.routes() {
				p := modelPath(r)
				if !strings.Contains(in.Serves, r.path) && !strings.Contains(in.Serves, strings.TrimPrefix(r.path, "/v1")) {
					t.Errorf("Serves %q does not name the route %s %s", in.Serves, r.method, r.path)
				}
				if g := guessWire(httptest.NewRequest(r.method, p+"/unknown", nil)).info().Name; g != in.Name && i > 0 {
					t.Errorf("an unknown endpoint under %s is answered in %s's error shape", p, g)
				}
				if WireOfPath(p) == "" {
					continue // not a model request (GET /v1/models, count_tokens)
				}
				owned++
				for _, other := range wires() {
					if other.owns(p) != (other.info().Name == in.Name) {
						t.Errorf("%s: owned by %s: %v", p, other.info().Name, other.owns(p))
					}
				}
				if _, err := DecodeRequest(p, []byte(`{}`)); err != nil && strings.Contains(err.Error(), "not a model API path") {
					t.Errorf("DecodeRequest(%s): %v", p, err)
				}
			}
			if owned == 0 {
				t.Errorf("no route of %s takes a model request", in.Name)
			}
		})
	}
	if got := guessWire(httptest.NewRequest("POST", "/nowhere", nil)).info().Name; got != wires()[0].info().Name {
		t.Errorf("an unknown endpoint nothing claims gets %s's error shape, want the first wire's", got)
	}
}

// The 404's error shape follows the SDK's headers before the path, as it
// did when the guess was one switch.
func TestGuessWireByHeaders(t *testing.T) {
	for _, tc := range []struct{ path, header, want string }{
		{"/v1/responses/x", "x-goog-api-key", WireGemini},
		{"/v1/responses/x", "anthropic-version", WireAnthropic},
		{"/v1/responses/x", "", WireOpenAIResponses},
		{"/v2/x", "", WireOpenAIChat},
	} {
		r := httptest.NewRequest("POST", tc.path, nil)
		if tc.header != "" {
			r.Header.Set(tc.header, "k")
		}
		if got := guessWire(r).info().Name; got != tc.want {
			t.Errorf("%s with header %q: %s's error shape, want %s's", tc.path, tc.header, got, tc.want)
		}
	}
}
