// Package driver launches and drives any ACP agent: the agent under test as
// a Target (a command line, or a Go function run in process) with its
// template variables (Vars) and the presets that point known agents at the
// mock model; Launch and Agent, which start it in a fresh process group
// (its descendants found and ended with it) and speak ACP to it on stdio,
// answering its client-side requests inside a file-system sandbox rooted at
// its working directory; the wire log of every message both ways; the ACP
// schema the messages are validated against; the todo tool dialects of
// known agents; one Step type; and one case environment (Env: a temporary
// cwd and home, the model server, the variables, the launch, the steps, the
// stop) that conformance, snapshot, recording and the e2e scenario runner
// are built on.
package driver
