package replay

import (
	"errors"
	"testing"

	"github.com/todoharness/todoharness/harness/llm/cassette"
)

// fuzzCassette is a small valid cassette (two interactions) to start from.
const fuzzCassette = `provenance:
    source: mock-server
    realModelOutput: false
    description: fuzz seed
    apiHost: 127.0.0.1:1
    baseURL: http://127.0.0.1:1/v1
    model: m
    recordedAt: "2026-11-30T03:07:05Z"
    toolVersion: todoharness (devel)
    scenario: fuzz
version: 2
interactions:
    - id: 0
      request:
        body: '{"messages":[{"content":"go","role":"user"}],"model":"m","stream":true,"user":"u1"}'
        url: http://127.0.0.1:1/v1/chat/completions
        method: POST
      response:
        body: "data: [DONE]\n\n"
        code: 200
    - id: 1
      request:
        body: 'not json, Authorization: Bearer sk-abcdefabcdefabcdefabcdef'
        url: http://127.0.0.1:1/v1/chat/completions?x=1
        method: post
      response:
        body: "{}"
        code: 400
`

// FuzzCassette: any file loads to a cassette or to a *CorruptError naming
// it; every recorded request matches itself, and the nearest recorded
// request to any request is a real one, at distance zero when it matches.
func FuzzCassette(f *testing.F) {
	f.Add([]byte(fuzzCassette), "POST", "http://127.0.0.1:1/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"go"}],"stream":true}`)
	f.Add([]byte("version: 2\ninteractions: []\n"), "GET", "/", "")
	f.Add([]byte(""), "POST", "%zz", "{")
	f.Fuzz(func(t *testing.T, data []byte, method, url, body string) {
		file, err := cassette.Parse(data, "fuzz.yaml")
		if err != nil {
			var ce *cassette.CorruptError
			if !errors.As(err, &ce) || ce.Path != "fuzz.yaml" {
				t.Fatalf("not a *CorruptError naming the file: %v", err)
			}
			return
		}
		var recorded []canonical
		for n, i := range file.Interactions {
			c := canonicalizeRecorded(i.Request)
			if !c.equal(canonicalizeRecorded(i.Request)) {
				t.Fatalf("interaction %d does not match itself", n)
			}
			recorded = append(recorded, c)
		}
		replayed := make([]bool, len(recorded))
		for n, c := range recorded {
			idx, _ := nearest(c, recorded, replayed)
			if idx < 0 || !recorded[idx].equal(c) {
				t.Fatalf("interaction %d: the nearest recorded request is %d, not an equal one", n, idx)
			}
		}
		req := canonicalize(method, url, body)
		idx, diff := nearest(req, recorded, replayed)
		if idx < 0 || idx >= len(recorded) || diff == "" {
			t.Fatalf("nearest to a request: %d of %d, diff %q", idx, len(recorded), diff)
		}
	})
}
