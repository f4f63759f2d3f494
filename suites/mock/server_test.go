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
	"sync"
	"time"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/todoharness/todoharness/harness/llm"
	"github.com/todoharness/todoharness/harness/llm/openaichat"
	"github.com/todoharness/todoharness/mockmodel"
)

// startServer starts a server for the script and closes it after the spec.
func startServer(s *mockmodel.Script) *mockmodel.Server {
	srv := mockmodel.NewServer(s)
	DeferCleanup(srv.Close)
	Expect(srv.URL).To(HavePrefix("http://127.0.0.1:"))
	return srv
}

// client is the real llm client pointed at srv.
func client(srv *mockmodel.Server, stream bool) *openaichat.Client {
	c, err := openaichat.NewClient(openaichat.ClientConfig{
		BaseURL: srv.BaseURL(), APIKey: "test-key", Model: "mock-model",
		HTTPClient: srv.Client(), DisableStreaming: !stream,
	})
	Expect(err).NotTo(HaveOccurred())
	return c
}

// post sends a raw JSON body and returns status and body.
func post(srv *mockmodel.Server, path, body string) (int, []byte) {
	req, err := http.NewRequestWithContext(ctx(), http.MethodPost, srv.URL+path, strings.NewReader(body))
	Expect(err).NotTo(HaveOccurred())
	req.Header.Set("Content-Type", "application/json")
	res, err := srv.Client().Do(req)
	Expect(err).NotTo(HaveOccurred())
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	Expect(err).NotTo(HaveOccurred())
	return res.StatusCode, b
}

// sseEvents splits an SSE body into its data payloads.
func sseEvents(body []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(body))
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			out = append(out, data)
		}
	}
	return out
}

type openAIError struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    string `json:"code"`
	} `json:"error"`
}

func decodeError(b []byte) openAIError {
	var e openAIError
	Expect(json.Unmarshal(b, &e)).To(Succeed(), string(b))
	return e
}

