// Package agent is the reference harness's agent loop. A turn appends
// turn/start and the user's message, then runs steps: each step asks the
// model (history derived from the session surface, tools from the registry),
// records the streamed chunks and the assembled assistant message, executes
// every tool call with this agent as the owner, records the results, and
// repeats while the model keeps calling tools. Every event goes to the
// session log as it happens, so a model error or a cancellation ends the
// turn without losing anything already written.
package agent
