// Package mock is the mock tier (ginkgo label tier:mock): the scripted mock
// model on its own — script loading and its errors, the in-process model,
// side requests, the HTTP server and each wire's encoding (OpenAI chat
// completions and Responses, Anthropic Messages, Gemini), faults and the
// request journal. The SDK-driven checks of the wires are tier:wire.
package mock
