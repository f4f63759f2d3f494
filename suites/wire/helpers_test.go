package wire

import (
	"context"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/mockmodel"
)

// The conversation every driver sends: a system prompt, a user prompt,
// one tool offered; then the first turn back with the result of its tool
// call.
const (
	systemPrompt = "You are a planning agent."
	userPrompt   = "Plan two todos."
	toolName     = "todo_write"
	toolDesc     = "Write the COMPLETE task list."
	scriptFile   = "testdata/todo.yaml"
	// wantArgs is the first turn's tool-call arguments, as the script
	// renders them.
	wantArgs = `{"todos":[{"content":"read the code ✓","status":"in_progress"},{"content":"write the fix","status":"pending"}]}`
	// okResult is a successful tool result: the second turn's expect
	// (lastIsError: true, lastContains: duplicate content) refuses it.
	okResult = "Updated todo list: 1 pending, 1 in progress, 0 completed."
	// errMessage is the failed tool result; prefix wires send it after
	// "Error: ", flag wires as is with their error marker.
	errMessage = `invalid todos: duplicate content "read the code ✓"`
)

// todoSchema is the JSON Schema of the tool's arguments.
func todoSchema() map[string]any {
	return map[string]any{
		"type":     "object",
		"required": []any{"todos"},
		"properties": map[string]any{
			"todos": map[string]any{"type": "array", "items": map[string]any{"type": "object"}},
		},
	}
}

const todoSchemaJSON = `{"type":"object","required":["todos"],"properties":{"todos":{"type":"array","items":{"type":"object"}}}}`

// call is one tool call as an SDK returned it.
type call struct {
	id, name, args string
}

// reply is what an SDK gave back for one request, in neutral terms.
type reply struct {
	reasoning string
	text      string
	calls     []call
	// usage holds the SDK's own usage fields, by their wire names.
	usage map[string]int64
	// stop is the SDK's own stop reason (or response status).
	stop string
	// Streaming only: events received, events carrying a piece of text,
	// events carrying a piece of tool-call arguments, events carrying a
	// whole tool call.
	events, textDeltas, argDeltas, callEvents int
	// native is the SDK's own value for the assistant turn, to send back.
	native any
}

// apiErr is an SDK's typed error, read back.
type apiErr struct {
	status  int
	message string
	// kind is the API's error-type field: OpenAI error.type, Anthropic
	// error.type, Gemini error.status.
	kind string
	// code is the mock's error code where the shape has one: OpenAI
	// error.code, Anthropic error.details.error_code, Gemini the reason of
	// its ErrorInfo detail.
	code string
}

// driver sends the conversation through one official SDK.
type driver interface {
	// send posts the prompt, and, when prior is not nil, prior's assistant
	// turn followed by the result of its first tool call (an error when
	// isError).
	send(ctx context.Context, stream bool, prior *reply, isError bool) (reply, error)
	// apiError reads err as the SDK's typed API error.
	apiError(err error) (apiErr, bool)
}

// wireCase is one wire format and what its SDK should see.
type wireCase struct {
	name       string
	wire       string // JournalEntry.Wire
	path       string // JournalEntry.Path
	streamPath string // JournalEntry.Path when streaming, if not path
	toolErrors string // JournalEntry.ToolErrors
	newDriver  func(srv *mockmodel.Server) (driver, error)
	// usage is the first turn's usage in the SDK's fields.
	usage map[string]int64
	// stop is the SDK's stop reason for the tool-call turn and the text
	// turn.
	stop [2]string
	// streamsArgs: the API streams tool-call arguments in pieces (all but
	// Gemini, which sends each call whole in one event).
	streamsArgs bool
	// sendsReasoningBack: the SDK's own history value carries the
	// reasoning, so the journal's assistant message has it.
	sendsReasoningBack bool
	// errorText is the canonical text of the failed tool result it sends.
	errorText string
	// kinds are the error-type fields of a failed expect (422) and of a
	// request past the end of the script (410).
	kinds [2]string
	// printsMessage: the SDK's err.Error() includes the API's message
	// (openai-go prints only the status, by design, and keeps the message
	// in Error.Message).
	printsMessage bool
}

// ctx is a per-spec context that times out, so a bug fails instead of
// hanging the suite.
func ctx() context.Context {
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	DeferCleanup(cancel)
	return c
}

// startServer plays the wire script on 127.0.0.1 until the spec ends.
func startServer() *mockmodel.Server {
	s, err := mockmodel.LoadScript(scriptFile)
	Expect(err).NotTo(HaveOccurred())
	srv := mockmodel.NewServer(s)
	DeferCleanup(srv.Close)
	Expect(srv.URL).To(HavePrefix("http://127.0.0.1:"))
	return srv
}

// resultText is the tool result a prefix wire sends.
func resultText(isError bool) string {
	if isError {
		return "Error: " + errMessage
	}
	return okResult
}

// pathFor is the path the SDK posts to.
func (wc wireCase) pathFor(stream bool) string {
	if stream && wc.streamPath != "" {
		return wc.streamPath
	}
	return wc.path
}
