package openaichat

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"sort"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/respjson"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/todoharness/todoharness/harness/llm"
)

// Defaults of ConfigFromEnv.
const (
	DefaultBaseURL = "https://api.deepseek.com"
	DefaultModel   = "deepseek-chat"
)

// ClientConfig configures a Client.
type ClientConfig struct {
	// BaseURL of the OpenAI-compatible API; "/chat/completions" is appended
	// ("https://api.deepseek.com", "http://127.0.0.1:PORT/v1").
	BaseURL string
	// APIKey is sent as a bearer token; empty sends no Authorization header.
	APIKey string
	// Model is used when llm.Request.Model is empty.
	Model string
	// HTTPClient carries every request; nil means http.DefaultClient.
	// Record/replay wraps its Transport.
	HTTPClient *http.Client
	// MaxTokens, if positive, is sent as max_tokens.
	MaxTokens int
	// MaxRetries is how many times a failed request (429, 5xx, connection
	// error) is retried. 0, the default, never retries: a retry would
	// consume another turn of a scripted model and another cassette entry.
	MaxRetries int
	// DisableStreaming sends stream:false and turns the whole answer into
	// the same chunk sequence (one delta per block).
	DisableStreaming bool
}

// ConfigFromEnv reads DEEPSEEK_BASE_URL (default DefaultBaseURL),
// DEEPSEEK_API_KEY and DEEPSEEK_MODEL (default DefaultModel). A non-empty
// model argument (from a flag) wins over DEEPSEEK_MODEL.
func ConfigFromEnv(model string) ClientConfig {
	return ConfigFromLookup(os.Getenv, model)
}

// ConfigFromLookup is ConfigFromEnv with the variables read through getenv
// (for a command run in process on behalf of another process).
func ConfigFromLookup(getenv func(string) string, model string) ClientConfig {
	cfg := ClientConfig{
		BaseURL: getenv("DEEPSEEK_BASE_URL"),
		APIKey:  getenv("DEEPSEEK_API_KEY"),
		Model:   model,
	}
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.Model == "" {
		cfg.Model = getenv("DEEPSEEK_MODEL")
	}
	if cfg.Model == "" {
		cfg.Model = DefaultModel
	}
	return cfg
}

// Client is a streaming client for OpenAI-compatible chat completions
// (DeepSeek, the mock model server), built on openai-go. It implements
// llm.Model. It never reads the OPENAI_* environment variables.
type Client struct {
	cfg ClientConfig
	svc openai.ChatCompletionService
}

var _ llm.Model = (*Client)(nil)

// NewClient returns a client for cfg.
func NewClient(cfg ClientConfig) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return nil, fmt.Errorf("llm: base URL %q: %w", cfg.BaseURL, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm: base URL %q: want http(s)://host[/path]", cfg.BaseURL)
	}
	if cfg.MaxRetries < 0 {
		return nil, fmt.Errorf("llm: MaxRetries must not be negative, got %d", cfg.MaxRetries)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	opts := []option.RequestOption{
		option.WithBaseURL(cfg.BaseURL),
		option.WithHTTPClient(hc),
		option.WithMaxRetries(cfg.MaxRetries),
	}
	if cfg.APIKey != "" {
		opts = append(opts, option.WithAPIKey(cfg.APIKey))
	}
	// The service is built directly (not through openai.NewClient) so that
	// no OPENAI_* variable of the environment leaks into requests.
	return &Client{cfg: cfg, svc: openai.NewChatCompletionService(opts...)}, nil
}

// APIError is an error answer of the API (HTTP status >= 400) with the
// message of its OpenAI-shaped error body.
type APIError struct {
	StatusCode int
	Type       string
	Code       string
	Message    string
	err        error
}

func (e *APIError) Error() string {
	s := fmt.Sprintf("model API error: %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

func (e *APIError) Unwrap() error { return e.err }

// wrapErr turns SDK errors into errors that say what happened.
func wrapErr(ctx context.Context, what string, err error) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		return fmt.Errorf("llm: %s: %w", what, &APIError{
			StatusCode: apiErr.StatusCode, Type: apiErr.Type, Code: apiErr.Code, Message: apiErr.Message, err: err,
		})
	}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
		return fmt.Errorf("llm: %s: %w (%w)", what, ctxErr, err)
	}
	return fmt.Errorf("llm: %s: %w", what, err)
}

