package wire

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
	"github.com/openai/openai-go/v3/shared"

	"github.com/todoharness/todoharness/mockmodel"
)

// openAIClient is the official OpenAI client pointed at the mock: base URL
// .../v1/, a fake key, the server's own HTTP client, no retries.
func openAIClient(srv *mockmodel.Server) openai.Client {
	return openai.NewClient(
		option.WithBaseURL(srv.BaseURL()+"/"),
		option.WithAPIKey("test-key"),
		option.WithHTTPClient(srv.Client()),
		option.WithMaxRetries(0),
	)
}

func openAIAPIError(err error) (apiErr, bool) {
	var e *openai.Error
	if !errors.As(err, &e) {
		return apiErr{}, false
	}
	return apiErr{status: e.StatusCode, message: e.Message, kind: e.Type, code: e.Code}, true
}

// ---- chat completions ----

var chatCase = wireCase{
	name: "OpenAI chat completions (openai-go/v3)", wire: mockmodel.WireOpenAIChat, path: "/v1/chat/completions",
	toolErrors: mockmodel.ToolErrorsPrefix,
	newDriver:  func(srv *mockmodel.Server) (driver, error) { return chatDriver{c: openAIClient(srv)}, nil },
	usage: map[string]int64{"prompt_tokens": 150, "completion_tokens": 40, "total_tokens": 190,
		"cached_tokens": 30, "reasoning_tokens": 12},
	stop:        [2]string{"tool_calls", "stop"},
	streamsArgs: true,
	errorText:   "Error: " + errMessage,
	kinds:       [2]string{"invalid_request_error", "invalid_request_error"},
}

type chatDriver struct{ c openai.Client }

func (chatDriver) apiError(err error) (apiErr, bool) { return openAIAPIError(err) }

func (d chatDriver) send(ctx context.Context, stream bool, prior *reply, isError bool) (reply, error) {
	msgs := []openai.ChatCompletionMessageParamUnion{openai.SystemMessage(systemPrompt), openai.UserMessage(userPrompt)}
	if prior != nil {
		msgs = append(msgs, prior.native.(openai.ChatCompletionMessage).ToParam(),
			openai.ToolMessage(resultText(isError), prior.calls[0].id))
	}
	params := openai.ChatCompletionNewParams{
		Model:    "mock-model",
		Messages: msgs,
		Tools: []openai.ChatCompletionToolUnionParam{openai.ChatCompletionFunctionTool(shared.FunctionDefinitionParam{
			Name: toolName, Description: openai.String(toolDesc), Parameters: shared.FunctionParameters(todoSchema()),
		})},
	}
	if !stream {
		cc, err := d.c.Chat.Completions.New(ctx, params)
		if err != nil {
			return reply{}, err
		}
		r := chatReply(cc.Choices[0].Message, cc.Choices[0].FinishReason, cc.Usage)
		r.reasoning = extraString(cc.Choices[0].Message.JSON.ExtraFields["reasoning_content"].Raw())
		return r, nil
	}
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)}
	s := d.c.Chat.Completions.NewStreaming(ctx, params)
	defer s.Close()
	var acc openai.ChatCompletionAccumulator
	var r reply
	for s.Next() {
		ch := s.Current()
		acc.AddChunk(ch)
		r.events++
		if len(ch.Choices) == 0 {
			continue
		}
		delta := ch.Choices[0].Delta
		r.reasoning += extraString(delta.JSON.ExtraFields["reasoning_content"].Raw())
		if delta.Content != "" {
			r.textDeltas++
		}
		for _, tc := range delta.ToolCalls {
			if tc.Function.Arguments != "" {
				r.argDeltas++
			}
		}
	}
	if err := s.Err(); err != nil {
		return reply{}, err
	}
	full := chatReply(acc.Choices[0].Message, acc.Choices[0].FinishReason, acc.Usage)
	full.reasoning, full.events, full.textDeltas, full.argDeltas = r.reasoning, r.events, r.textDeltas, r.argDeltas
	return full, nil
}

func chatReply(m openai.ChatCompletionMessage, finish string, u openai.CompletionUsage) reply {
	r := reply{text: m.Content, stop: finish, native: m, usage: map[string]int64{
		"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.TotalTokens,
		"cached_tokens": u.PromptTokensDetails.CachedTokens, "reasoning_tokens": u.CompletionTokensDetails.ReasoningTokens,
	}}
	for _, tc := range m.ToolCalls {
		r.calls = append(r.calls, call{id: tc.ID, name: tc.Function.Name, args: tc.Function.Arguments})
	}
	return r
}

// extraString reads a JSON string the SDK kept as an extra field
// (DeepSeek's reasoning_content); "" when absent.
func extraString(raw string) string {
	var s string
	if raw == "" || json.Unmarshal([]byte(raw), &s) != nil {
		return ""
	}
	return s
}

// ---- Responses ----

