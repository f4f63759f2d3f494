package mock

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/mockmodel"
)

// The wire formats on the raw HTTP level: event sequences, request
// decoding into the canonical journal, error shapes and faults. The
// official SDKs drive the same server in suites/wire.

type sseEvent struct {
	name string
	data string
}

// sseNamed splits an SSE body into events (event: and data: lines; \n or
// \r\n line ends).
func sseNamed(body []byte) []sseEvent {
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		switch {
		case line == "":
			if cur.data != "" {
				out = append(out, cur)
			}
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data = strings.TrimPrefix(line, "data: ")
		}
	}
	if cur.data != "" {
		out = append(out, cur)
	}
	return out
}

func names(evs []sseEvent) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.name
	}
	return out
}

// postWith sends a raw body with extra headers; it returns the response
// (body read) for header checks.
func postWith(srv *mockmodel.Server, path, body string, header map[string]string) (*http.Response, []byte) {
	req, err := http.NewRequestWithContext(ctx(), http.MethodPost, srv.URL+path, strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := srv.Client().Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	Expect(err).NotTo(HaveOccurred())
	return res, b
}

const (
	responsesBody = `{"model":"m","stream":%s,"instructions":"Be brief.","input":[{"role":"user","content":"go"}],
		"tools":[{"type":"function","name":"todo_write","description":"d","parameters":{"type":"object"}}]}`
	anthropicBody = `{"model":"m","max_tokens":10,"stream":%s,"system":"Be brief.","messages":[{"role":"user","content":"go"}],
		"tools":[{"name":"todo_write","description":"d","input_schema":{"type":"object"}}]}`
	geminiBody = `{"systemInstruction":{"parts":[{"text":"Be brief."}]},"contents":[{"role":"user","parts":[{"text":"go"}]}],
		"tools":[{"functionDeclarations":[{"name":"todo_write","description":"d","parameters":{"type":"object"}}]}]}`
)

func withStream(body string, stream bool) string {
	return strings.Replace(body, "%s", map[bool]string{true: "true", false: "false"}[stream], 1)
}

var _ = Describe("wire formats", func() {
	Describe("OpenAI Responses", func() {
		It("streams a turn as response.* events: items added, deltas, done, completed with usage", func() {
			srv := startServer(mustParse(vocabScript, "vocab.yaml"))
			res, body := postWith(srv, "/v1/responses", withStream(responsesBody, true), nil)
			Expect(res.StatusCode).To(Equal(200))
			Expect(res.Header.Get("Content-Type")).To(Equal("text/event-stream"))
			evs := sseNamed(body)
			Expect(names(evs)).To(Equal([]string{
				"response.created", "response.in_progress",
				"response.output_item.added", "response.reasoning_summary_part.added",
				"response.reasoning_summary_text.delta", "response.reasoning_summary_text.delta", "response.reasoning_summary_text.delta",
				"response.reasoning_summary_text.done", "response.reasoning_summary_part.done", "response.output_item.done",
				"response.output_item.added", "response.content_part.added",
				"response.output_text.delta", "response.output_text.delta",
				"response.output_text.done", "response.content_part.done", "response.output_item.done",
				"response.output_item.added",
				"response.function_call_arguments.delta", "response.function_call_arguments.delta", "response.function_call_arguments.delta",
				"response.function_call_arguments.done", "response.output_item.done",
				"response.completed",
			}))
			for i, e := range evs {
				var v struct {
					Type string `json:"type"`
					Seq  int    `json:"sequence_number"`
				}
				Expect(json.Unmarshal([]byte(e.data), &v)).To(Succeed())
				Expect(v.Type).To(Equal(e.name), "the data's type is the event name")
				Expect(v.Seq).To(Equal(i))
			}
			Expect(evs[2].data).To(MatchJSON(`{"type":"response.output_item.added","sequence_number":2,"output_index":0,
				"item":{"id":"rs_mock_1_0","type":"reasoning","summary":[]}}`))
			Expect(evs[4].data).To(MatchJSON(`{"type":"response.reasoning_summary_text.delta","sequence_number":4,
				"item_id":"rs_mock_1_0","output_index":0,"summary_index":0,"delta":"Plan"}`))
			Expect(evs[13].data).To(MatchJSON(`{"type":"response.output_text.delta","sequence_number":13,
				"item_id":"msg_mock_1_1","output_index":1,"content_index":0,"delta":" it.","logprobs":[]}`))
			Expect(evs[17].data).To(MatchJSON(`{"type":"response.output_item.added","sequence_number":17,"output_index":2,
				"item":{"id":"fc_mock_1_2","type":"function_call","status":"in_progress","call_id":"call_1","name":"todo_write","arguments":""}}`))
			var args string
			for _, e := range evs[18:21] {
				var d struct {
					ItemID string `json:"item_id"`
					Delta  string `json:"delta"`
				}
				Expect(json.Unmarshal([]byte(e.data), &d)).To(Succeed())
				Expect(d.ItemID).To(Equal("fc_mock_1_2"))
				args += d.Delta
			}
			Expect(args).To(Equal(`{"todos":[]}`))
			Expect(evs[21].data).To(MatchJSON(`{"type":"response.function_call_arguments.done","sequence_number":21,
				"item_id":"fc_mock_1_2","output_index":2,"arguments":"{\"todos\":[]}"}`))

			var done struct {
				Response json.RawMessage `json:"response"`
			}
			Expect(json.Unmarshal([]byte(evs[23].data), &done)).To(Succeed())
			Expect(done.Response).To(MatchJSON(`{"id":"resp_mock_1","object":"response","created_at":0,"status":"completed",
				"error":null,"incomplete_details":null,"model":"m","parallel_tool_calls":true,"tool_choice":"auto","tools":[],
				"output":[
					{"id":"rs_mock_1_0","type":"reasoning","summary":[{"type":"summary_text","text":"Plan it now."}]},
					{"id":"msg_mock_1_1","type":"message","status":"completed","role":"assistant",
						"content":[{"type":"output_text","text":"On it.","annotations":[]}]},
					{"id":"fc_mock_1_2","type":"function_call","status":"completed","call_id":"call_1","name":"todo_write","arguments":"{\"todos\":[]}"}],
				"usage":{"input_tokens":4,"input_tokens_details":{"cached_tokens":3},"output_tokens":2,
					"output_tokens_details":{"reasoning_tokens":4},"total_tokens":6}}`))
		})

		It("answers stream:false with the same response object", func() {
			srv := startServer(mustParse("- text: hi\n  finish: length\n", "r.yaml"))
			res, body := postWith(srv, "/responses", withStream(responsesBody, false), nil)
			Expect(res.StatusCode).To(Equal(200))
			Expect(body).To(MatchJSON(`{"id":"resp_mock_1","object":"response","created_at":0,"status":"incomplete",
				"error":null,"incomplete_details":{"reason":"max_output_tokens"},"model":"m","parallel_tool_calls":true,"tool_choice":"auto","tools":[],
				"output":[{"id":"msg_mock_1_0","type":"message","status":"completed","role":"assistant",
					"content":[{"type":"output_text","text":"hi","annotations":[]}]}],
				"usage":{"input_tokens":0,"input_tokens_details":{"cached_tokens":0},"output_tokens":0,
					"output_tokens_details":{"reasoning_tokens":0},"total_tokens":0}}`))
			e := srv.Journal().Entries()[0]
			Expect(e.Wire).To(Equal(mockmodel.WireOpenAIResponses))
			Expect(e.Path).To(Equal("/responses"))
		})

		It("ends a truncated stream with response.incomplete", func() {
			srv := startServer(mustParse("- text: hi\n  finish: content-filter\n", "r.yaml"))
			_, body := postWith(srv, "/v1/responses", withStream(responsesBody, true), nil)
			evs := sseNamed(body)
			Expect(evs[len(evs)-1].name).To(Equal("response.incomplete"))
			Expect(evs[len(evs)-1].data).To(ContainSubstring(`"incomplete_details":{"reason":"content_filter"}`))
		})

		It("reads input items into the canonical history", func() {
			srv := startServer(mustParse("- text: ok\n", "r.yaml"))
			res, _ := postWith(srv, "/v1/responses", `{"model":"m","instructions":"Rules.","input":[
				{"type":"message","role":"developer","content":"More rules."},
				{"role":"user","content":[{"type":"input_text","text":"plan "},{"type":"input_text","text":"it"}]},
				{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"thinking"}]},
				{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Sure."}]},
				{"type":"function_call","call_id":"call_1","name":"todo_write","arguments":"{\"todos\":[]}"},
				{"type":"function_call","call_id":"call_2","name":"shell","arguments":"{}"},
				{"type":"function_call_output","call_id":"call_1","output":"Updated todo list."},
				{"type":"function_call_output","call_id":"call_2","output":[{"type":"input_text","text":"Error: denied"}]},
				{"type":"reasoning","summary":[{"type":"summary_text","text":"again"}]},
				{"type":"custom_tool_call","call_id":"call_3","name":"apply_patch","input":"*** Begin Patch"},
				{"type":"custom_tool_call_output","call_id":"call_3","output":"Done"}],
				"tools":[{"type":"function","name":"todo_write","description":"d","parameters":{"type":"object"}},
					{"type":"custom","name":"apply_patch","description":"patch"},{"type":"web_search"}]}`, nil)
			Expect(res.StatusCode).To(Equal(200))
			e := srv.Journal().Entries()[0]
			Expect(e.System).To(Equal("Rules.\n\nMore rules."))
			Expect(e.ToolErrors).To(Equal(mockmodel.ToolErrorsPrefix))
			Expect(e.Messages).To(Equal([]llm.Message{
				{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartText, Text: "plan it"}}},
				{Role: llm.RoleAssistant, Content: []llm.Part{
					{Type: llm.PartReasoning, Text: "thinking"},
					{Type: llm.PartText, Text: "Sure."},
					{Type: llm.PartToolCall, ID: "call_1", Name: "todo_write", Arguments: `{"todos":[]}`},
					{Type: llm.PartToolCall, ID: "call_2", Name: "shell", Arguments: `{}`},
				}},
				{Role: llm.RoleTool, ToolCallID: "call_1", Content: []llm.Part{{Type: llm.PartText, Text: "Updated todo list."}}},
				{Role: llm.RoleTool, ToolCallID: "call_2", IsError: true, Content: []llm.Part{{Type: llm.PartText, Text: "Error: denied"}}},
				{Role: llm.RoleAssistant, Content: []llm.Part{
					{Type: llm.PartReasoning, Text: "again"},
					{Type: llm.PartToolCall, ID: "call_3", Name: "apply_patch", Arguments: "*** Begin Patch"},
				}},
				{Role: llm.RoleTool, ToolCallID: "call_3", Content: []llm.Part{{Type: llm.PartText, Text: "Done"}}},
			}))
			Expect(e.Tools).To(HaveLen(2))
			Expect(e.Tools[0].Name).To(Equal("todo_write"))
			Expect(e.Tools[0].Parameters).To(MatchJSON(`{"type":"object"}`))
			Expect(e.Tools[1]).To(Equal(llm.ToolSpec{Name: "apply_patch", Description: "patch"}), "a custom tool has no JSON Schema")
		})

		It("takes a plain string input as one user message", func() {
			srv := startServer(mustParse("- text: ok\n", "r.yaml"))
			res, _ := postWith(srv, "/v1/responses", `{"model":"m","input":"hello"}`, nil)
			Expect(res.StatusCode).To(Equal(200))
			Expect(srv.Journal().Entries()[0].Messages).To(Equal([]llm.Message{{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartText, Text: "hello"}}}}))
		})

		DescribeTable("refuses malformed requests with 400 in the OpenAI shape",
			func(body, want string) {
				srv := startServer(mustParse("- text: ok\n", "m.yaml"))
				res, b := postWith(srv, "/v1/responses", body, nil)
				Expect(res.StatusCode).To(Equal(400))
				e := decodeError(b)
				Expect(e.Error.Message).To(Equal("m.yaml: POST /v1/responses: request 1: " + want))
				Expect(e.Error.Code).To(Equal(mockmodel.CodeMalformed))
				Expect(res.Header.Get("x-should-retry")).To(Equal("false"))
				Expect(srv.Remaining()).To(Equal(1))
				Expect(srv.Journal().Entries()[0].Wire).To(Equal(mockmodel.WireOpenAIResponses))
			},
			Entry("no input", `{"model":"m"}`, "input: required"),
			Entry("server-side state", `{"model":"m","input":"x","previous_response_id":"resp_1"}`,
				"previous_response_id: not supported (the mock keeps no responses: send the whole conversation in input)"),
			Entry("unknown item", `{"input":[{"type":"web_search_call","id":"ws_1"}]}`,
				`input[0].type: unsupported item type "web_search_call" (the mock reads message, reasoning, function_call and function_call_output items)`),
			Entry("image", `{"input":[{"role":"user","content":[{"type":"input_image","image_url":"x"}]}]}`,
				`input[0].content: part 0: unsupported content part type "input_image" (the mock reads text parts only)`),
			Entry("output without call id", `{"input":[{"type":"function_call_output","output":"x"}]}`, "input[0].call_id: required"),
		)
	})

	Describe("Anthropic Messages", func() {
		It("streams a turn as message_start, content blocks (thinking, text, tool_use with input_json_delta), message_delta, message_stop", func() {
			srv := startServer(mustParse(vocabScript, "vocab.yaml"))
			res, body := postWith(srv, "/v1/messages", withStream(anthropicBody, true), map[string]string{"anthropic-version": "2023-06-01"})
			Expect(res.StatusCode).To(Equal(200))
			evs := sseNamed(body)
			Expect(names(evs)).To(Equal([]string{
				"message_start", "ping",
				"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
				"content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",
				"content_block_start", "content_block_delta", "content_block_delta", "content_block_delta", "content_block_stop",
				"message_delta", "message_stop",
			}))
			want := []string{
				`{"type":"message_start","message":{"id":"msg_mock_1","type":"message","role":"assistant","model":"m","content":[],
					"stop_reason":null,"stop_sequence":null,
					"usage":{"input_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":3,"output_tokens":0}}}`,
				`{"type":"ping"}`,
				`{"type":"content_block_start","index":0,"content_block":{"type":"thinking","thinking":"","signature":""}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":"Plan"}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" it"}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"thinking_delta","thinking":" now."}}`,
				`{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"todoharness-mock-signature"}}`,
				`{"type":"content_block_stop","index":0}`,
				`{"type":"content_block_start","index":1,"content_block":{"type":"text","text":""}}`,
				`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":"On"}}`,
				`{"type":"content_block_delta","index":1,"delta":{"type":"text_delta","text":" it."}}`,
				`{"type":"content_block_stop","index":1}`,
				`{"type":"content_block_start","index":2,"content_block":{"type":"tool_use","id":"call_1","name":"todo_write","input":{}}}`,
				`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"tod"}}`,
				`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"os\":["}}`,
				`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"]}"}}`,
				`{"type":"content_block_stop","index":2}`,
				`{"type":"message_delta","delta":{"stop_reason":"tool_use"},
					"usage":{"input_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":3,"output_tokens":2}}`,
				`{"type":"message_stop"}`,
			}
			for i, e := range evs {
				Expect(e.data).To(MatchJSON(want[i]), "event %d", i)
			}
		})

		It("answers stream:false with one message", func() {
			srv := startServer(mustParse(vocabScript, "vocab.yaml"))
			res, body := postWith(srv, "/v1/messages", withStream(anthropicBody, false), nil)
			Expect(res.StatusCode).To(Equal(200))
			Expect(body).To(MatchJSON(`{"id":"msg_mock_1","type":"message","role":"assistant","model":"m",
				"content":[{"type":"thinking","thinking":"Plan it now.","signature":"todoharness-mock-signature"},
					{"type":"text","text":"On it."},
					{"type":"tool_use","id":"call_1","name":"todo_write","input":{"todos":[]}}],
				"stop_reason":"tool_use","stop_sequence":null,
				"usage":{"input_tokens":1,"cache_creation_input_tokens":0,"cache_read_input_tokens":3,"output_tokens":2}}`))
		})

		It("reads content blocks into the canonical history, the error flag from is_error alone", func() {
			srv := startServer(mustParse("- text: ok\n", "a.yaml"))
			res, _ := postWith(srv, "/v1/messages", `{"model":"m","max_tokens":5,
				"system":[{"type":"text","text":"Rules."},{"type":"text","text":"More.","cache_control":{"type":"ephemeral"}}],
				"messages":[
					{"role":"user","content":[{"type":"text","text":"plan "},{"type":"text","text":"it"}]},
					{"role":"assistant","content":[{"type":"thinking","thinking":"hmm","signature":"s"},{"type":"redacted_thinking","data":"x"},
						{"type":"text","text":"Sure."},{"type":"tool_use","id":"toolu_1","name":"todo_write","input":{ "todos" : [] }},
						{"type":"tool_use","id":"toolu_2","name":"shell","input":{}}]},
					{"role":"user","content":[
						{"type":"tool_result","tool_use_id":"toolu_1","content":"Error: looks like an error, is not flagged"},
						{"type":"tool_result","tool_use_id":"toolu_2","is_error":true,"content":[{"type":"text","text":"denied"}]},
						{"type":"text","text":"go on"}]}],
				"tools":[{"name":"todo_write","description":"d","input_schema":{"type":"object"}},{"type":"web_search_20250305","name":"web_search"}]}`, nil)
			Expect(res.StatusCode).To(Equal(200))
			e := srv.Journal().Entries()[0]
			Expect(e.Wire).To(Equal(mockmodel.WireAnthropic))
			Expect(e.ToolErrors).To(Equal(mockmodel.ToolErrorsFlag))
			Expect(e.System).To(Equal("Rules.\n\nMore."))
			Expect(e.Messages).To(Equal([]llm.Message{
				{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartText, Text: "plan "}, {Type: llm.PartText, Text: "it"}}},
				{Role: llm.RoleAssistant, Content: []llm.Part{
					{Type: llm.PartReasoning, Text: "hmm"},
					{Type: llm.PartText, Text: "Sure."},
					{Type: llm.PartToolCall, ID: "toolu_1", Name: "todo_write", Arguments: `{"todos":[]}`},
					{Type: llm.PartToolCall, ID: "toolu_2", Name: "shell", Arguments: `{}`},
				}},
				{Role: llm.RoleTool, ToolCallID: "toolu_1", Content: []llm.Part{{Type: llm.PartText, Text: "Error: looks like an error, is not flagged"}}},
				{Role: llm.RoleTool, ToolCallID: "toolu_2", IsError: true, Content: []llm.Part{{Type: llm.PartText, Text: "denied"}}},
				{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartText, Text: "go on"}}},
			}))
			Expect(e.Tools).To(HaveLen(2))
			Expect(e.Tools[1].Name).To(Equal("web_search"))
			Expect(e.Tools[1].Parameters).To(BeEmpty())
		})

		It("streams malformed rawArguments as they are, but refuses them where input is an object (stream false)", func() {
			srv := startServer(mustParse("- toolCalls: [{name: t, rawArguments: '{\"a\":'}]\n- toolCalls: [{name: t, rawArguments: '{\"a\":'}]\n", "raw.yaml"))
			res, body := postWith(srv, "/v1/messages", withStream(anthropicBody, true), nil)
			Expect(res.StatusCode).To(Equal(200))
			Expect(string(body)).To(ContainSubstring(`"partial_json":"{\"a\":"`))
			res, body = postWith(srv, "/v1/messages", withStream(anthropicBody, false), nil)
			Expect(res.StatusCode).To(Equal(500))
			Expect(string(body)).To(ContainSubstring(`raw.yaml: turn 2 of 2 (line 2): cannot be answered on the anthropic-messages wire: tool call call_2: rawArguments`))
			Expect(string(body)).To(ContainSubstring(`"error_code":"mock_unsupported_on_wire"`))
		})

		DescribeTable("refuses malformed requests with 400 in the Anthropic shape",
			func(body, want string) {
				srv := startServer(mustParse("- text: ok\n", "m.yaml"))
				res, b := postWith(srv, "/v1/messages", body, nil)
				Expect(res.StatusCode).To(Equal(400))
				Expect(b).To(MatchJSON(`{"type":"error","error":{"type":"invalid_request_error",
					"message":` + jsonString("m.yaml: POST /v1/messages: request 1: "+want) + `,"details":{"error_code":"malformed_request"}}}`))
				Expect(srv.Remaining()).To(Equal(1))
			},
			Entry("no messages", `{"model":"m"}`, "messages: required"),
			Entry("system role", `{"messages":[{"role":"system","content":"x"}]}`, `messages[0].role: unknown role "system" (want user or assistant)`),
			Entry("image", `{"messages":[{"role":"user","content":[{"type":"image","source":{}}]}]}`,
				`messages[0].content[0].type: unsupported block type "image" in a user message (the mock reads text and tool_result)`),
			Entry("tool result without id", `{"messages":[{"role":"user","content":[{"type":"tool_result","content":"x"}]}]}`,
				"messages[0].content[0].tool_use_id: required"),
		)
	})

	Describe("Gemini", func() {
		It("streams a turn with alt=sse: thought parts, text parts, each tool call whole; the last event has finishReason and usage", func() {
			srv := startServer(mustParse(vocabScript, "vocab.yaml"))
			res, body := postWith(srv, "/v1beta/models/gemini-x:streamGenerateContent?alt=sse", geminiBody, map[string]string{"x-goog-api-key": "k"})
			Expect(res.StatusCode).To(Equal(200))
			Expect(res.Header.Get("Content-Type")).To(Equal("text/event-stream"))
			Expect(string(body)).To(ContainSubstring("\r\n\r\n"), "events end as Gemini's do")
			evs := sseNamed(body)
			part := func(p string) string {
				return `{"candidates":[{"content":{"role":"model","parts":[` + p + `]},"index":0}],"modelVersion":"gemini-x","responseId":"mock-1"}`
			}
			Expect(evs).To(HaveLen(6))
			Expect(evs[0].data).To(MatchJSON(part(`{"text":"Plan","thought":true}`)))
			Expect(evs[2].data).To(MatchJSON(part(`{"text":" now.","thought":true}`)))
			Expect(evs[3].data).To(MatchJSON(part(`{"text":"On"}`)))
			Expect(evs[4].data).To(MatchJSON(part(`{"text":" it."}`)))
			Expect(evs[5].data).To(MatchJSON(`{"candidates":[{"content":{"role":"model","parts":[
				{"functionCall":{"id":"call_1","name":"todo_write","args":{"todos":[]}}}]},"finishReason":"STOP","index":0}],
				"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":0,"cachedContentTokenCount":3,"thoughtsTokenCount":4,"totalTokenCount":8},
				"modelVersion":"gemini-x","responseId":"mock-1"}`))
			e := srv.Journal().Entries()[0]
			Expect(e.Wire).To(Equal(mockmodel.WireGemini))
			Expect(e.Model).To(Equal("gemini-x"))
			Expect(e.Stream).To(BeTrue())
			Expect(e.System).To(Equal("Be brief."))
		})

		It("streams a JSON array without alt=sse", func() {
			srv := startServer(mustParse("- text: one two\n", "g.yaml"))
			res, body := postWith(srv, "/v1beta/models/g:streamGenerateContent", geminiBody, nil)
			Expect(res.StatusCode).To(Equal(200))
			var arr []map[string]any
			Expect(json.Unmarshal(body, &arr)).To(Succeed(), string(body))
			Expect(arr).To(HaveLen(2))
			Expect(arr[1]).To(HaveKey("usageMetadata"))
		})

		It("answers generateContent with all parts in one response", func() {
			srv := startServer(mustParse(vocabScript, "vocab.yaml"))
			res, body := postWith(srv, "/v1beta/models/gemini-x:generateContent", geminiBody, nil)
			Expect(res.StatusCode).To(Equal(200))
			Expect(body).To(MatchJSON(`{"candidates":[{"content":{"role":"model","parts":[
				{"text":"Plan it now.","thought":true},{"text":"On it."},
				{"functionCall":{"id":"call_1","name":"todo_write","args":{"todos":[]}}}]},"finishReason":"STOP","index":0}],
				"usageMetadata":{"promptTokenCount":4,"candidatesTokenCount":0,"cachedContentTokenCount":3,"thoughtsTokenCount":4,"totalTokenCount":8},
				"modelVersion":"gemini-x","responseId":"mock-1"}`))
			Expect(srv.Journal().Entries()[0].Stream).To(BeFalse())
		})

		It("reads contents into the canonical history: results paired to calls by id, else by name; the error flag from response.error", func() {
			srv := startServer(mustParse("- text: ok\n", "g.yaml"))
			res, _ := postWith(srv, "/v1beta/models/g:generateContent", `{
				"contents":[
					{"role":"user","parts":[{"text":"plan it"}]},
					{"role":"model","parts":[{"text":"hmm","thought":true,"thoughtSignature":"c2ln"},{"text":"Sure."},
						{"functionCall":{"id":"call_1","name":"todo_write","args":{"todos":[]}}},
						{"functionCall":{"name":"shell","args":{"cmd":"ls"}}}]},
					{"role":"user","parts":[
						{"functionResponse":{"name":"shell","response":{"error":"denied"}}},
						{"functionResponse":{"id":"call_1","name":"todo_write","response":{"output":"Error: not flagged"}}},
						{"text":"go on"}]},
					{"role":"user","parts":[{"functionResponse":{"name":"other","response":{"n":1}}}]}],
				"tools":[{"functionDeclarations":[{"name":"todo_write","description":"d","parametersJsonSchema":{"type":"object"}}]},{"googleSearch":{}}]}`, nil)
			Expect(res.StatusCode).To(Equal(200))
			e := srv.Journal().Entries()[0]
			Expect(e.ToolErrors).To(Equal(mockmodel.ToolErrorsFlag))
			Expect(e.Messages).To(Equal([]llm.Message{
				{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartText, Text: "plan it"}}},
				{Role: llm.RoleAssistant, Content: []llm.Part{
					{Type: llm.PartReasoning, Text: "hmm"},
					{Type: llm.PartText, Text: "Sure."},
					{Type: llm.PartToolCall, ID: "call_1", Name: "todo_write", Arguments: `{"todos":[]}`},
					{Type: llm.PartToolCall, Name: "shell", Arguments: `{"cmd":"ls"}`},
				}},
				{Role: llm.RoleTool, IsError: true, Content: []llm.Part{{Type: llm.PartText, Text: "denied"}}},
				{Role: llm.RoleTool, ToolCallID: "call_1", Content: []llm.Part{{Type: llm.PartText, Text: "Error: not flagged"}}},
				{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartText, Text: "go on"}}},
				{Role: llm.RoleTool, Content: []llm.Part{{Type: llm.PartText, Text: `{"n":1}`}}},
			}))
			Expect(e.Tools).To(HaveLen(1))
			Expect(e.Tools[0].Parameters).To(MatchJSON(`{"type":"object"}`), "parametersJsonSchema counts as the schema")
		})

		It("answers an unknown model action with 404 in the Gemini shape", func() {
			srv := startServer(mustParse("- text: ok\n", "g.yaml"))
			res, b := postWith(srv, "/v1beta/models/g:countTokens", `{}`, nil)
			Expect(res.StatusCode).To(Equal(404))
			Expect(b).To(MatchJSON(`{"error":{"code":404,"status":"NOT_FOUND",
				"message":"g.yaml: unknown endpoint POST /v1beta/models/g:countTokens (served: POST /v1beta/models/{model}:generateContent, POST /v1beta/models/{model}:streamGenerateContent)",
				"details":[{"@type":"type.googleapis.com/google.rpc.ErrorInfo","reason":"not_found","domain":"todoharness-mock"}]}}`))
			Expect(srv.Remaining()).To(Equal(1))
		})

		It("refuses a turn whose rawArguments are not an object: Gemini args are one", func() {
			srv := startServer(mustParse("- toolCalls: [{name: t, rawArguments: '{\"a\":'}]\n- text: next\n", "raw.yaml"))
			res, b := postWith(srv, "/v1beta/models/g:generateContent", geminiBody, nil)
			Expect(res.StatusCode).To(Equal(500))
			Expect(res.Header.Get("x-should-retry")).To(Equal("false"), "a retry would take the next turn")
			var e struct {
				Error struct {
					Message string `json:"message"`
					Status  string `json:"status"`
				} `json:"error"`
			}
			Expect(json.Unmarshal(b, &e)).To(Succeed())
			Expect(e.Error.Status).To(Equal("INTERNAL"))
			Expect(e.Error.Message).To(Equal(`raw.yaml: turn 1 of 2 (line 1): cannot be answered on the gemini wire: ` +
				`tool call call_1: rawArguments "{\"a\":" is not a JSON object, and this wire sends arguments as an object`))
			Expect(srv.Journal().Entries()[0].Status).To(Equal(500))
			Expect(srv.Journal().Entries()[0].TurnIndex).To(Equal(0))
		})
	})

	Describe("every wire", func() {
		type wireReq struct {
			wire, path string
			body       func(stream bool) string
			end        string // what only a finished stream carries
		}
		reqs := []wireReq{
			{mockmodel.WireOpenAIChat, "/v1/chat/completions", func(s bool) string {
				return withStream(`{"model":"m","stream":%s,"messages":[{"role":"user","content":"go"}]}`, s)
			}, `"finish_reason":"tool_calls"`},
			{mockmodel.WireOpenAIResponses, "/v1/responses", func(s bool) string { return withStream(responsesBody, s) }, "response.completed"},
			{mockmodel.WireAnthropic, "/v1/messages", func(s bool) string { return withStream(anthropicBody, s) }, "message_stop"},
			{mockmodel.WireGemini, "/v1beta/models/g:generateContent", func(s bool) string { return geminiBody }, "finishReason"},
		}
		streamPath := func(r wireReq, stream bool) string {
			if stream && r.wire == mockmodel.WireGemini {
				return "/v1beta/models/g:streamGenerateContent?alt=sse"
			}
			return r.path
		}

		for _, wr := range reqs {
			It("answers an injected http-500 in its own error shape ("+wr.wire+")", func() {
				srv := startServer(mustParse("- text: x\n  fault: http-500\n", "f.yaml"))
				res, b := postWith(srv, wr.path, wr.body(false), nil)
				Expect(res.StatusCode).To(Equal(500))
				Expect(res.Header.Get("x-should-retry")).To(BeEmpty(), "a real 500 may be retried")
				Expect(string(b)).To(ContainSubstring("f.yaml: turn 1 of 1 (line 1): injected fault http-500"))
				switch wr.wire {
				case mockmodel.WireAnthropic:
					Expect(string(b)).To(ContainSubstring(`"type":"api_error"`))
				case mockmodel.WireGemini:
					Expect(string(b)).To(ContainSubstring(`"status":"INTERNAL"`))
				default:
					Expect(string(b)).To(ContainSubstring(`"type":"server_error"`))
				}
			})

			for _, stream := range []bool{true, false} {
				It("drops the connection on close-mid-stream, after part of the answer ("+wr.wire+map[bool]string{true: ", streaming", false: ""}[stream]+")", func() {
					srv := startServer(mustParse(vocabScript+"  fault: close-mid-stream\n", "close.yaml"))
					req, err := http.NewRequestWithContext(ctx(), http.MethodPost, srv.URL+streamPath(wr, stream), strings.NewReader(wr.body(stream)))
					Expect(err).NotTo(HaveOccurred())
					res, err := srv.Client().Do(req)
					Expect(err).NotTo(HaveOccurred())
					defer res.Body.Close()
					Expect(res.StatusCode).To(Equal(200))
					b, err := io.ReadAll(res.Body)
					Expect(err).To(HaveOccurred(), "the body ends early")
					Expect(errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "unexpected EOF")).To(BeTrue(), "%v", err)
					if stream {
						Expect(string(b)).To(ContainSubstring("Plan"), "the first deltas arrived")
						Expect(string(b)).NotTo(ContainSubstring(wr.end), "the answer never finished")
					}
					Expect(srv.Journal().Entries()[0].Error).To(ContainSubstring("injected fault close-mid-stream"))
				})
			}

			It("returns from a hang when the request is cancelled ("+wr.wire+")", func() {
				srv := startServer(mustParse("- text: one two three four\n  fault: hang\n", "hang.yaml"))
				c, cancel := context.WithCancel(ctx())
				req, err := http.NewRequestWithContext(c, http.MethodPost, srv.URL+streamPath(wr, true), strings.NewReader(wr.body(true)))
				Expect(err).NotTo(HaveOccurred())
				res, err := srv.Client().Do(req)
				Expect(err).NotTo(HaveOccurred())
				defer res.Body.Close()
				buf := make([]byte, 4096)
				n, err := res.Body.Read(buf)
				Expect(err).NotTo(HaveOccurred())
				Expect(string(buf[:n])).NotTo(BeEmpty())
				done := make(chan error, 1)
				go func() {
					_, err := io.ReadAll(res.Body)
					done <- err
				}()
				Consistently(done, 50*time.Millisecond).ShouldNot(Receive())
				cancel()
				Eventually(done, time.Minute).Should(Receive(HaveOccurred()))
			})
		}

		It("guesses the error shape of an unknown endpoint from its path and headers", func() {
			srv := startServer(mustParse("- text: ok\n", "m.yaml"))
			_, b := postWith(srv, "/v1/messages/batches", `{}`, nil)
			Expect(string(b)).To(ContainSubstring(`"type":"not_found_error"`))
			Expect(string(b)).To(ContainSubstring(`"type":"error"`))
			_, b = postWith(srv, "/v1/complete", `{}`, map[string]string{"anthropic-version": "2023-06-01"})
			Expect(string(b)).To(ContainSubstring(`"type":"not_found_error"`))
			_, b = postWith(srv, "/v1beta/cachedContents", `{}`, nil)
			Expect(string(b)).To(ContainSubstring(`"status":"NOT_FOUND"`))
			_, b = postWith(srv, "/v1/embeddings", `{}`, nil)
			e := decodeError(b)
			Expect(e.Error.Type).To(Equal("not_found_error"))
			Expect(e.Error.Message).To(ContainSubstring("served: POST /v1/chat/completions, POST /chat/completions, GET /v1/models, GET /models, " +
				"POST /v1/responses, POST /responses, POST /v1/messages, POST /v1/messages/count_tokens, POST /v1beta/models/{model}:generateContent|streamGenerateContent"))
		})

		It("answers a wrong method in the wire's own shape", func() {
			srv := startServer(mustParse("- text: ok\n", "m.yaml"))
			res, err := srv.Client().Get(srv.URL + "/v1/messages")
			Expect(err).NotTo(HaveOccurred())
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			Expect(res.StatusCode).To(Equal(405))
			Expect(string(b)).To(ContainSubstring(`"type":"error"`))
			Expect(srv.Journal().Entries()[0].Wire).To(Equal(mockmodel.WireAnthropic))
		})

		It("plays one script across wires, one turn per request whatever the API", func() {
			srv := startServer(mustParse("- text: a\n- text: b\n- text: c\n- text: d\n", "mixed.yaml"))
			for _, wr := range reqs {
				res, _ := postWith(srv, wr.path, wr.body(false), nil)
				Expect(res.StatusCode).To(Equal(200))
			}
			var got []string
			for _, e := range srv.Journal().Entries() {
				got = append(got, e.Wire)
			}
			Expect(got).To(Equal([]string{mockmodel.WireOpenAIChat, mockmodel.WireOpenAIResponses, mockmodel.WireAnthropic, mockmodel.WireGemini}))
		})
	})

	It("journals the in-process model as wire in-process, with the harness's own error flag", func() {
		m := mockmodel.NewModel(mustParse("- text: ok\n", "m.yaml"))
		_, err := m.Stream(ctx(), toolResultRequest("call_1", "no prefix", true), nil)
		Expect(err).NotTo(HaveOccurred())
		e := m.Journal().Entries()[0]
		Expect(e.Wire).To(Equal(mockmodel.WireInProcess))
		Expect(e.ToolErrors).To(Equal(mockmodel.ToolErrorsFlag))
		Expect(e.Messages[2].IsError).To(BeTrue())
	})
})

func jsonString(s string) string {
	b, err := json.Marshal(s)
	Expect(err).NotTo(HaveOccurred())
	return string(b)
}
