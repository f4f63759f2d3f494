// Package e2e is the end-to-end tier (ginkgo label tier:e2e): the reference
// agent behind its ACP bridge, driven by an in-process ACP client through the
// scenarios of fixtures/e2e/, with the llm client's HTTP transport on a
// cassette (harness/llm/cassette).
//
// Without DEEPSEEK_API_KEY every scenario replays its committed cassette
// offline and must match golden/e2e/<scenario>.acp.golden (normalised plan,
// tool_call and tool_call_update notifications and prompt answers) and
// golden/e2e/<scenario>.log.golden (the session log's structure), and the
// request pins golden/e2e/<scenario>.tools.golden and .system.golden (the
// tool definitions and system prompt the reference agent sent, as
// recording.Pins writes them for `todoharness record`). The guards
// (scenario.Audit) fail the tier on a scenario folder without its
// input.json or cassette.yaml, a golden whose scenario folder does not
// exist, a cassette without its provenance block, and a cassette claiming
// real-model output recorded against a loopback address. The
// todo-plan replay must also reproduce the original implementation's plan
// and log from the interop fixture. The recording path is exercised offline
// against the local mock model server with a fake key; cassette misses and
// corrupt cassettes must fail with clear messages; committed cassettes must
// hold no credentials. The with-key specs record live against DeepSeek and
// skip, saying why, when DEEPSEEK_API_KEY is unset.
package e2e
