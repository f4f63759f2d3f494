// Package openaichat is a streaming llm.Model client for OpenAI-compatible
// chat-completions servers (DeepSeek, the mock model server), built on
// openai-go. It turns wire deltas into the llm chunk vocabulary.
//
// It lives apart from package llm so that importers of the on-disk
// vocabulary (session log, mock model, conformance runner) do not compile
// the openai-go SDK.
package openaichat
