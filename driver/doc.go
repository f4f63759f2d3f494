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
// stop) that conformance (RunCase), snapshot and recording (Drive) and the
// e2e scenario runner are built on.
//
// # The environment
//
// Each case gets a fresh temporary working directory, a throw-away home
// folder beside it (Target.Home makes it the agent's HOME and XDG_*
// folders; files with a "~/" destination go there), its own mock model
// server on 127.0.0.1 (or the address of a recording proxy) and a fresh
// agent process in its own process group. The agent's argv, env values and
// --file templates see Vars: {{.BaseURL}} (http://127.0.0.1:PORT/v1),
// {{.URL}} (without /v1: Anthropic and Gemini clients), {{.Host}},
// {{.Port}}, {{.Cwd}}, {{.Home}}, {{.Case}}, {{.Model}};
// TODOHARNESS_MODEL_URL is always set. The mock serves the script over
// OpenAI chat, OpenAI Responses, Anthropic Messages and Gemini.
//
// RunCase drives a conformance case: after every prompt answer, every
// session/load answer and the last step it settles: it waits until the
// mock has no request in flight (mockmodel.Server.Activity) and both wires
// were quiet for CaseConfig.Settle, and, when the agent answered before the
// model was asked for the prompt's scripted turns (and no model request
// failed), for those turns too; updates that come after an answer are kept
// (StepResult.Settle and Settled say how long and why). A restart step
// shuts the process down as an editor does (close stdin, wait Grace,
// SIGTERM the group, wait Grace, SIGKILL the group) and starts a new one in
// the same directory; with CaseConfig.Exits, once a process of the run did
// not exit within Grace of its stdin closing, the others are signalled at
// once (ExitWatch, ProcResult.GraceCut). A case that exceeds its Timeout is killed with its
// whole process group. Drive sends a scenario's steps whatever each answered
// and normalises the agent's stdout (package acpnorm).
//
// # The ACP client
//
// The driver is the ACP client: it answers session/request_permission with
// an allow option (allow_once, else allow_always, exactly; cancelled when
// there is none, never a reject option), fs/read_text_file and
// fs/write_text_file for absolute paths inside the case's directory only,
// opened beneath it with os.Root (no symlink out, no check-then-use window)
// and only for regular files with one link (else -32602), and anything
// else with method-not-found (-32601), and records each request with what
// was asked (ProcResult.ClientRequests). Its own requests echoed back are
// never answered: the call fails saying so. Every write to the agent gives
// up when the case's context ends, and the case's end kills the process
// group whatever the driver is doing; on Linux the driver is a child
// subreaper and kills every descendant of a case when it ends
// (ProcResult.Killed). The wire is bounded (MaxWireLine, MaxWireMsgs,
// MaxWireBytes: a capped line is marked, a flood stops the case). It keeps
// the raw wire (both directions, every process of a case). SchemaValidator
// checks a message against the ACP JSON schema, by method (an embedded copy
// of the schema shipped in github.com/coder/acp-go-sdk; see
// ACPSchemaSource).
//
// # Presets
//
// Presets is the wiring that points a known agent at the mock: reference
// (the built-in agent), opencode (opencode acp, OpenAI chat), codex
// (codex-acp, OpenAI Responses), gemini (gemini --acp, Gemini), claude
// (claude-code-acp, Anthropic Messages). Each is a Target (command, env,
// files in the cwd or the throw-away home) plus what it is sure and unsure
// of; Preset.Render shows what it writes for given Vars, and `todoharness
// conform --preset NAME --explain` prints it. `todoharness peers` installs
// the agents from npm and runs the catalogue against each.
//
// # Dialects
//
// Agents other than this spec's have their own todo tool: opencode
// todowrite, codex update_plan ({plan: [{step, status}]}), gemini
// write_todos ({todos: [{description, status}]}), claude TodoWrite
// ({todos: [{content, status, activeForm}]}). DetectDialect finds the
// dialect from the tools an agent offers the model, and
// Dialect.TranslateArgs translates a canonical todo_write call (name and
// argument shape; extra item fields only when the agent's schema declares
// them).
package driver
