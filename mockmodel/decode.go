package mockmodel

import (
	"fmt"
	"strings"

	"github.com/todoharness/todoharness/harness/llm"
)

// Decoded is one model request in the canonical form the journal keeps,
// whichever wire it came on.
type Decoded struct {
	Wire     string
	Model    string
	Stream   bool
	System   string
	Messages []llm.Message
	Tools    []llm.ToolSpec
}

// DecodeRequest reads the body of a request sent to path the way the mock
// server reads it, for tools that look at recorded requests (the tool
// definitions and system prompt an agent sends). The Gemini model comes from
// the path.
func DecodeRequest(path string, body []byte) (Decoded, error) {
	w := wireOfPath(path)
	if w == nil {
		var want []string
		for _, w := range wires() {
			want = append(want, w.info().API)
		}
		return Decoded{}, fmt.Errorf("mockmodel: %s is not a model API path (want a path of %s)", path, strings.Join(want, ", "))
	}
	req, err := w.decode(path, body)
	if err != nil {
		return Decoded{}, fmt.Errorf("mockmodel: %s request to %s: %w", w.info().Name, path, err)
	}
	return Decoded{Wire: w.info().Name, Model: req.model, Stream: req.stream, System: req.system, Messages: req.messages, Tools: req.tools}, nil
}
