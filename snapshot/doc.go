// Package snapshot runs the original implementation's ACP snapshot
// scenarios against any ACP agent (`todoharness snapshot run`).
//
// A scenario is a folder in the original's layout
// (examples/acp-agent/tests/snapshots/<name>/ of deepseek-harness):
// input.json (the ACP steps: initialize, newSession, prompt), session.jsonl
// (the session the original recorded, in any format the session reader
// takes) with its subagents' logs session.1.jsonl, session.2.jsonl, … beside
// it, and the expected normalised stdout, stdout.expected.jsonl (the
// original's current name) or stdout.golden.jsonl (its name at the RFC).
//
// Run rebuilds the model's answers from the logs (ScriptFromLogs: one mock
// turn per model step, streamed in the recorded chunks), serves them from
// the mock model, starts the agent in a fresh working directory through a
// driver.Target (presets, --env and --file as in `conform`), drives the
// steps, normalises the agent's stdout the way the original's snapshot kit
// does (Normalize: JSON-RPC ids renumbered in first-seen order, session ids
// and every UUID to {{sessionId}}, the cwd and its aliases to {{cwd}},
// messageId to {{messageId}}, usage_update's used to {{usedTokens}}) and
// compares it with the expected stdout, key order aside. The verdict of a
// scenario is pass, fail (with a unified diff) or error (it could not run,
// with why); Report writes them as text and as JUnit XML.
//
// docs/snapshots.md lists the differences expected between the original's
// stdout and the reference agent's.
package snapshot