// Stream sends req and streams the answer as chunks (see llm.Model).
func (c *Client) Stream(ctx context.Context, req llm.Request, onChunk func(llm.Chunk) error) (llm.Response, error) {
	params, err := c.params(req)
	if err != nil {
		return llm.Response{}, err
	}
	st := newStreamState(onChunk)
	if c.cfg.DisableStreaming {
		return c.complete(ctx, params, st)
	}
	params.StreamOptions = openai.ChatCompletionStreamOptionsParam{IncludeUsage: param.NewOpt(true)}
	// As ChatCompletionService.NewStreaming, but each event is decoded
	// into wireChunk, the few fields read, with encoding/json: the SDK's
	// reflective decoder of the whole ChatCompletionChunk was the largest
	// CPU share of a scripted turn (docs/performance.md).
	var raw *http.Response
	_, err = c.svc.New(ctx, params, option.WithJSONSet("stream", true), option.WithResponseBodyInto(&raw))
	stream := ssestream.NewStream[wireChunk](ssestream.NewDecoder(raw), err)
	defer func() { _ = stream.Close() }()
	for stream.Next() {
		if err := st.chunk(stream.Current()); err != nil {
			return llm.Response{}, err
		}
	}
	if err := stream.Err(); err != nil {
		return llm.Response{}, wrapErr(ctx, "chat completions stream", err)
	}
	if err := ctx.Err(); err != nil {
		return llm.Response{}, fmt.Errorf("llm: chat completions stream: %w", err)
	}
	if st.finish == "" {
		return llm.Response{}, errors.New("llm: chat completions stream ended without a finish reason (connection closed mid-stream?)")
	}
	if err := st.end(); err != nil {
		return llm.Response{}, err
	}
	return st.asm.Response(), nil
}

// complete does a stream:false request and replays it as chunks.
func (c *Client) complete(ctx context.Context, params openai.ChatCompletionNewParams, st *streamState) (llm.Response, error) {
	res, err := c.svc.New(ctx, params)
	if err != nil {
		return llm.Response{}, wrapErr(ctx, "chat completions", err)
	}
	if len(res.Choices) == 0 {
		return llm.Response{}, errors.New("llm: chat completions: answer has no choices")
	}
	ch := res.Choices[0]
	if r, err := extraString(ch.Message.JSON.ExtraFields, "reasoning_content"); err != nil {
		return llm.Response{}, err
	} else if err := st.reasoning(r); err != nil {
		return llm.Response{}, err
	}
	if err := st.text(ch.Message.Content); err != nil {
		return llm.Response{}, err
	}
	for i, tc := range ch.Message.ToolCalls {
		if tc.Type != "" && tc.Type != "function" {
			return llm.Response{}, fmt.Errorf("llm: chat completions: tool_calls[%d]: unsupported type %q", i, tc.Type)
		}
		if err := st.toolCall(int64(i), tc.ID, tc.Function.Name, ""); err != nil {
			return llm.Response{}, err
		}
		if err := st.toolCall(int64(i), "", "", tc.Function.Arguments); err != nil {
			return llm.Response{}, err
		}
	}
	if res.JSON.Usage.Valid() {
		u := res.Usage
		hit, _ := extraInt(u.JSON.ExtraFields, "prompt_cache_hit_tokens")
		st.setUsage(wireUsage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens, PromptCacheHitTokens: hit,
			PromptTokensDetails:     tokenDetails{CachedTokens: u.PromptTokensDetails.CachedTokens},
			CompletionTokensDetails: tokenDetails{ReasoningTokens: u.CompletionTokensDetails.ReasoningTokens}})
	}
	st.finish = mapFinish(ch.FinishReason)
	if st.finish == "" {
		return llm.Response{}, errors.New("llm: chat completions: answer has no finish reason")
	}
	if err := st.end(); err != nil {
		return llm.Response{}, err
	}
	return st.asm.Response(), nil
}

