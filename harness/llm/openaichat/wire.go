package openaichat

import "encoding/json"

// The chat-completions request, as openai-go encoded it (field order
// included: a cassette recorded through the SDK keeps matching, and `cassette
// from-log` rebuilds the same bytes).

type chatRequest struct {
	Messages      []chatMessage  `json:"messages,omitempty"`
	Model         string         `json:"model"`
	MaxTokens     int64          `json:"max_tokens,omitempty"`
	StreamOptions *streamOptions `json:"stream_options,omitempty"`
	Tools         []chatTool     `json:"tools,omitempty"`
	Stream        bool           `json:"stream,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

// chatMessage is a system, user, assistant or tool message. Content is
// always sent except by an assistant message with tool calls and no text.
type chatMessage struct {
	Content    *string        `json:"content,omitempty"`
	ToolCalls  []chatToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
	Role       string         `json:"role"`
}

type chatToolCall struct {
	ID       string           `json:"id"`
	Function chatFunctionCall `json:"function,omitzero"`
	Type     string           `json:"type"`
}

type chatFunctionCall struct {
	Arguments string `json:"arguments"`
	Name      string `json:"name"`
}

type chatTool struct {
	Function chatFunction `json:"function"`
	Type     string       `json:"type"`
}

type chatFunction struct {
	Name        string         `json:"name"`
	Description string         `json:"description,omitempty"`
	Parameters  map[string]any `json:"parameters,omitzero"`
}

// wireChunk is what Stream reads of a streamed chat.completion.chunk
// (decodeChunk).
type wireChunk struct {
	Choices []wireChoice `json:"choices"`
	// Usage is nil when absent or null (every chunk but the last).
	Usage *wireUsage `json:"usage"`
	// Error is an error event's object ({"error":{"message",...}}).
	Error json.RawMessage `json:"error"`
}

// wireChoice is a chunk's choice.
type wireChoice struct {
	Index        int64     `json:"index"`
	Delta        wireDelta `json:"delta"`
	FinishReason string    `json:"finish_reason"`
}

// wireDelta is a choice's delta.
type wireDelta struct {
	Content string `json:"content"`
	// ReasoningContent is DeepSeek's; absent or null is none.
	ReasoningContent json.RawMessage `json:"reasoning_content"`
	ToolCalls        []wireToolCall  `json:"tool_calls"`
}

// wireToolCall is a delta's tool call.
type wireToolCall struct {
	Index    int64  `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// chatCompletion is what complete reads of a stream:false answer.
type chatCompletion struct {
	Choices []struct {
		Message struct {
			Content string `json:"content"`
			// ReasoningContent is DeepSeek's; absent or null is none.
			ReasoningContent json.RawMessage `json:"reasoning_content"`
			ToolCalls        []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	// Usage is nil when absent or null.
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
