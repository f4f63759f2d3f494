// Package mockmodel is the scripted, deterministic model the harness talks to
// in tests, in the conformance runner and in `todoharness chat` without a key.
//
// A Script is a list of turns; each turn answers exactly one model request
// with reasoning text, text, tool calls (arguments written as objects), a
// finish reason and token usage, and may check the request it answers with
// an Expect (the last message is a tool result, is an error, contains a text;
// the tools offered include a name). The same script has two faces:
//
//   - Model, an in-process llm.Model that emits the harness's chunk
//     vocabulary (block-start, reasoning-delta, text-delta, tool-call-delta,
//     block-end, usage, finish) exactly as the llm HTTP client would emit it
//     for the same turn streamed by the Server;
//   - Server, an httptest.Server-shaped HTTP server on 127.0.0.1 that speaks
//     OpenAI chat completions (POST /v1/chat/completions and
//     /chat/completions, streaming and not; GET /v1/models).
//
// Both keep a Journal of every request they received, in a canonical shape
// (llm messages and tool specs plus the raw body). A request past the end of
// the script, a malformed body or a failed expect is answered with an error
// that names the script file, the turn and what differed, and the journal
// records it too.
//
// # Script format (YAML)
//
//	name: todo-plan            # optional
//	turns:                     # or: the file is just the list of turns
//	  - reasoning: Plan first.
//	    toolCalls:
//	      - name: todo_write   # id defaults to call_N, N = position of the
//	        arguments:         # call among all calls of the script (1-based)
//	          todos:
//	            - {content: read the code, status: in_progress}
//	    # finish defaults to tool-calls when there are tool calls, else stop
//	    usage: {inputTokens: 10, outputTokens: 5}
//	    chunkSize: 8           # bytes of argument JSON per streamed delta
//	  - expect:
//	      lastMessage: tool    # tool | user | assistant | system
//	      lastIsError: false
//	      lastContains: "Updated todo list"
//	      toolsInclude: [todo_write]
//	    text: DONE
//
// Turn fields: text, reasoning, toolCalls (name, arguments as an object, or
// rawArguments as a verbatim string for malformed-JSON tests; optional id),
// finish (stop | tool-calls | length | content-filter), usage (inputTokens,
// outputTokens, cacheReadTokens, reasoningTokens), chunkSize, expect, and
// fault:
//
//   - close-mid-stream: write half of the answer, then drop the connection
//     (in-process: emit the same chunks, then return an error);
//   - http-500: answer HTTP 500 with an OpenAI error body (in-process: return
//     an error before any chunk);
//   - hang: write half of the answer, then wait until the request is
//     cancelled (for context-cancellation tests).
//
// Turns are numbered from 1 in messages ("turn 2 of 3"); JournalEntry.TurnIndex
// is the 0-based Go index. Every request consumes one turn, including one
// whose expect failed, so request N always meets turn N.
//
// # Error results on the OpenAI wire
//
// OpenAI chat messages carry no error flag on tool results. The server marks
// a role "tool" message IsError when its text starts with "Error:", which is
// how the harness (and the original implementation) words every failed tool
// result. The in-process model sees the harness's own IsError flag.
//
// # Streaming shape
//
// Reasoning and text are split into word-sized deltas (leading whitespace
// kept with the word); tool-call argument JSON is split into chunkSize-byte
// deltas (never inside a UTF-8 sequence), after a first delta that carries the
// id, the name and empty arguments. Blocks are numbered reasoning 0, then
// text and tool calls from 1 in order. All block-end chunks come after the
// deltas, followed by usage and finish, as in logs of the original harness.
package mockmodel
