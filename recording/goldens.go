package recording

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/todoharness/todoharness/harness/acp/transcript"
	"net/url"
	"regexp"
	"strings"

	vcr "gopkg.in/dnaeon/go-vcr.v3/cassette"

	"github.com/todoharness/todoharness/internal/jsonx"
	"github.com/todoharness/todoharness/mockmodel"
)

// PlanLines keeps the plan notifications of a normalised ACP transcript,
// one compact JSON object per line with sorted keys: v1's plan, and the
// plan operations of v1's draft and of v2 (plan_update, plan_removed).
func PlanLines(lines [][]byte) ([]byte, error) {
	var out bytes.Buffer
	for n, l := range lines {
		if len(bytes.TrimSpace(l)) == 0 {
			continue
		}
		kind, _, err := transcript.UpdateKind(l)
		if err != nil {
			return nil, fmt.Errorf("ACP stdout line %d: %w", n+1, err)
		}
		switch kind {
		case "plan", "plan_update", "plan_removed":
		default:
			continue
		}
		var v any
		_ = json.Unmarshal(l, &v)
		b, err := jsonx.Marshal(v)
		if err != nil {
			return nil, err
		}
		out.Write(b)
		out.WriteByte('\n')
	}
	return out.Bytes(), nil
}

// datePattern and timePattern are the volatile parts of a prompt besides
// the run's folders.
var (
	datePattern = regexp.MustCompile(`\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b`)
	loopPattern = regexp.MustCompile(`\b127\.0\.0\.1:[0-9]+\b`)
)

// normalizeText replaces the run's cwd and home, dates and the proxy's
// address.
func normalizeText(s, cwd, home string) string {
	for _, p := range [][2]string{{cwd, "{{cwd}}"}, {home, "{{home}}"}} {
		if p[0] != "" {
			s = strings.ReplaceAll(s, p[0], p[1])
		}
	}
	s = datePattern.ReplaceAllString(s, "{{date}}")
	return loopPattern.ReplaceAllString(s, "127.0.0.1:{{port}}")
}

// Pins returns the request pins of a run: the tool definitions (name,
// description, JSON schema, in the order sent) and the system prompt of
// the first model request that offers tools (the agent loop's; side
// requests offer none), volatile parts normalised. A run whose requests
// offer no tools pins the first request.
func Pins(interactions []*vcr.Interaction, cwd, home string) (tools, system []byte, err error) {
	var first *mockmodel.Decoded
	for i, in := range interactions {
		u, perr := url.Parse(in.Request.URL)
		if perr != nil {
			return nil, nil, fmt.Errorf("interaction %d: %w", i, perr)
		}
		if mockmodel.WireOfPath(u.Path) == "" {
			continue
		}
		d, derr := mockmodel.DecodeRequest(u.Path, []byte(in.Request.Body))
		if derr != nil {
			return nil, nil, fmt.Errorf("interaction %d: %w", i, derr)
		}
		if first == nil || (len(first.Tools) == 0 && len(d.Tools) > 0) {
			d := d
			first = &d
		}
		if len(first.Tools) > 0 {
			break
		}
	}
	if first == nil {
		return []byte("[]\n"), []byte("(no model request)\n"), nil
	}
	list := make([]any, 0, len(first.Tools))
	for _, t := range first.Tools {
		var schema any = map[string]any{}
		if len(t.Parameters) > 0 {
			if err := json.Unmarshal(t.Parameters, &schema); err != nil {
				return nil, nil, fmt.Errorf("tool %s: schema: %w", t.Name, err)
			}
		}
		list = append(list, map[string]any{"name": t.Name, "description": t.Description, "parameters": schema})
	}
	b, err := jsonx.MarshalIndent(list)
	if err != nil {
		return nil, nil, err
	}
	tools = []byte(normalizeText(string(b), cwd, home) + "\n")
	sys := first.System
	if strings.TrimSpace(sys) == "" {
		sys = "(no system prompt)"
	}
	system = []byte(strings.TrimRight(normalizeText(sys, cwd, home), "\n") + "\n")
	return tools, system, nil
}