var responsesCase = wireCase{
	name: "OpenAI Responses (openai-go/v3)", wire: mockmodel.WireOpenAIResponses, path: "/v1/responses",
	toolErrors: mockmodel.ToolErrorsPrefix,
	newDriver:  func(srv *mockmodel.Server) (driver, error) { return responsesDriver{c: openAIClient(srv)}, nil },
	usage: map[string]int64{"input_tokens": 150, "cached_tokens": 30, "output_tokens": 40,
		"reasoning_tokens": 12, "total_tokens": 190},
	stop:               [2]string{"completed", "completed"},
	streamsArgs:        true,
	sendsReasoningBack: true,
	errorText:          "Error: " + errMessage,
	kinds:              [2]string{"invalid_request_error", "invalid_request_error"},
}

type responsesDriver struct{ c openai.Client }

func (responsesDriver) apiError(err error) (apiErr, bool) { return openAIAPIError(err) }

func (d responsesDriver) send(ctx context.Context, stream bool, prior *reply, isError bool) (reply, error) {
	items := responses.ResponseInputParam{responses.ResponseInputItemParamOfMessage(userPrompt, responses.EasyInputMessageRoleUser)}
	if prior != nil {
		// Send the turn back as the SDK returned it: reasoning, message,
		// function call; then the call's output.
		for _, it := range prior.native.(responses.Response).Output {
			switch it.Type {
			case "reasoning":
				var sum []responses.ResponseReasoningItemSummaryParam
				for _, s := range it.Summary {
					sum = append(sum, responses.ResponseReasoningItemSummaryParam{Text: s.Text})
				}
				items = append(items, responses.ResponseInputItemParamOfReasoning(it.ID, sum))
			case "message":
				items = append(items, responses.ResponseInputItemParamOfMessage(it.Content[0].Text, responses.EasyInputMessageRoleAssistant))
			case "function_call":
				items = append(items, responses.ResponseInputItemParamOfFunctionCall(it.Arguments.OfString, it.CallID, it.Name))
			}
		}
		out := responses.ResponseInputItemParamOfFunctionCallOutput(resultText(isError))
		out.OfFunctionCallOutput.CallID = openai.String(prior.calls[0].id)
		items = append(items, out)
	}
	params := responses.ResponseNewParams{
		Model:        "mock-model",
		Instructions: openai.String(systemPrompt),
		Input:        responses.ResponseNewParamsInputUnion{OfInputItemList: items},
		Tools: []responses.ToolUnionParam{{OfFunction: &responses.FunctionToolParam{
			Name: toolName, Description: openai.String(toolDesc), Parameters: todoSchema(), Strict: openai.Bool(false),
		}}},
	}
	if !stream {
		resp, err := d.c.Responses.New(ctx, params)
		if err != nil {
			return reply{}, err
		}
		return responsesReply(*resp), nil
	}
	s := d.c.Responses.NewStreaming(ctx, params)
	defer s.Close()
	// Build the reply from the deltas alone; take usage and status from
	// response.completed.
	var r reply
	type fc struct{ id, name, args string }
	calls := map[string]*fc{}
	var order []string
	var final *responses.Response
	for s.Next() {
		ev := s.Current()
		r.events++
		switch ev.Type {
		case "response.reasoning_summary_text.delta":
			r.reasoning += ev.Delta
		case "response.output_text.delta":
			r.text += ev.Delta
			r.textDeltas++
		case "response.output_item.added":
			if ev.Item.Type == "function_call" {
				calls[ev.Item.ID] = &fc{id: ev.Item.CallID, name: ev.Item.Name}
				order = append(order, ev.Item.ID)
			}
		case "response.function_call_arguments.delta":
			calls[ev.ItemID].args += ev.Delta
			r.argDeltas++
		case "response.completed", "response.incomplete":
			resp := ev.Response
			final = &resp
		}
	}
	if err := s.Err(); err != nil {
		return reply{}, err
	}
	for _, id := range order {
		c := calls[id]
		r.calls = append(r.calls, call{id: c.id, name: c.name, args: c.args})
	}
	if final != nil {
		done := responsesReply(*final)
		r.usage, r.stop, r.native = done.usage, done.stop, *final
	}
	return r, nil
}

func responsesReply(resp responses.Response) reply {
	u := resp.Usage
	r := reply{text: resp.OutputText(), stop: string(resp.Status), native: resp, usage: map[string]int64{
		"input_tokens": u.InputTokens, "cached_tokens": u.InputTokensDetails.CachedTokens, "output_tokens": u.OutputTokens,
		"reasoning_tokens": u.OutputTokensDetails.ReasoningTokens, "total_tokens": u.TotalTokens,
	}}
	for _, it := range resp.Output {
		switch it.Type {
		case "reasoning":
			for _, s := range it.Summary {
				r.reasoning += s.Text
			}
		case "function_call":
			r.calls = append(r.calls, call{id: it.CallID, name: it.Name, args: it.Arguments.OfString})
		}
	}
	return r
}
