// Package agent is the reference harness's agent loop. A turn appends
// turn/start and the user's message, then runs steps: each step asks the
// model (history derived from the session surface, tools from the registry),
// records the streamed chunks and the assembled assistant message, executes
// every tool call with this agent as the owner, records the results, and
// repeats while the model keeps calling tools, up to MaxSteps steps (then the
// turn ends with reason max-steps).
//
// Every event goes to the session log as it happens, so a model error (an
// error from the model, a panic in it, or a finish reason of error) or a
// cancellation ends the turn without losing anything already written: the
// open step gets its step/end and the turn its turn/end with reason error or
// cancelled. A step cancelled between tool calls still answers every call
// the model made (the calls not run get an error result), so the history
// stays valid for the next turn. A tool call without an id gets one
// (call_<turn>_<step>_<n>).
package agent
