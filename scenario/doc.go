// Package scenario runs the e2e scenarios of fixtures/e2e/ through the
// reference harness exactly as an editor would drive it: the ACP bridge
// (harness/acp) serving an in-process ACP client over pipes, the agent loop,
// the shipped composition's tools, and the llm HTTP client, whose transport
// is a cassette Recorder (record or replay).
//
// A scenario is a folder holding input.json (the ACP steps, in the format of
// the original implementation's interop fixtures: {"steps": [{"op":
// "initialize"}, {"op": "newSession"}, {"op": "prompt", "text": "..."}]}),
// cassette.yaml (the recorded model exchanges), and optionally
// mock-script.yaml (a mockmodel script the cassette was recorded against
// when it was not recorded against a real model).
//
// The comparisons the e2e tier makes are computed here too, so that
// `todoharness record` can check a fresh cassette the same way: ACPGolden
// keeps the normalised plan, tool_call and tool_call_update notifications and
// the prompt answers; LogGolden keeps the session log's structure (turns,
// steps, user messages, the part types of assistant messages, tool calls with
// their arguments, tool results, todo writes), never free-form model text.
package scenario
