// Package agent is the agent tier (ginkgo label tier:agent): the agent loop
// of harness/agent against a fake model — steps, tool calls through the real
// registry, the session log it writes, errors and cancellation. The loop
// against the scripted mock model, in-process and over HTTP, is
// tier:fullloop.
package agent
