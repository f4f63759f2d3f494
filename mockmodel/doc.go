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
//   - Server, an httptest.Server-shaped HTTP server on 127.0.0.1 that
//     speaks the model APIs Wires describes, chosen by the request path,
//     each streaming and not (see Wire formats below).
//
// Both keep a Journal of every request they received, raw and in one
// canonical shape whatever the API: the wire it came on, the system text,
// llm messages (tool calls as assistant tool-call parts, tool results as
// tool messages with their IsError flag), the tools offered with their JSON
// Schemas, and the raw body. A request past the end of the script, a
// malformed body or a failed expect is answered with an error, in the
// API's own error shape, that names the script file, the turn and what
// differed, and the journal records it too.
//
// # Wire formats
//
// One script, every API at once; every request takes the next turn,
// whichever API it came on (JournalEntry.Wire says which). Wires lists
// the APIs with their endpoints; each is one value in its own
// wire_<name>.go, whose type's comment says what its requests and answers
// look like (docs/mock-scripts.md has the table for users).
//
// Reasoning is always sent, in each API's reasoning shape, whether or not
// the request asked for it: the script is the truth. Usage maps onto each
// API's own fields (prompt counts include the cache reads where the API
// counts them so; Anthropic's input_tokens does not; Gemini's
// candidatesTokenCount excludes thoughtsTokenCount).
//
// Errors: OpenAI {error:{message, type, param, code}}, Anthropic
// {type:"error", error:{type, message, details:{error_code}}}, Gemini
// {error:{code, message, status, details:[ErrorInfo{reason}]}}; the mock's
// Code* constant is the code, error_code or reason. Refusals carry
// x-should-retry: false (a retry would take the next turn); an injected
// http-500 does not. An unknown endpoint answers 404 in the shape its path
// or its SDK's headers suggest; HEAD / (a client's reachability check)
// answers 200 with no body and is not journaled. A turn whose rawArguments are not a JSON
// object cannot be said where arguments travel as an object (Gemini,
// Anthropic non-streaming): the request is refused with
// CodeUnsupported, naming the turn.
//
// # Script format (YAML)
//
//	name: todo-plan            # optional
//	sideText: Untitled         # optional: answers side requests (below)
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
// rawArguments as a verbatim string for malformed-JSON tests; optional id;
// reject, an annotation for the conformance runner that the mock ignores;
// argumentDeltas), finish (stop | tool-calls | length | content-filter),
// usage (inputTokens, outputTokens, cacheReadTokens, reasoningTokens),
// chunkSize, expect, reasoningDeltas and textDeltas (the exact streamed
// pieces), and fault. The YAML fields are the JSON names of Turn and
// ToolCall: a field added to those types is read from scripts (and from
// conformance cases, which DecodeTurns reads too) with no loader change.
// Faults:
//
//   - close-mid-stream: write half of the answer, then drop the connection
//     (in-process: emit the same chunks, then return an error);
//   - http-500: answer HTTP 500 in the wire's error shape (in-process:
//     return an error before any chunk);
//   - hang: write half of the answer, then wait until the request is
//     cancelled (for context-cancellation tests).
//
// Side requests: with sideText set, a request that offers no tools (a real
// agent's session-title, topic or next-speaker request beside the agent
// loop, whose requests always offer tools) is answered with that text and
// takes no turn; its journal entry has Side set and TurnIndex -1. The
// conformance runner sets it, so a real agent's side requests do not eat
// the scripted turns.
//
// Turns are numbered from 1 in messages ("turn 2 of 3"); JournalEntry.TurnIndex
// is the 0-based Go index. Every request consumes one turn, including one
// whose expect failed, so request N always meets turn N.
//
// # Error results
//
// JournalEntry.ToolErrors says where a tool result's IsError comes from.
// Anthropic's tool_result carries is_error, Gemini's functionResponse an
// "error" field in its response (its text is that field, or else the
// "output" field, or else the response as JSON), and the in-process model
// sees the harness's own flag: ToolErrorsFlag. OpenAI chat and Responses
// messages carry no error flag: the server marks a tool result IsError
// when its text starts with "Error:", which is how the harness (and the
// original implementation) words every failed tool result:
// ToolErrorsPrefix.
//
// # Streaming shape
//
// In every API, reasoning and text are split into word-sized deltas (leading whitespace
// kept with the word); tool-call argument JSON is split into chunkSize-byte
// deltas (never inside a UTF-8 sequence), after a first delta that carries the
// id, the name and empty arguments. In the harness's chunk vocabulary (the
// in-process model, and the llm client reading chat completions) blocks are
// numbered reasoning 0, then text and tool calls from 1 in order, and all
// block-end chunks come after the deltas, followed by usage and finish, as
// in logs of the original harness. On the Responses and Anthropic wires a
// block (output item, content block) closes before the next one opens, as
// those APIs do.
package mockmodel
