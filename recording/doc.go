// Package recording records and replays any ACP agent's model traffic for
// one e2e scenario (`todoharness record --agent` and `todoharness replay`).
//
// The agent is started exactly as `todoharness conform` starts it (a
// driver.Target: command and preset templates, --env, --file, a
// throw-away HOME), but {{.BaseURL}} / {{.URL}} point at a
// proxy.Proxy on 127.0.0.1 instead of the mock model. Recording, the
// proxy forwards every request to the upstream provider through a go-vcr
// recorder that scrubs credentials before anything is written; replaying,
// the proxy answers from the cassette and nothing leaves the machine. The
// scenario's input.json steps are driven over ACP on stdio as the
// catalogue drives them.
//
// A recording writes, into the scenario folder, only after the new cassette
// was replayed once with the upstream gone and gave the same plan:
//
//   - cassette.yaml: the exchanges, with a provenance block (agent command
//     and version, wire, upstream host, model, date, tool version);
//   - stdout.golden.jsonl: the agent's ACP stdout, normalised (ids,
//     session ids, cwd) and scrubbed of every known secret;
//   - plan.golden.jsonl: the agent's plan notifications, normalised, one
//     per line with sorted keys: what a replay compares;
//   - tools.golden.json and system.golden.md: the tool definitions and the
//     system prompt the agent sent (request pins; cwd, home and dates
//     normalised), so that a change of a tool's schema or description is
//     a reviewable diff.
//
// A replay compares the plan notifications, and the request pins, with
// those goldens; a request the cassette does not hold fails with the
// nearest recorded request and a diff (replay.MissError).
package recording