// params maps an llm.Request onto chat-completions parameters. Reasoning parts
// are not sent back: DeepSeek rejects reasoning_content in input messages.
func (c *Client) params(req llm.Request) (openai.ChatCompletionNewParams, error) {
	model := req.Model
	if model == "" {
		model = c.cfg.Model
	}
	if model == "" {
		return openai.ChatCompletionNewParams{}, errors.New("llm: no model: set Request.Model or ClientConfig.Model")
	}
	p := openai.ChatCompletionNewParams{Model: shared.ChatModel(model)}
	if c.cfg.MaxTokens > 0 {
		p.MaxTokens = param.NewOpt(int64(c.cfg.MaxTokens))
	}
	if req.System != "" {
		p.Messages = append(p.Messages, openai.SystemMessage(req.System))
	}
	for i, m := range req.Messages {
		switch m.Role {
		case llm.RoleSystem:
			p.Messages = append(p.Messages, openai.SystemMessage(m.Text()))
		case llm.RoleUser:
			p.Messages = append(p.Messages, openai.UserMessage(m.Text()))
		case llm.RoleAssistant:
			var a openai.ChatCompletionAssistantMessageParam
			calls := m.ToolCalls()
			if text := m.Text(); text != "" || len(calls) == 0 {
				a.Content.OfString = param.NewOpt(text)
			}
			for _, tc := range calls {
				a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
						ID:       tc.ID,
						Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: tc.Arguments},
					},
				})
			}
			p.Messages = append(p.Messages, openai.ChatCompletionMessageParamUnion{OfAssistant: &a})
		case llm.RoleTool:
			if m.ToolCallID == "" {
				return p, fmt.Errorf("llm: messages[%d]: tool message without ToolCallID", i)
			}
			p.Messages = append(p.Messages, openai.ToolMessage(m.Text(), m.ToolCallID))
		default:
			return p, fmt.Errorf("llm: messages[%d]: unknown role %q", i, m.Role)
		}
	}
	for i, t := range req.Tools {
		def := shared.FunctionDefinitionParam{Name: t.Name}
		if t.Description != "" {
			def.Description = param.NewOpt(t.Description)
		}
		if len(t.Parameters) > 0 {
			var schema shared.FunctionParameters
			if err := json.Unmarshal(t.Parameters, &schema); err != nil {
				return p, fmt.Errorf("llm: tools[%d] %s: parameters must be a JSON object: %w", i, t.Name, err)
			}
			def.Parameters = schema
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(def))
	}
	return p, nil
}

// streamState turns wire deltas into chunks: reasoning is block 0, text and
// tool calls get blocks 1.. in the order they first appear.
type streamState struct {
	onChunk      func(llm.Chunk) error
	asm          *llm.Assembler
	next         int
	textIdx      int
	reasoningIdx int
	calls        map[int64]int // wire tool-call index -> block index
	blocks       map[int]*llm.Part
	usage        *llm.Usage
	finish       string
}

func newStreamState(onChunk func(llm.Chunk) error) *streamState {
	return &streamState{
		onChunk: onChunk, asm: llm.NewAssembler(), next: 1, textIdx: -1, reasoningIdx: -1,
		calls: map[int64]int{}, blocks: map[int]*llm.Part{},
	}
}

func (s *streamState) emit(c llm.Chunk) error {
	s.asm.Add(c)
	if s.onChunk == nil {
		return nil
	}
	return s.onChunk(c)
}

func (s *streamState) start(idx int, typ string) error {
	s.blocks[idx] = &llm.Part{Type: typ}
	return s.emit(llm.Chunk{Type: llm.ChunkBlockStart, Index: llm.IntPtr(idx), BlockType: typ})
}

func (s *streamState) reasoning(text string) error {
	if text == "" {
		return nil
	}
	if s.reasoningIdx < 0 {
		s.reasoningIdx = 0
		if err := s.start(0, llm.PartReasoning); err != nil {
			return err
		}
	}
	s.blocks[s.reasoningIdx].Text += text
	return s.emit(llm.Chunk{Type: llm.ChunkReasoningDelta, Index: llm.IntPtr(s.reasoningIdx), Text: text})
}

func (s *streamState) text(text string) error {
	if text == "" {
		return nil
	}
	if s.textIdx < 0 {
		s.textIdx = s.next
		s.next++
		if err := s.start(s.textIdx, llm.PartText); err != nil {
			return err
		}
	}
	s.blocks[s.textIdx].Text += text
	return s.emit(llm.Chunk{Type: llm.ChunkTextDelta, Index: llm.IntPtr(s.textIdx), Text: text})
}

// toolCall folds one tool_calls delta: every wire delta becomes one
// tool-call-delta chunk carrying the call's id and name.
func (s *streamState) toolCall(wireIdx int64, id, name, args string) error {
	idx, ok := s.calls[wireIdx]
	if !ok {
		idx = s.next
		s.next++
		s.calls[wireIdx] = idx
		if err := s.start(idx, llm.PartToolCall); err != nil {
			return err
		}
	}
	b := s.blocks[idx]
	if b.ID == "" {
		b.ID = id
	}
	if b.Name == "" {
		b.Name = name
	}
	b.Arguments += args
	return s.emit(llm.Chunk{Type: llm.ChunkToolCallDelta, Index: llm.IntPtr(idx), ID: b.ID, Name: b.Name, ArgumentsDelta: llm.StrPtr(args)})
}

