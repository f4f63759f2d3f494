package replay

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/pmezard/go-difflib/difflib"
	vcr "gopkg.in/dnaeon/go-vcr.v3/cassette"

	"github.com/todoharness/todoharness/harness/llm/cassette/scrub"
	"github.com/todoharness/todoharness/internal/jsonx"
)

// VolatileFields returns the top-level request body fields left out of
// matching: they identify the caller or frame the transport, not what the
// model is asked.
func VolatileFields() []string { return []string{"user", "metadata", "stream_options"} }

// datePattern is a calendar date: an agent that writes today's date into
// its prompt still matches its recording on another day.
var datePattern = regexp.MustCompile(`\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b`)

// canonical is a request reduced to what matching looks at.
type canonical struct {
	method string
	path   string
	body   string // compact canonical JSON, or the raw body when not JSON
	pretty string // indented canonical JSON, for diffs
}

func (c canonical) equal(o canonical) bool {
	return c.method == o.method && c.path == o.path && c.body == o.body
}

// text is the request as a diff shows it.
func (c canonical) text() string {
	return c.method + " " + c.path + "\n" + c.pretty + "\n"
}

// canonicalize reduces a request to its canonical form. The body is scrubbed
// exactly as a saved cassette's is, so a live request matches its own
// recording.
//
// secrets are known secret values (a replay given the keys of the run):
// scrubbed from the live request as the recording scrubbed them, so the
// request matches, and no diff of it ever shows one.
func canonicalize(method, rawURL, body string, secrets ...string) canonical {
	c := canonical{method: strings.ToUpper(method), path: rawURL}
	if u, err := url.Parse(rawURL); err == nil {
		c.path = u.EscapedPath()
	}
	scrubbed := datePattern.ReplaceAllString(scrub.New(secrets).Body(body), "{{date}}")
	v, err := jsonx.Decode([]byte(scrubbed))
	if err != nil {
		c.body, c.pretty = scrubbed, scrubbed
		return c
	}
	if m, ok := v.(map[string]any); ok {
		for _, f := range VolatileFields() {
			delete(m, f)
		}
	}
	compact, err1 := jsonx.Marshal(v)
	pretty, err2 := jsonx.MarshalIndent(v)
	if err1 != nil || err2 != nil {
		c.body, c.pretty = scrubbed, scrubbed
		return c
	}
	c.body, c.pretty = string(compact), string(pretty)
	return c
}

func canonicalizeRecorded(r vcr.Request) canonical {
	return canonicalize(r.Method, r.URL, r.Body)
}

// readBody reads a request body and puts an identical one back.
func readBody(req *http.Request) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody {
		return nil, nil
	}
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("read request body: %w", err)
	}
	req.Body = io.NopCloser(bytes.NewReader(b))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return b, nil
}

// MissError is a request that no recorded interaction matches. Diff is a
// unified diff from the nearest recorded request (by canonical form) to the
// request made.
type MissError struct {
	Cassette string
	// Request is the 1-based number of the request in this replay.
	Request int
	Method  string
	Path    string
	// Nearest is the index of the nearest recorded interaction, -1 when the
	// cassette has none.
	Nearest         int
	NearestReplayed bool
	Diff            string
}

func (e *MissError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "cassette miss: %s: no recorded interaction matches request %d (%s %s); "+
		"requests match on method + path + canonical JSON body (volatile fields %s left out), each recorded interaction replays once",
		e.Cassette, e.Request, e.Method, e.Path, strings.Join(VolatileFields(), ", "))
	if e.Nearest < 0 {
		b.WriteString("; the cassette has no interactions")
		return b.String()
	}
	state := "not yet replayed"
	if e.NearestReplayed {
		state = "already replayed"
	}
	fmt.Fprintf(&b, "\nnearest recorded request: interaction %d (%s); diff from it to the request made:\n%s", e.Nearest, state, e.Diff)
	return b.String()
}

// nearest finds the recorded request closest to req: fewest differing lines
// of canonical text, preferring interactions not yet replayed on a tie.
func nearest(req canonical, recorded []canonical, replayed []bool) (idx int, diff string) {
	idx = -1
	best := -1
	a := difflib.SplitLines(req.text())
	for i, r := range recorded {
		m := difflib.NewMatcher(difflib.SplitLines(r.text()), a)
		d := 0
		for _, op := range m.GetOpCodes() {
			if op.Tag != 'e' {
				d += max(op.I2-op.I1, op.J2-op.J1)
			}
		}
		if best < 0 || d < best || (d == best && replayed[idx] && !replayed[i]) {
			best, idx = d, i
		}
	}
	if idx < 0 {
		return idx, ""
	}
	ud := difflib.UnifiedDiff{
		A: difflib.SplitLines(recorded[idx].text()), B: a,
		FromFile: fmt.Sprintf("recorded interaction %d", idx), ToFile: "request made",
		Context: 3,
	}
	diff, err := difflib.GetUnifiedDiffString(ud)
	if err != nil {
		diff = err.Error()
	}
	if diff == "" {
		diff = "(no difference in the canonical form: the recorded interaction was already replayed)\n"
	}
	return idx, diff
}