var _ = Describe("HTTP server", func() {
	Describe("through the real llm client", func() {
		for _, stream := range []bool{true, false} {
			name := map[bool]string{true: "streaming", false: "non-streaming"}[stream]

			It("answers like the in-process model ("+name+")", func() {
				script := mustParse(vocabScript+`- expect: {lastMessage: tool, lastIsError: false, toolsInclude: [todo_write]}
  text: "DONE"
`, "parity.yaml")
				srv := startServer(script)
				c := client(srv, stream)
				m := mockmodel.NewModel(script)

				var httpChunks, memChunks []llm.Chunk
				r1, err := c.Stream(ctx(), userRequest("go"), collect(&httpChunks))
				Expect(err).NotTo(HaveOccurred())
				m1, err := m.Stream(ctx(), userRequest("go"), collect(&memChunks))
				Expect(err).NotTo(HaveOccurred())
				Expect(r1).To(Equal(m1))
				if stream {
					Expect(chunkJSON(httpChunks)).To(Equal(vocabChunks), "same chunks as the in-process model")
				} else {
					Expect(chunkJSON(httpChunks)[:7]).To(Equal([]string{
						`{"type":"block-start","index":0,"blockType":"reasoning"}`,
						`{"type":"reasoning-delta","index":0,"text":"Plan it now."}`,
						`{"type":"block-start","index":1,"blockType":"text"}`,
						`{"type":"text-delta","index":1,"text":"On it."}`,
						`{"type":"block-start","index":2,"blockType":"tool-call"}`,
						`{"type":"tool-call-delta","index":2,"id":"call_1","name":"todo_write","argumentsDelta":""}`,
						`{"type":"tool-call-delta","index":2,"id":"call_1","name":"todo_write","argumentsDelta":"{\"todos\":[]}"}`,
					}), "one delta per block")
					Expect(chunkJSON(httpChunks)[7:]).To(Equal(vocabChunks[12:]))
				}

				r2, err := c.Stream(ctx(), toolResultRequest("call_1", "Updated todo list: 0 pending, 0 in progress, 0 completed.", false), nil)
				Expect(err).NotTo(HaveOccurred())
				Expect(r2.Content).To(Equal([]llm.Part{{Type: llm.PartText, Text: "DONE"}}))
				Expect(r2.Finish.Kind).To(Equal(llm.FinishStop))
				Expect(*r2.Usage).To(Equal(llm.Usage{}))

				entries := srv.Journal().Entries()
				Expect(entries).To(HaveLen(2))
				Expect(entries[0].Path).To(Equal("/v1/chat/completions"))
				Expect(entries[0].Stream).To(Equal(stream))
				Expect(entries[0].Model).To(Equal("mock-model"))
				Expect(entries[1].TurnIndex).To(Equal(1))
				Expect(entries[1].System).To(Equal("You are a test."))
				Expect(entries[1].Messages).To(Equal([]llm.Message{
					{Role: llm.RoleUser, Content: []llm.Part{{Type: llm.PartText, Text: "plan it"}}},
					{Role: llm.RoleAssistant, Content: []llm.Part{ // reasoning is not sent back
						{Type: llm.PartToolCall, ID: "call_1", Name: "todo_write", Arguments: `{"todos":[]}`},
					}},
					{Role: llm.RoleTool, ToolCallID: "call_1", Content: []llm.Part{{Type: llm.PartText, Text: "Updated todo list: 0 pending, 0 in progress, 0 completed."}}},
				}))
				Expect(entries[1].Tools).To(HaveLen(1))
				Expect(entries[1].Tools[0].Name).To(Equal("todo_write"))
				Expect(entries[1].Tools[0].Parameters).To(MatchJSON(todoTool.Parameters))
				Expect(entries[1].Raw).To(ContainSubstring(`"tool_call_id":"call_1"`))
			})
		}

		It("reassembles tool-call arguments split over many SSE chunks exactly", func() {
			args := `{"todos":[{"content":"read the code","status":"in_progress"},{"content":"write the fix ✓","status":"pending"},{"content":"run the tests","status":"pending"}]}`
			script := &mockmodel.Script{Name: "split", Turns: []mockmodel.Turn{{
				ChunkSize: 3,
				ToolCalls: []mockmodel.ToolCall{{Name: "todo_write", Arguments: json.RawMessage(args)}},
			}, {
				ChunkSize: 3,
				ToolCalls: []mockmodel.ToolCall{{Name: "todo_write", Arguments: json.RawMessage(args)}},
			}}}
			srv := startServer(script)

			// On the wire: one tool_calls delta per 3 bytes.
			status, body := post(srv, "/v1/chat/completions",
				`{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}`)
			Expect(status).To(Equal(200))
			events := sseEvents(body)
			pieces := 0
			wire := ""
			for _, ev := range events {
				if !strings.Contains(ev, `"tool_calls":[`) {
					continue
				}
				var c struct {
					Choices []struct {
						Delta struct {
							ToolCalls []struct {
								Function struct{ Arguments string } `json:"function"`
							} `json:"tool_calls"`
						} `json:"delta"`
					} `json:"choices"`
				}
				Expect(json.Unmarshal([]byte(ev), &c)).To(Succeed())
				pieces++
				wire += c.Choices[0].Delta.ToolCalls[0].Function.Arguments
			}
			Expect(wire).To(Equal(args))
			Expect(pieces).To(BeNumerically(">", 40))

			// Through the client: many tool-call-delta chunks, exact arguments.
			var chunks []llm.Chunk
			r, err := client(srv, true).Stream(ctx(), userRequest("go"), collect(&chunks))
			Expect(err).NotTo(HaveOccurred())
			Expect(r.ToolCalls()).To(HaveLen(1))
			Expect(r.ToolCalls()[0].Arguments).To(Equal(args))
			Expect(r.ToolCalls()[0].ID).To(Equal("call_2"))
			n := 0
			for _, c := range chunks {
				if c.Type == llm.ChunkToolCallDelta {
					n++
				}
			}
			Expect(n).To(Equal(pieces))
		})

		It("delivers reasoning_content as reasoning-delta chunks and maps usage", func() {
			script := mustParse(`
- reasoning: The user wants a plan.
  text: Done.
  usage: {inputTokens: 174, outputTokens: 23, cacheReadTokens: 1664, reasoningTokens: 20}
`, "reason.yaml")
			srv := startServer(script)
			var chunks []llm.Chunk
			r, err := client(srv, true).Stream(ctx(), userRequest("go"), collect(&chunks))
			Expect(err).NotTo(HaveOccurred())
			var reasoning []string
			for _, c := range chunks {
				if c.Type == llm.ChunkReasoningDelta {
					Expect(*c.Index).To(Equal(0))
					reasoning = append(reasoning, c.Text)
				}
			}
			Expect(reasoning).To(Equal([]string{"The", " user", " wants", " a", " plan."}))
			Expect(r.Content[0]).To(Equal(llm.Part{Type: llm.PartReasoning, Text: "The user wants a plan."}))
			Expect(*r.Usage).To(Equal(llm.Usage{InputTokens: 174, OutputTokens: 23, CacheReadTokens: 1664, ReasoningTokens: 20}))

			// and on the wire, the usage is OpenAI/DeepSeek shaped
			srv2 := startServer(script)
			_, body := post(srv2, "/chat/completions",
				`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"go"}]}`)
			events := sseEvents(body)
			Expect(events[len(events)-1]).To(Equal("[DONE]"))
			Expect(events[len(events)-2]).To(MatchJSON(`{"id":"chatcmpl-mock-1","object":"chat.completion.chunk","created":0,"model":"m","choices":[],
				"usage":{"prompt_tokens":1838,"completion_tokens":23,"total_tokens":1861,"prompt_tokens_details":{"cached_tokens":1664},
				"completion_tokens_details":{"reasoning_tokens":20},"prompt_cache_hit_tokens":1664,"prompt_cache_miss_tokens":174}}`))
			Expect(events[0]).To(MatchJSON(`{"id":"chatcmpl-mock-1","object":"chat.completion.chunk","created":0,"model":"m",
				"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`))
			Expect(events[1]).To(MatchJSON(`{"id":"chatcmpl-mock-1","object":"chat.completion.chunk","created":0,"model":"m",
				"choices":[{"index":0,"delta":{"reasoning_content":"The"},"finish_reason":null}]}`))
			Expect(events[len(events)-3]).To(MatchJSON(`{"id":"chatcmpl-mock-1","object":"chat.completion.chunk","created":0,"model":"m",
				"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}`))
		})

		It("sends no usage chunk unless stream_options.include_usage is set", func() {
			srv := startServer(mustParse("- text: hi\n", "u.yaml"))
			_, body := post(srv, "/v1/chat/completions", `{"model":"m","stream":true,"messages":[{"role":"user","content":"go"}]}`)
			Expect(string(body)).NotTo(ContainSubstring(`"usage"`))
			Expect(sseEvents(body)).To(HaveLen(4)) // role, "hi", finish, [DONE]
		})

		It("answers stream:false with one chat.completion", func() {
			srv := startServer(mustParse(`
- reasoning: hmm
  toolCalls: [{name: todo_write, arguments: {todos: []}}]
  usage: {inputTokens: 5, outputTokens: 6}
`, "full.yaml"))
			status, body := post(srv, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"go"}]}`)
			Expect(status).To(Equal(200))
			Expect(body).To(MatchJSON(`{"id":"chatcmpl-mock-1","object":"chat.completion","created":0,"model":"m",
				"choices":[{"index":0,"finish_reason":"tool_calls","logprobs":null,"message":{"role":"assistant","content":null,"reasoning_content":"hmm",
					"tool_calls":[{"id":"call_1","type":"function","function":{"name":"todo_write","arguments":"{\"todos\":[]}"}}]}}],
				"usage":{"prompt_tokens":5,"completion_tokens":6,"total_tokens":11,"prompt_tokens_details":{"cached_tokens":0},
					"completion_tokens_details":{"reasoning_tokens":0},"prompt_cache_hit_tokens":0,"prompt_cache_miss_tokens":5}}`))
		})
	})

	Describe("errors", func() {
		It("refuses a request past the end of the script with a body naming file and request", func() {
			srv := startServer(mustParse("- text: one\n", "/scripts/short.yaml"))
			c := client(srv, true)
			_, err := c.Stream(ctx(), userRequest("first"), nil)
			Expect(err).NotTo(HaveOccurred())
			_, err = c.Stream(ctx(), userRequest("second"), nil)
			var apiErr *openaichat.APIError
			Expect(errors.As(err, &apiErr)).To(BeTrue(), "%v", err)
			Expect(apiErr.StatusCode).To(Equal(410))
			Expect(apiErr.Code).To(Equal(mockmodel.CodeExhausted))
			Expect(apiErr.Message).To(Equal(`/scripts/short.yaml: no turn left for request 2: the script has 1 turn(s); last message: user message "second"`))
			Expect(err.Error()).To(ContainSubstring("410 Gone"))

			status, body := post(srv, "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"third"}]}`)
			Expect(status).To(Equal(410))
			e := decodeError(body)
			Expect(e.Error.Message).To(ContainSubstring("/scripts/short.yaml: no turn left for request 3"))
			Expect(e.Error.Type).To(Equal("invalid_request_error"))
			Expect(e.Error.Code).To(Equal("mock_script_exhausted"))

			entries := srv.Journal().Entries()
			Expect(entries).To(HaveLen(3))
			Expect(entries[2].TurnIndex).To(Equal(-1))
			Expect(entries[2].Status).To(Equal(410))
			Expect(entries[2].Error).To(Equal(e.Error.Message))
		})

		It("refuses a request failing its expect with 422 naming file, turn and difference", func() {
			srv := startServer(mustParse(`
- toolCalls: [{name: todo_write, arguments: {todos: [{content: a, status: pending}, {content: a, status: pending}]}}]
- expect: {lastIsError: true}
  text: x
`, "dup.yaml"))
			c := client(srv, true)
			_, err := c.Stream(ctx(), userRequest("go"), nil)
			Expect(err).NotTo(HaveOccurred())
			_, err = c.Stream(ctx(), toolResultRequest("call_1", "Updated todo list: 2 pending, 0 in progress, 0 completed.", false), nil)
			var apiErr *openaichat.APIError
			Expect(errors.As(err, &apiErr)).To(BeTrue(), "%v", err)
			Expect(apiErr.StatusCode).To(Equal(422))
			Expect(apiErr.Message).To(Equal(`dup.yaml: turn 2 of 2 (line 3): expect failed: expect.lastIsError: want true, got false (tool result for call_1 (isError=false) "Updated todo list: 2 pending, 0 in progress, 0 completed.")`))
			last, _ := srv.Journal().Last()
			Expect(last.Status).To(Equal(422))
			Expect(last.TurnIndex).To(Equal(1))
			Expect(last.Error).To(Equal(apiErr.Message))
		})

		It("reads an error result from its Error: prefix (the OpenAI wire has no error flag)", func() {
			srv := startServer(mustParse("- expect: {lastIsError: true, lastContains: duplicate}\n  text: ok\n", "e.yaml"))
			r, err := client(srv, true).Stream(ctx(), toolResultRequest("call_1", `Error: invalid todos: duplicate content "a"`, true), nil)
			Expect(err).NotTo(HaveOccurred())
			Expect(r.Content[0].Text).To(Equal("ok"))
			Expect(srv.Journal().Entries()[0].Messages[2].IsError).To(BeTrue())
		})

		DescribeTable("answers malformed requests with 400, journaled",
			func(body, want string) {
				srv := startServer(mustParse("- text: ok\n", "m.yaml"))
				status, b := post(srv, "/v1/chat/completions", body)
				Expect(status).To(Equal(400))
				e := decodeError(b)
				Expect(e.Error.Message).To(Equal("m.yaml: POST /v1/chat/completions: request 1: " + want))
				Expect(e.Error.Code).To(Equal(mockmodel.CodeMalformed))
				entries := srv.Journal().Entries()
				Expect(entries).To(HaveLen(1))
				Expect(entries[0].Status).To(Equal(400))
				Expect(entries[0].TurnIndex).To(Equal(-1))
				Expect(json.Valid(entries[0].Raw)).To(BeTrue())
				Expect(srv.Remaining()).To(Equal(1), "a malformed request consumes no turn")
			},
			Entry("not JSON", `{"model": "m", "messages": [`, "malformed JSON body: unexpected EOF"),
			Entry("no messages", `{"model":"m"}`, "messages: required"),
			Entry("unknown role", `{"messages":[{"role":"robot","content":"x"}]}`, `messages[0].role: unknown role "robot"`),
			Entry("tool message without id", `{"messages":[{"role":"tool","content":"x"}]}`, "messages[0].tool_call_id: required for a tool message"),
			Entry("image part", `{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"x"}}]}]}`,
				`messages[0].content: part 0: unsupported content part type "image_url" (the mock reads text parts only)`),
		)

		It("keeps a non-JSON body in the journal as a JSON string", func() {
			srv := startServer(mustParse("- text: ok\n", "m.yaml"))
			status, _ := post(srv, "/v1/chat/completions", `not json`)
			Expect(status).To(Equal(400))
			Expect(srv.Journal().Entries()[0].Raw).To(MatchJSON(`"not json"`))
		})

		It("answers an unknown path with 404 and a wrong method with 405, journaled", func() {
			srv := startServer(mustParse("- text: ok\n", "m.yaml"))
			status, b := post(srv, "/v1/completions", `{}`)
			Expect(status).To(Equal(404))
			Expect(decodeError(b).Error.Message).To(ContainSubstring("m.yaml: unknown endpoint POST /v1/completions"))
			res, err := srv.Client().Get(srv.URL + "/v1/chat/completions")
			Expect(err).NotTo(HaveOccurred())
			res.Body.Close()
			Expect(res.StatusCode).To(Equal(405))
			Expect(srv.Journal().Len()).To(Equal(2))
		})

		It("answers a reachability check (HEAD /) with 200, outside the journal", func() {
			srv := startServer(mustParse("- text: ok\n", "m.yaml"))
			res, err := srv.Client().Head(srv.URL + "/")
			Expect(err).NotTo(HaveOccurred())
			res.Body.Close()
			Expect(res.StatusCode).To(Equal(200))
			Expect(srv.Journal().Len()).To(Equal(0), "a reachability check is no request of the conversation")
			Expect(srv.Remaining()).To(Equal(1))
		})

		It("injects http-500", func() {
			srv := startServer(mustParse("- text: x\n  fault: http-500\n- text: after\n", "f.yaml"))
			c := client(srv, true)
			_, err := c.Stream(ctx(), userRequest("go"), nil)
			var apiErr *openaichat.APIError
			Expect(errors.As(err, &apiErr)).To(BeTrue(), "%v", err)
			Expect(apiErr.StatusCode).To(Equal(500))
			Expect(apiErr.Message).To(Equal("f.yaml: turn 1 of 2 (line 1): injected fault http-500"))
			r, err := c.Stream(ctx(), userRequest("again"), nil)
			Expect(err).NotTo(HaveOccurred(), "the client does not retry; the next request gets the next turn")
			Expect(r.Content[0].Text).To(Equal("after"))
		})

		for _, stream := range []bool{true, false} {
			It("turns close-mid-stream into an error, not a hang (stream="+map[bool]string{true: "true", false: "false"}[stream]+")", func() {
				srv := startServer(mustParse(vocabScript+"  fault: close-mid-stream\n", "close.yaml"))
				c, cancel := context.WithTimeout(ctx(), time.Minute)
				defer cancel()
				var chunks []llm.Chunk
				_, err := client(srv, stream).Stream(c, userRequest("go"), collect(&chunks))
				Expect(err).To(HaveOccurred())
				Expect(c.Err()).NotTo(HaveOccurred(), "failed before the deadline")
				Expect(errors.Is(err, context.DeadlineExceeded)).To(BeFalse())
				if stream {
					Expect(chunkJSON(chunks)).To(Equal(vocabChunks[:6]), "the chunks sent before the drop, like the in-process model")
				} else {
					Expect(chunks).To(BeEmpty())
				}
				Expect(srv.Journal().Entries()[0].Error).To(ContainSubstring("injected fault close-mid-stream"))
			})
		}

		It("honours context cancellation while the server hangs", func() {
			srv := startServer(mustParse("- text: one two three four\n  fault: hang\n", "hang.yaml"))
			c, cancel := context.WithCancel(ctx())
			var chunks []llm.Chunk
			got := make(chan llm.Chunk, 16)
			done := make(chan error, 1)
			go func() {
				defer GinkgoRecover()
				_, err := client(srv, true).Stream(c, userRequest("go"), func(ch llm.Chunk) error {
					got <- ch
					return nil
				})
				done <- err
			}()
			for range 3 { // block-start + two deltas arrive, then the server hangs
				var ch llm.Chunk
				Eventually(got).Should(Receive(&ch))
				chunks = append(chunks, ch)
			}
			// No window of wall time is watched: an answer that ended before
			// the cancel would not end with context.Canceled (that the hang
			// holds is mockmodel.TestActivityCountsARequestInFlightUntilItsHandlerReturns's).
			cancel()
			var err error
			Eventually(done, time.Minute).Should(Receive(&err))
			Expect(errors.Is(err, context.Canceled)).To(BeTrue(), "%v", err)
		})

		It("closes promptly with a request hanging", func() {
			srv := mockmodel.NewServer(mustParse("- text: a b\n  fault: hang\n", "hang.yaml"))
			done := make(chan error, 1)
			go func() {
				defer GinkgoRecover()
				_, err := client(srv, true).Stream(ctx(), userRequest("go"), nil)
				done <- err
			}()
			Eventually(srv.Journal().Len).Should(Equal(1))
			closed := make(chan struct{})
			go func() { srv.Close(); close(closed) }()
			Eventually(closed, time.Minute).Should(BeClosed())
			var err error
			Eventually(done, time.Minute).Should(Receive(&err))
			Expect(err).To(HaveOccurred())
		})
	})

	It("reports its traffic: a request in flight until it is answered, the turns taken, the last activity", func() {
		srv := startServer(mustParse("- text: first\n- text: a b\n  fault: hang\n", "activity.yaml"))
		Expect(srv.Activity()).To(Equal(mockmodel.Activity{}))
		before := time.Now()
		_, err := client(srv, true).Stream(ctx(), userRequest("go"), nil)
		Expect(err).NotTo(HaveOccurred())
		// When the handler returns after the client read the last byte
		// (InFlight back to 0) is the bubble test's to say
		// (mockmodel.TestActivityCountsARequestInFlightUntilItsHandlerReturns).
		a := srv.Activity()
		Expect(a.Requests).To(Equal(1))
		Expect(a.Taken).To(Equal(1))
		Expect(a.Last).NotTo(BeTemporally("<", before))

		c, cancel := context.WithCancel(ctx())
		done := make(chan error, 1)
		first := make(chan struct{})
		var once sync.Once
		go func() {
			defer GinkgoRecover()
			_, err := client(srv, true).Stream(c, userRequest("go"), func(llm.Chunk) error {
				once.Do(func() { close(first) })
				return nil
			})
			done <- err
		}()
		// Its first chunk: the turn is taken, the answer hangs after it.
		Eventually(first, time.Minute).Should(BeClosed())
		a = srv.Activity()
		Expect(a.Requests).To(Equal(2))
		Expect(a.InFlight).To(Equal(1), "the hanging answer is in flight")
		Expect(a.Taken).To(Equal(2))
		cancel()
		Eventually(done, time.Minute).Should(Receive())
	})

	It("lists a model on GET /v1/models and /models", func() {
		srv := startServer(mustParse("- text: ok\n", "m.yaml"))
		for _, p := range []string{"/v1/models", "/models"} {
			res, err := srv.Client().Get(srv.URL + p)
			Expect(err).NotTo(HaveOccurred())
			b, _ := io.ReadAll(res.Body)
			res.Body.Close()
			Expect(res.StatusCode).To(Equal(200))
			Expect(b).To(MatchJSON(`{"object":"list","data":[{"id":"todoharness-mock","object":"model","created":0,"owned_by":"todoharness"}]}`))
		}
	})

	It("writes the journal as JSONL, one parseable entry per line, and tees it", func() {
		srv := mockmodel.NewUnstartedServer(mustParse("- text: ok\n", "j.yaml"))
		var tee bytes.Buffer
		srv.Journal().Tee(&tee)
		srv.Start()
		DeferCleanup(srv.Close)
		_, err := client(srv, true).Stream(ctx(), userRequest("hello"), nil)
		Expect(err).NotTo(HaveOccurred())
		_, err = client(srv, false).Stream(ctx(), userRequest("again"), nil)
		Expect(err).To(HaveOccurred())

		var buf bytes.Buffer
		Expect(srv.Journal().WriteJSONL(&buf)).To(Succeed())
		Expect(buf.String()).To(Equal(tee.String()))
		lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
		Expect(lines).To(HaveLen(2))
		var e0, e1 mockmodel.JournalEntry
		Expect(json.Unmarshal([]byte(lines[0]), &e0)).To(Succeed())
		Expect(json.Unmarshal([]byte(lines[1]), &e1)).To(Succeed())
		Expect(e0.Index).To(Equal(0))
		Expect(e0.Stream).To(BeTrue())
		Expect(e0.Messages[0].Text()).To(Equal("hello"))
		Expect(e0.Raw).To(ContainSubstring(`"include_usage":true`))
		Expect(e1.Index).To(Equal(1))
		Expect(e1.Stream).To(BeFalse())
		Expect(e1.Status).To(Equal(410))
		Expect(e1.Error).To(ContainSubstring("no turn left"))

		// Entries returns a copy
		es := srv.Journal().Entries()
		es[0].Messages[0].Content[0].Text = "mutated"
		Expect(srv.Journal().Entries()[0].Messages[0].Text()).To(Equal("hello"))
	})

	It("serves concurrent requests, one turn each", func() {
		var turns []mockmodel.Turn
		for range 20 {
			turns = append(turns, mockmodel.Turn{Text: "same answer"})
		}
		srv := startServer(&mockmodel.Script{Name: "many", Turns: turns})
		c := client(srv, true)
		errs := make(chan error, 20)
		for range 20 {
			go func() {
				_, err := c.Stream(ctx(), userRequest("go"), nil)
				errs <- err
			}()
		}
		for range 20 {
			Eventually(errs).Should(Receive(BeNil()))
		}
		Expect(srv.Remaining()).To(Equal(0))
		seen := map[int]bool{}
		for _, e := range srv.Journal().Entries() {
			seen[e.TurnIndex] = true
		}
		Expect(seen).To(HaveLen(20))
	})
})