// wireChunk is what Stream reads of a streamed chat.completion.chunk.
type wireChunk struct {
	Choices []struct {
		Index int64 `json:"index"`
		Delta struct {
			Content string `json:"content"`
			// ReasoningContent is DeepSeek's; absent or null is none.
			ReasoningContent json.RawMessage `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int64  `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	// Usage is nil when absent or null (every chunk but the last).
	Usage *wireUsage `json:"usage"`
}

// wireUsage is the usage of a chat completion; PromptCacheHitTokens is
// DeepSeek's (0 when absent).
type wireUsage struct {
	PromptTokens            int64        `json:"prompt_tokens"`
	CompletionTokens        int64        `json:"completion_tokens"`
	PromptTokensDetails     tokenDetails `json:"prompt_tokens_details"`
	CompletionTokensDetails tokenDetails `json:"completion_tokens_details"`
	PromptCacheHitTokens    int64        `json:"prompt_cache_hit_tokens"`
}

// tokenDetails is prompt_tokens_details (cached_tokens) or
// completion_tokens_details (reasoning_tokens).
type tokenDetails struct {
	CachedTokens    int64 `json:"cached_tokens"`
	ReasoningTokens int64 `json:"reasoning_tokens"`
}

func (s *streamState) chunk(c wireChunk) error {
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue // only the first choice is requested
		}
		r, err := rawString("reasoning_content", ch.Delta.ReasoningContent)
		if err != nil {
			return err
		}
		if err := s.reasoning(r); err != nil {
			return err
		}
		if err := s.text(ch.Delta.Content); err != nil {
			return err
		}
		for _, tc := range ch.Delta.ToolCalls {
			if err := s.toolCall(tc.Index, tc.ID, tc.Function.Name, tc.Function.Arguments); err != nil {
				return err
			}
		}
		if ch.FinishReason != "" {
			s.finish = mapFinish(ch.FinishReason)
		}
	}
	if c.Usage != nil {
		s.setUsage(*c.Usage)
	}
	return nil
}

// setUsage maps wire usage. inputTokens counts the prompt tokens not read
// from the cache, as the original harness logs it (its logs show
// inputTokens + cacheReadTokens = prompt_tokens); the cache hit count is
// prompt_tokens_details.cached_tokens or DeepSeek's prompt_cache_hit_tokens.
func (s *streamState) setUsage(u wireUsage) {
	cached := u.PromptTokensDetails.CachedTokens
	if hit := u.PromptCacheHitTokens; hit > cached {
		cached = hit
	}
	input := u.PromptTokens - cached
	if input < 0 {
		input = 0
	}
	s.usage = &llm.Usage{
		InputTokens:     int(input),
		OutputTokens:    int(u.CompletionTokens),
		CacheReadTokens: int(cached),
		ReasoningTokens: int(u.CompletionTokensDetails.ReasoningTokens),
	}
}

// end sends the block-end chunks in block order, then usage and finish.
func (s *streamState) end() error {
	idxs := make([]int, 0, len(s.blocks))
	for i := range s.blocks {
		idxs = append(idxs, i)
	}
	sort.Ints(idxs)
	for _, i := range idxs {
		b := *s.blocks[i]
		if err := s.emit(llm.Chunk{Type: llm.ChunkBlockEnd, Index: llm.IntPtr(i), Block: &b}); err != nil {
			return err
		}
	}
	if s.usage != nil {
		u := *s.usage
		if err := s.emit(llm.Chunk{Type: llm.ChunkUsage, Usage: &u}); err != nil {
			return err
		}
	}
	return s.emit(llm.Chunk{Type: llm.ChunkFinish, Reason: &llm.FinishReason{Kind: s.finish}})
}

// mapFinish maps an OpenAI finish_reason to an llm.FinishReason kind.
func mapFinish(r string) string {
	switch r {
	case "":
		return ""
	case "stop":
		return llm.FinishStop
	case "tool_calls", "function_call":
		return llm.FinishToolCalls
	case "length":
		return llm.FinishLength
	case "content_filter":
		return llm.FinishContentFilter
	case "insufficient_system_resource": // DeepSeek: generation interrupted
		return llm.FinishError
	default:
		return llm.FinishOther
	}
}

// extraString reads a string field the SDK does not type (reasoning_content)
// from the raw JSON it keeps for unknown fields. Absent or null is "".
func extraString(fields map[string]respjson.Field, name string) (string, error) {
	f, ok := fields[name]
	if !ok {
		return "", nil
	}
	return rawString(name, json.RawMessage(f.Raw()))
}

// rawString decodes the JSON string of field name; absent (empty) or null
// is "".
func rawString(name string, raw json.RawMessage) (string, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("llm: %s: want a string, got %s: %w", name, raw, err)
	}
	return s, nil
}

func extraInt(fields map[string]respjson.Field, name string) (int64, error) {
	f, ok := fields[name]
	if !ok || f.Raw() == "" || f.Raw() == "null" {
		return 0, errors.New("absent")
	}
	var n int64
	err := json.Unmarshal([]byte(f.Raw()), &n)
	return n, err
}
