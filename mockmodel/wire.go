package mockmodel

import (
	"net/http"
	"strings"
)

// wire is one model API the server speaks: its name and description, its
// routes, its request decoder, its answers (the handlers of its routes)
// and its error shape, all in one value made in its own wire_<name>.go.
// Everything else that knows about wires (the server's routes and the
// shape of a 404, WireOfPath, DecodeRequest, Wires for the presets and the
// CLI) is derived from the list wires returns.
type wire interface {
	// info says what the rest of the harness knows of it (Wires).
	info() WireInfo
	routes() []route
	// owns reports whether a request path is one of the API's model
	// requests, also under a base path (/openai/v1/chat/completions):
	// WireOfPath.
	owns(path string) bool
	// looksLike reports whether a request to an unknown endpoint looks
	// meant for this API (by its path or its SDK's headers): the 404 is
	// answered in its error shape.
	looksLike(r *http.Request) bool
	// decode reads the body of a model request sent to path into the
	// canonical request (DecodeRequest).
	decode(path string, body []byte) (request, error)
	// writeError answers e in the API's own error shape.
	writeError(w http.ResponseWriter, e *RequestError)
}

type route struct {
	method string
	// path is a ServeMux pattern (a trailing slash matches a subtree).
	path string
	// suffix completes path in the list of served endpoints of a 404.
	suffix string
	handle func(s *Server, w http.ResponseWriter, r *http.Request)
}

// wires returns the APIs the server speaks, each with its own paths. The
// first is the fallback error shape of an unknown endpoint.
func wires() []wire {
	return []wire{openAIChat{}, openAIResponses{}, anthropicMessages{}, gemini{}}
}

// WireInfo is what the harness outside the mock knows of one of its wires.
type WireInfo struct {
	// Name is the JournalEntry.Wire of its requests and a preset's Wire
	// (WireOpenAIChat, ...).
	Name string
	// Flag names it for `record --wire` and in a cassette's provenance.
	Flag string
	// API is the API's own name ("OpenAI chat completions").
	API string
	// Client names the clients that speak it ("OpenAI": "OpenAI clients").
	Client string
	// Serves lists its endpoints for a person (`mock serve --help`).
	Serves string
	// Endpoint is the request an agent sends, templated with the
	// conform template variables: {{.BaseURL}} (with /v1) or {{.URL}}
	// (without).
	Endpoint string
}

// WithoutV1 reports whether the wire's clients take the mock's URL without
// /v1 ({{.URL}}) as their base.
func (i WireInfo) WithoutV1() bool { return strings.Contains(i.Endpoint, "{{.URL}}") }

// Wires describes the APIs the mock server speaks, in a fixed order.
func Wires() []WireInfo {
	var out []WireInfo
	for _, w := range wires() {
		out = append(out, w.info())
	}
	return out
}

// WireNamed returns the wire whose Name is name.
func WireNamed(name string) (WireInfo, bool) {
	for _, w := range wires() {
		if i := w.info(); i.Name == name {
			return i, true
		}
	}
	return WireInfo{}, false
}

// WireOfPath names the wire a request path belongs to (WireOpenAIChat, ...),
// "" for a path no wire serves. A base path before the API's own path
// (/openai/v1/chat/completions) is allowed.
func WireOfPath(path string) string {
	if w := wireOfPath(path); w != nil {
		return w.info().Name
	}
	return ""
}

func wireOfPath(path string) wire {
	for _, w := range wires() {
		if w.owns(path) {
			return w
		}
	}
	return nil
}

// guessWire picks the error shape for a request on an unknown endpoint:
// the last wire it looks meant for (a later wire's guess is the more
// specific: Gemini's and Anthropic's SDK headers before the Responses
// path), else the first wire's (OpenAI).
func guessWire(r *http.Request) wire {
	ws := wires()
	for i := len(ws) - 1; i > 0; i-- {
		if ws[i].looksLike(r) {
			return ws[i]
		}
	}
	return ws[0]
}
