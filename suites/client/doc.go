// Package client is the client tier (ginkgo label tier:client): the
// OpenAI-compatible streaming client (harness/llm/openaichat) against a fake
// server on 127.0.0.1 — request mapping, stream and non-stream answers
// turned into the chunk vocabulary, DeepSeek's reasoning and cache fields,
// errors, retries and cancellation.
package client
