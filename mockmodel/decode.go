package mockmodel

import (
	"fmt"
	"strings"

	"github.com/todoharness/todoharness/harness/llm"
)

// Decoded is one model request in the canonical form the journal keeps,
// whichever of the four wires it came on.
type Decoded struct {
	Wire     string
	Model    string
	Stream   bool
	System   string
	Messages []llm.Message
	Tools    []llm.ToolSpec
}

// WireOfPath names the wire a request path belongs to (WireOpenAIChat, ...),
// "" for a path no wire serves. A base path before the API's own path
// (/openai/v1/chat/completions) is allowed.
func WireOfPath(path string) string {
	switch {
	case strings.HasSuffix(path, "/chat/completions"):
		return WireOpenAIChat
	case strings.HasSuffix(path, "/responses"):
		return WireOpenAIResponses
	case strings.HasSuffix(path, "/messages"):
		return WireAnthropic
	case strings.Contains(path, "/models/") && (strings.HasSuffix(path, ":generateContent") || strings.HasSuffix(path, ":streamGenerateContent")):
		return WireGemini
	}
	return ""
}

// DecodeRequest reads the body of a request sent to path the way the mock
// server reads it, for tools that look at recorded requests (the tool
// definitions and system prompt an agent sends). The Gemini model comes from
// the path.
func DecodeRequest(path string, body []byte) (Decoded, error) {
	var (
		req request
		err error
	)
	w := WireOfPath(path)
	switch w {
	case WireOpenAIChat:
		_, req, err = decodeOpenAIChat(body)
	case WireOpenAIResponses:
		req, err = decodeOpenAIResponses(body)
	case WireAnthropic:
		req, err = decodeAnthropic(body)
	case WireGemini:
		req, err = decodeGemini(body)
		if err == nil {
			m := path[strings.LastIndex(path, "/models/")+len("/models/"):]
			req.model, _, _ = strings.Cut(m, ":")
		}
	default:
		return Decoded{}, fmt.Errorf("mockmodel: %s is not a model API path (want …/chat/completions, …/responses, …/messages or …/models/M:generateContent)", path)
	}
	if err != nil {
		return Decoded{}, fmt.Errorf("mockmodel: %s request to %s: %w", w, path, err)
	}
	return Decoded{Wire: w, Model: req.model, Stream: req.stream, System: req.system, Messages: req.messages, Tools: req.tools}, nil
}
