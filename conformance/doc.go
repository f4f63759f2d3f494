// Package conformance is the black-box conformance runner for the todo_write
// contract: it starts any ACP agent as a subprocess, points it at the
// scripted mock model (package mockmodel), drives it over ACP, and judges a
// catalogue of checks clause by clause. One call, Run, does the whole job;
// the `todoharness conform` command and the tier:conformance ginkgo suite
// are thin shells over it.
//
//	rep, err := conformance.Run(ctx, conformance.Config{
//		Agent: driver.Target{Command: []string{"my-agent", "--acp", "--base-url", "{{.BaseURL}}"}},
//		Cases: cases, // conformance.LoadCases(conformancefixtures.FS, ".")
//	})
//	// rep.OK, rep.Checks, rep.WriteSummary / WriteJSON / WriteJUnit / WriteTranscripts
//
// Run is three parts. The drive starts the agent and runs each case's steps
// (caseRun: set up, run, one explicit teardown) and collects its Evidence:
// the ACP wire both ways with the time of every line, the steps, the model
// journal, the processes. Evidence is plain data and serialises to JSON
// (evidence.json per case under Config.Out; ReadEvidenceDir reads them
// back). Judge, in the spirit of testing/fstest.TestFS, is a pure function
// from the evidence, the catalogue and the baseline to the Report: it
// starts nothing, so a saved run is judged again with the current catalogue
// (`todoharness conform --judge DIR`).
//
// # Checks
//
// Catalogue returns the checks. Each has a stable ID (TW-PLAN-1, ...), a
// level (MUST, SHOULD, INFO), the sentence of the spec it tests (quoted from
// upstream texts cited by repository, commit and path, from the ACP schema
// shipped in the SDK module, or from docs/conformance.md) and a judging
// function over one case's Evidence. A check's outcome is pass, fail, xfail
// (every failure matches an entry of the baseline), n/a (the check only
// makes sense for the canonical todo_write dialect) or not-run (with the
// reason: no selected case fed it, its case did not complete, the run was
// interrupted). A check is fed by the cases that list it (wire-level checks,
// Always, by every case): it fails if it fails on any of them. A case that
// did not complete (timeout, crash, protocol breakage) fails RUN-1 and
// leaves the other checks it feeds not run; a request answered with a
// JSON-RPC error stops the case and fails the checks that needed it,
// quoting the error. The verdict (Report.Verdict) is PASS only when every
// MUST check that applies was judged and passed; FAIL when one failed
// unexpectedly or a baseline entry (ExpectedFailure: a check, optionally
// cases and a message pattern) matches no failure; INCOMPLETE when a MUST
// check was not judged; INTERRUPTED when the run's context ended first.
//
// # Cases
//
// A case is data: fixtures/conformance/<case>/case.yaml, embedded in the
// binary by package conformancefixtures; users add folders in the same
// format. Fields:
//
//	title: what the case shows
//	probe: true          # optional: the dialect is detected from this case
//	checks: [TW-PLAN-1, TW-REPLACE-1]
//	steps:               # ACP steps, as in the interop input.json files
//	  - op: initialize   # initialize | newSession | prompt | restart | loadSession
//	  - op: newSession
//	  - op: prompt
//	    text: Plan the work with your todo tool, then reply DONE.
//	    cancel: true     # optional: session/cancel once the turn shows a plan
//	  - op: restart      # editor-style shutdown, fresh process, same cwd
//	  - op: initialize
//	  - op: loadSession  # the session made by newSession
//	script:              # the mock model's turns (mockmodel format), canonical
//	  - toolCalls:       # todo_write calls; translated into the dialect
//	      - name: todo_write
//	        reject: true # the contract requires the agent to refuse this call
//	        arguments: {todos: [{content: x, status: in_progress}]}
//	    chunkSize: 4     # any mockmodel turn field works: chunkSize, fault, expect, usage...
//	  - text: DONE
//
// The script is read by mockmodel.DecodeTurns, the mock's own loader: the
// same fields, the same checks and errors naming case.yaml's line, turn and
// field. reject is the one annotation the mock ignores.
//
// Every prompt step consumes script turns up to and including the next turn
// without tool calls: that is how the runner knows which writes belong to
// which prompt (and therefore which plan updates answer which write).
//
// # Running a case
//
// Each case gets a fresh temporary working directory, a throw-away home
// folder beside it (Target.Home makes it the agent's HOME and XDG_*
// folders; files with a "~/" destination go there), its own mock model
// server on 127.0.0.1 and a fresh agent process in its own process group.
// The agent's argv, env values and --file templates see Vars: {{.BaseURL}}
// (http://127.0.0.1:PORT/v1), {{.URL}} (without /v1: Anthropic and Gemini
// clients), {{.Host}}, {{.Port}}, {{.Cwd}}, {{.Home}}, {{.Case}},
// {{.Model}}; TODOHARNESS_MODEL_URL is always set. The mock serves the
// script over OpenAI chat, OpenAI Responses, Anthropic Messages and Gemini;
// a request offering no tools (a real agent's title or topic request) is a
// side request answered with SideText outside the script and kept out of
// the checks (Evidence.SideRequests). After every prompt answer, every
// session/load answer and the last step the runner settles: it waits until
// the mock has no request in flight (mockmodel.Server.Activity) and both
// wires were quiet for Config.Settle, and, when the agent answered before
// the model was asked for the prompt's scripted turns (and no model request
// failed), for those turns too; updates that come after an answer are kept
// and judged with their turn, and ACP-TURN-1 lists them (StepResult.Settle
// and Settled say how long and why). Config.Repeat runs every case that
// many times and judges each run apart: a check whose outcome differs
// between runs is Flaky (never a pass; a flaky required check fails the
// run). A restart step
// shuts the process down as an editor does (close stdin, wait Grace, SIGTERM
// the group, wait Grace, SIGKILL the group) and starts a new one in the same
// directory. A case that exceeds Timeout is killed with its whole process
// group and fails with the last lines of the agent's stderr; a crash, a line
// of stdout that is not JSON-RPC or an unanswered initialize fail the case,
// never the runner.
//
// The runner is the ACP client: it answers session/request_permission with
// an allow option (allow_once, else allow_always, exactly; cancelled when
// there is none, never a reject option), fs/read_text_file and
// fs/write_text_file for absolute paths inside the case's directory only,
// opened beneath it with os.Root (no symlink out, no check-then-use window)
// and only for regular files with one link (else -32602), and anything
// else with method-not-found (-32601), and records each request with what
// was asked (ProcResult.ClientRequests, the transcript). Its own requests
// echoed back are never answered: the call fails saying so. Every write to
// the agent gives up when the case's context ends, and the case's end kills
// the process group whatever the runner is doing; on Linux the runner is a
// child subreaper and kills every descendant of a case when it ends
// (ProcResult.Killed). The wire is bounded (maxWireLine, maxWireMsgs,
// maxWireBytes: a capped line is marked, a flood stops the case). It keeps the raw wire (both directions, both
// processes of a load case): checks read raw JSON, because SDK decoders
// misfile update kinds they do not know, and ACP-SCHEMA-1 validates every
// message the agent sends against the ACP JSON schema, by method (an
// embedded copy of the schema shipped in github.com/coder/acp-go-sdk; see
// ACPSchemaSource). The second wire is the mock model's journal: the
// requests the agent sent the model, in canonical form (messages, tool
// results with their error flag, tools offered with their schemas).
//
// # Reports
//
// Report.WriteSummary is the table and the verdict; WriteJSON the whole
// report, naming what judged what (ToolVersion, CatalogueVersion, the
// agent's own AgentInfo from its initialize answer, Started, durations in
// milliseconds); WriteJUnit one test case per check; WriteGitHub GitHub
// Actions annotations (`conform --format github`); WriteTranscripts the
// evidence and a transcript per failing case. Config.Strict (JudgeConfig
// .Strict, `--strict`) makes a failed SHOULD check fail the run as a MUST
// does: Report.Required says which checks must pass, Report.FailsRun which
// results fail the run, and every writer asks them.
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
// The cases' scripts are written for todo_write. Other agents have their own
// todo tool: opencode todowrite, codex update_plan ({plan: [{step,
// status}]}), gemini write_todos ({todos: [{description, status}]}), claude
// TodoWrite ({todos: [{content, status, activeForm}]}). The runner runs the
// probe case first, detects the dialect from the tools the agent offers the
// model, and translates every scripted todo call (name and argument shape;
// extra item fields only when the agent's schema declares them). The ACP
// side is the same for all: plan entries are compared with the canonical
// list. Checks tied to this spec's own tool (its schema, its validation
// rules, its result text) are n/a for other dialects. Config.Dialect forces
// a dialect.
package conformance
