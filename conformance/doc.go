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
//	// rep.OK, rep.Checks, rep.WriteJSON; report.WriteSummary(w, rep, false)
//
// Run is three parts. The drive starts the agent and runs each case's steps
// (caseRun: set up, run, one explicit teardown) and collects its Evidence:
// the ACP wire both ways with the time of every line, the steps, the model
// journal, the processes. Evidence is plain data and serialises to JSON
// (evidence.json per case, which report.WriteTranscripts writes under
// --out; ReadEvidenceDir reads them back). Judge, in the spirit of testing/fstest.TestFS, is a pure function
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
//	    cancel: true     # optional: session/cancel once the turn shows its write taken
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
// Package driver runs each case (driver.RunCase): a fresh temporary working
// directory and throw-away home, its own mock model server, a fresh agent
// process in its own process group, the steps, the settle after every
// prompt answer, the editor-style shutdown; the driver is the ACP client
// and keeps the raw wire, bounded. Its package doc says how. A request
// offering no tools (a real agent's title or topic request) is a side
// request answered with SideText outside the script and kept out of the
// checks (Evidence.SideRequests). Checks read the raw JSON of the wire,
// because SDK decoders misfile update kinds they do not know, and
// ACP-SCHEMA-1 validates every message the agent sends against the ACP
// JSON schema (driver.SchemaValidator; see ACPSchemaSource). The second
// wire is the mock model's journal: the requests the agent sent the model,
// in canonical form (messages, tool results with their error flag, tools
// offered with their schemas). Config.Repeat runs every case that many
// times and judges each run apart: a check whose outcome differs between
// runs is Flaky (never a pass; a flaky required check fails the run), a
// run that judged it nowhere as the run judged it elsewhere (ACP-EXIT-1
// once an earlier process showed the agent does not exit on its own:
// driver.ExitWatch) aside. A case that exceeds Timeout is killed with its whole process group and
// fails with the last lines of the agent's stderr; a crash, a line of
// stdout that is not JSON-RPC or an unanswered initialize fail the case,
// never the runner.
//
// # Reports
//
// Report.WriteJSON writes the whole report, naming what judged what
// (ToolVersion, CatalogueVersion, the agent's own AgentInfo from its
// initialize answer, Started, durations in milliseconds). Package
// conformance/report draws a Report for readers: the text summary (the
// table and the verdict, report.WriteSummary), the evidence and a
// transcript per failing case (report.WriteTranscripts), JUnit XML (one
// test case per check), the HTML page (`conform --html`, `peers --html`)
// and GitHub Actions annotations (`conform --format github`). Config.Strict (JudgeConfig
// .Strict, `--strict`) makes a failed SHOULD check fail the run as a MUST
// does: Report.Required says which checks must pass, Report.FailsRun which
// results fail the run, and every writer asks them.
//
// # Presets and dialects
//
// The presets that point known agents at the mock (driver.Presets) and
// the todo tools of other agents (driver.Dialects) are the driver's. The
// cases' scripts are written for todo_write: the runner runs the probe
// case first, detects the dialect from the tools the agent offers the
// model, and translates every scripted todo call (the other cases start
// meanwhile, once the probe's initialize is answered, and write their
// scripts before their first prompt: driver.Scheduler.Script). The ACP side is the same
// for all: plan entries are compared with the canonical list. Checks tied
// to this spec's own tool (its schema, its validation rules, its result
// text) are n/a for other dialects. Config.Dialect forces a dialect.
package conformance
