// Package fullloop is the full-loop tier (ginkgo label tier:fullloop): the
// reference harness's real agent loop, tool registry, todo_write plugin and
// session log, driven by a scripted model, end to end.
//
// Every scenario runs twice from one spec body, against two targets: the
// in-process mock model (mockmodel.NewModel), and the mock model's HTTP
// server on 127.0.0.1 reached through the real OpenAI-compatible llm client
// (labels target:in-process and target:http). Both faces of a script stream
// the same chunks, so a scenario's normalised session log has one golden
// under golden/fullloop/ for both targets (a scenario whose log carries a
// target-specific error text has one per target).
//
// Scripts are YAML under fixtures/fullloop/; their `expect` blocks check what
// the model sees. The stdio chat (stdio.Chat) renders the chat.yaml scenario
// on both targets, and the built `todoharness chat` binary, with piped stdin,
// against a script and against the mock server posing as DeepSeek: all four
// transcripts must equal golden/fullloop/chat.golden.
//
// Benchmarks: BenchmarkTurnInProcess and BenchmarkTurnHTTP run one scripted
// turn (model -> todo_write -> result -> text) end to end:
//
//	go test -run '^$' -bench . -benchmem ./suites/fullloop/
package fullloop
