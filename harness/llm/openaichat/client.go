package openaichat

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"sort"
	"strings"

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
// (DeepSeek, the mock model server), on net/http and encoding/json. It
// implements llm.Model. It never reads the OPENAI_* environment variables.
type Client struct {
	cfg ClientConfig
	hc  *http.Client
	url string // the chat-completions endpoint
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
	return &Client{cfg: cfg, hc: hc, url: endpoint(u)}, nil
}

// endpoint is "chat/completions" resolved against the base URL with a
// trailing slash, as openai-go resolved it: the base URL's path is kept,
// a query or fragment of it is not sent.
func endpoint(base *url.URL) string {
	b := *base
	if !strings.HasSuffix(b.Path, "/") {
		b.Path += "/"
		if b.RawPath != "" {
			b.RawPath += "/"
		}
	}
	return b.ResolveReference(&url.URL{Path: "chat/completions"}).String()
}

// Stream sends req and streams the answer as chunks (see llm.Model).
func (c *Client) Stream(ctx context.Context, req llm.Request, onChunk func(llm.Chunk) error) (llm.Response, error) {
	body, err := c.body(req)
	if err != nil {
		return llm.Response{}, err
	}
	st := newStreamState(onChunk)
	if c.cfg.DisableStreaming {
		return c.complete(ctx, body, st)
	}
	body.StreamOptions = &streamOptions{IncludeUsage: true}
	body.Stream = true
	const what = "chat completions stream"
	res, err := c.post(ctx, what, body)
	if err != nil {
		return llm.Response{}, err
	}
	defer func() { _ = res.Body.Close() }()
	events := newEventReader(res.Body)
	for n := 1; ; n++ {
		data, err := events.next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return llm.Response{}, wrapErr(ctx, what, err)
		}
		if bytes.HasPrefix(data, []byte("[DONE]")) {
			break
		}
		var wc wireChunk
		if err := decodeChunk(data, &wc); err != nil {
			return llm.Response{}, fmt.Errorf("llm: %s: event %d: %w: %s", what, n, err, snippet(data))
		}
		if len(wc.Error) > 0 && string(wc.Error) != "null" {
			return llm.Response{}, fmt.Errorf("llm: %s: event %d: %w", what, n, streamError(wc.Error))
		}
		if err := st.chunk(wc); err != nil {
			return llm.Response{}, err
		}
	}
	if err := ctx.Err(); err != nil {
		return llm.Response{}, fmt.Errorf("llm: %s: %w", what, err)
	}
	if st.finish == "" {
		msg := "llm: chat completions stream ended without a finish reason (connection closed mid-stream?)"
		if events.count == 0 && !isEventStream(res.Header) {
			msg = fmt.Sprintf("llm: chat completions stream: the answer (Content-Type %q) holds no server-sent event", res.Header.Get("Content-Type"))
		}
		return llm.Response{}, errors.New(msg)
	}
	if err := st.end(); err != nil {
		return llm.Response{}, err
	}
	return st.asm.Response(), nil
}

// complete does a stream:false request and replays it as chunks.
func (c *Client) complete(ctx context.Context, body *chatRequest, st *streamState) (llm.Response, error) {
	const what = "chat completions"
	res, err := c.post(ctx, what, body)
	if err != nil {
		return llm.Response{}, err
	}
	defer func() { _ = res.Body.Close() }()
	raw, err := readAtMost(res.Body, maxAnswer)
	if err != nil {
		return llm.Response{}, wrapErr(ctx, what, fmt.Errorf("read the answer: %w", err))
	}
	var cc chatCompletion
	if err := json.Unmarshal(raw, &cc); err != nil {
		return llm.Response{}, fmt.Errorf("llm: %s: the answer is not a chat completion: %w: %s", what, err, snippet(raw))
	}
	if len(cc.Choices) == 0 {
		return llm.Response{}, errors.New("llm: chat completions: answer has no choices")
	}
	ch := cc.Choices[0]
	if r, err := rawString("reasoning_content", ch.Message.ReasoningContent); err != nil {
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
	if cc.Usage != nil {
		st.setUsage(*cc.Usage)
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

// body maps an llm.Request onto a chat-completions request body. Reasoning
// parts are not sent back: DeepSeek rejects reasoning_content in input
// messages.
func (c *Client) body(req llm.Request) (*chatRequest, error) {
	model := req.Model
	if model == "" {
		model = c.cfg.Model
	}
	if model == "" {
		return nil, errors.New("llm: no model: set Request.Model or ClientConfig.Model")
	}
	b := &chatRequest{Model: model}
	if c.cfg.MaxTokens > 0 {
		b.MaxTokens = int64(c.cfg.MaxTokens)
	}
	if req.System != "" {
		b.Messages = append(b.Messages, chatMessage{Role: llm.RoleSystem, Content: &req.System})
	}
	for i, m := range req.Messages {
		text := m.Text()
		switch m.Role {
		case llm.RoleSystem, llm.RoleUser:
			b.Messages = append(b.Messages, chatMessage{Role: m.Role, Content: &text})
		case llm.RoleAssistant:
			a := chatMessage{Role: llm.RoleAssistant}
			calls := m.ToolCalls()
			if text != "" || len(calls) == 0 {
				a.Content = &text
			}
			for _, tc := range calls {
				a.ToolCalls = append(a.ToolCalls, chatToolCall{ID: tc.ID, Type: "function",
					Function: chatFunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
			}
			b.Messages = append(b.Messages, a)
		case llm.RoleTool:
			if m.ToolCallID == "" {
				return nil, fmt.Errorf("llm: messages[%d]: tool message without ToolCallID", i)
			}
			b.Messages = append(b.Messages, chatMessage{Role: llm.RoleTool, Content: &text, ToolCallID: m.ToolCallID})
		default:
			return nil, fmt.Errorf("llm: messages[%d]: unknown role %q", i, m.Role)
		}
	}
	for i, t := range req.Tools {
		def := chatFunction{Name: t.Name, Description: t.Description}
		if len(t.Parameters) > 0 {
			// Decoded into a map and encoded again, as openai-go sent it:
			// keys sorted, numbers as float64.
			if err := json.Unmarshal(t.Parameters, &def.Parameters); err != nil {
				return nil, fmt.Errorf("llm: tools[%d] %s: parameters must be a JSON object: %w", i, t.Name, err)
			}
		}
		b.Tools = append(b.Tools, chatTool{Type: "function", Function: def})
	}
	return b, nil
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
