package wire

import (
	"context"
	"errors"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/todoharness/todoharness/mockmodel"
)

var anthropicCase = wireCase{
	name: "Anthropic Messages (anthropic-sdk-go/v2)", wire: mockmodel.WireAnthropic, path: "/v1/messages",
	toolErrors: mockmodel.ToolErrorsFlag,
	newDriver: func(srv *mockmodel.Server) (driver, error) {
		return anthropicDriver{c: anthropic.NewClient(
			option.WithBaseURL(srv.URL),
			option.WithAPIKey("test-key"),
			option.WithHTTPClient(srv.Client()),
			option.WithMaxRetries(0),
		)}, nil
	},
	// input_tokens excludes the cache reads; no reasoning count.
	usage:              map[string]int64{"input_tokens": 120, "cache_read_input_tokens": 30, "output_tokens": 40},
	stop:               [2]string{"tool_use", "end_turn"},
	streamsArgs:        true,
	sendsReasoningBack: true,
	// is_error carries the failure: the text needs no prefix.
	errorText:     errMessage,
	kinds:         [2]string{"invalid_request_error", "invalid_request_error"},
	printsMessage: true,
}

type anthropicDriver struct{ c anthropic.Client }

func (anthropicDriver) apiError(err error) (apiErr, bool) {
	var e *anthropic.Error
	if !errors.As(err, &e) {
		return apiErr{}, false
	}
	return apiErr{status: e.StatusCode, message: e.Message, kind: string(e.Type()), code: string(e.ErrorCode())}, true
}

func (d anthropicDriver) send(ctx context.Context, stream bool, prior *reply, isError bool) (reply, error) {
	msgs := []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(userPrompt))}
	if prior != nil {
		text := okResult
		if isError {
			text = errMessage
		}
		msgs = append(msgs, prior.native.(anthropic.Message).ToParam(),
			anthropic.NewUserMessage(anthropic.NewToolResultBlock(prior.calls[0].id, text, isError)))
	}
	params := anthropic.MessageNewParams{
		Model:     anthropic.Model("mock-model"),
		MaxTokens: 1024,
		System:    []anthropic.TextBlockParam{{Text: systemPrompt}},
		Messages:  msgs,
		Tools: []anthropic.ToolUnionParam{{OfTool: &anthropic.ToolParam{
			Name: toolName, Description: anthropic.String(toolDesc),
			InputSchema: anthropic.ToolInputSchemaParam{
				Required:   []string{"todos"},
				Properties: todoSchema()["properties"],
			},
		}}},
	}
	if !stream {
		m, err := d.c.Messages.New(ctx, params)
		if err != nil {
			return reply{}, err
		}
		return anthropicReply(*m), nil
	}
	s := d.c.Messages.NewStreaming(ctx, params)
	defer s.Close()
	var m anthropic.Message
	var r reply
	for s.Next() {
		ev := s.Current()
		if err := m.Accumulate(ev); err != nil {
			return reply{}, err
		}
		r.events++
		if ev.Type == "content_block_delta" {
			switch ev.Delta.Type {
			case "text_delta":
				r.textDeltas++
			case "input_json_delta":
				r.argDeltas++
			}
		}
	}
	if err := s.Err(); err != nil {
		return reply{}, err
	}
	full := anthropicReply(m)
	full.events, full.textDeltas, full.argDeltas = r.events, r.textDeltas, r.argDeltas
	return full, nil
}

func anthropicReply(m anthropic.Message) reply {
	r := reply{stop: string(m.StopReason), native: m, usage: map[string]int64{
		"input_tokens": m.Usage.InputTokens, "cache_read_input_tokens": m.Usage.CacheReadInputTokens,
		"output_tokens": m.Usage.OutputTokens,
	}}
	for _, b := range m.Content {
		switch b.Type {
		case "thinking":
			r.reasoning += b.Thinking
		case "text":
			r.text += b.Text
		case "tool_use":
			r.calls = append(r.calls, call{id: b.ID, name: b.Name, args: string(b.Input)})
		}
	}
	return r
}
