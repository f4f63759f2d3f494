package conformance

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/todoharness/todoharness/driver"
)

// CatalogueVersion is the version of the catalogue and the built-in cases
// together: the JSON report carries it (catalogueVersion), so two reports
// of the same version judged an agent by the same rules. Bump it when a
// check is added, removed or renamed, changes its level, its dialects or
// what it judges (its eval), or a built-in case changes what it sends or
// which checks it feeds; TestCatalogueVersion fails when the catalogue or
// the cases change and it was not bumped (an eval change it cannot see:
// bump by hand). See docs/conformance.md, "Catalogue version".
const CatalogueVersion = 9

// catalogueFingerprint pins CatalogueVersion to what it versions: the
// checks (ID, level, dialects, every case or not, title, quote) and the
// built-in cases (ID, steps, script, the checks fed), hashed by
// TestCatalogueVersion. The versions:
//   - 1: the first released catalogue (with ACP-TURN-1, MUST);
//     67a23473206892b745f6b3c5e4d51ebbec25efa2e88e53792f62155a7c1ee12f.
//   - 2: ACP-SESSION-1 and TW-FINAL-1 (MUST, every case); plans tied to
//     writes by what they show; every failure of a check kept; the cases
//     several-writes-one-turn, valid-invalid-valid, write-beside-other-tool,
//     large-list, unicode-content, reject-status-casing,
//     load-between-prompts, cancel-after-write (Step.Cancel);
//     6e761c3de9933b6aa20de5bf0d556c27809fe110fada84040d04a265f7cc13f5.
//   - 3: TW-VALID-MISSING and its case reject-missing-field;
//     7effd79d80ac5a90ff0e0bff58464b0a158c63a172060deee381755dd56dd697.
//   - 4: ACP-TOOLSTATUS-1 (SHOULD, every case); a call's verdict is read
//     from what the agent says of it (its result, the final status of
//     its ACP tool call, a plan showing its list), never assumed from the
//     case, and the checks that need a verdict no signal gives are not
//     judged for it; a call to a todo tool the agent did not offer is
//     judged for nothing;
//     38ed9a9f1f59b1783eec72bdd57203d8de97cce71d352b728afce1aee837df37.
//   - 5: content trimmed as the contract's JavaScript trim() (U+FEFF cut,
//     U+0085 kept), plans whose content differs from it only in the
//     characters common trim functions disagree on show the list for the
//     MUST checks, TW-PLAN-TRIM-1 (SHOULD) and its case
//     trim-edge-characters;
//     f4277845cb360c87b5cf00a2925bc92fb2f1008c58c3b6b2a9573fef81570f47.
//   - 6: TW-SCHEMA-3 (SHOULD): the schema requires no field beyond todos,
//     content and status; the case tool-offered feeds it;
//     5a7c544ccce4fc123c48cf87d42f2787024cdbae4fe6c0e78f12646941efa56f.
//   - 7: ACP-ISOLATION-1 (MUST, every case): each session of a process
//     that serves several (pooled cases, a case's second session/new) is
//     shown and sends its model only its own list; n/a when every case
//     has a process and a session of its own;
//     f4048b6e1067143e8eb3d9bb0c1f65a9c962d438e5392e7d4e83c08e0428cd83.
//   - 8: ACP-PLAN-FALLBACK-1 (MUST, every case; n/a on protocol version 2
//     and when the client advertised clientCapabilities.plan); every check
//     judged on the surface its process negotiated (ACP v2 on request:
//     plan_update items of one planId, the turn's end at its idle
//     state_update, a load as session/resume from the start, the v2
//     schema), and on v1 with clientCapabilities.plan the plan checks
//     read plan_update items; ACP-INIT-1 takes 1 from an agent offered 2;
//     the titles of ACP-INIT-1, ACP-TURN-1, TW-PLAN-1, TW-LOAD-CAP-1 and
//     TW-LOAD-1 say their v2 side;
//     e5a5adf83273a8c38d13fd1017163783d707900395d42ca2fe9f7455d433549d.
//   - 9: ACP-ISOLATION-1 also fails a pooled session's model request that
//     carries another session's scenario marker (its journal, or a
//     request the pooled model refused for carrying both);
//     b7f6d189ec38c7725dd351ff9cfc0a4475ebc9603d35906f1a2ce48dc041b12f.
const catalogueFingerprint = "b7f6d189ec38c7725dd351ff9cfc0a4475ebc9603d35906f1a2ce48dc041b12f"

// Level is how binding a check is. Only a failed MUST fails a run (and,
// under --strict, a failed SHOULD).
type Level string

// Levels.
const (
	MUST   Level = "MUST"
	SHOULD Level = "SHOULD"
	INFO   Level = "INFO"
)

// Outcome is the verdict of a check.
type Outcome string

// Outcomes. NotRun carries the reason the check could not be judged (no
// selected case feeds it, its case did not complete, the run was
// interrupted); NA means the check does not apply to the agent's dialect,
// or to any of the cases (ACP-ISOLATION-1 on a process per case);
// XFail is a failure the baseline expects (every failure of the check
// matches an entry of Config.Expected).
const (
	Pass   Outcome = "pass"
	Fail   Outcome = "fail"
	XFail  Outcome = "xfail"
	NA     Outcome = "n/a"
	NotRun Outcome = "not-run"
	// Flaky: the cases were run several times (Config.Repeat) and the
	// check's outcome differed between the runs. It is never a pass; a
	// flaky MUST check fails the run.
	Flaky Outcome = "flaky"
)

// Check is one clause of the contract, tied to one sentence of the spec.
type Check struct {
	// ID is stable: reports, expected-failure files and CI baselines key on it.
	ID    string `json:"id"`
	Level Level  `json:"level"`
	// Title says in a few words what is checked.
	Title string `json:"title"`
	// Spec is the sentence the check tests, quoted verbatim from Source.
	Spec string `json:"spec"`
	// Source names where Spec is quoted from.
	Source string `json:"source"`
	// Dialects lists the dialects the check applies to; empty means all.
	// Elsewhere the outcome is NA.
	Dialects []string `json:"dialects,omitempty"`
	// Always makes the check apply to every case, whether the case lists it
	// or not (wire-level checks).
	Always bool `json:"always,omitempty"`
	// Shared makes the check judge only the sessions that share an agent
	// process with another (pooled cases, conform --pool on, or a case's
	// second session/new): on a case with a process and a session of its
	// own the outcome is NA, and so on a run of such cases.
	Shared bool `json:"shared,omitempty"`

	// eval judges one case's evidence; seen says what a pass saw (the
	// REASON of a passing row: PassSeen), nil count when the check has no
	// words of its own (its title is said).
	eval evalFunc
	seen seenRule
}

// AppliesTo reports whether the check applies to dialect d.
func (c Check) AppliesTo(d string) bool {
	if len(c.Dialects) == 0 {
		return true
	}
	for _, x := range c.Dialects {
		if x == d {
			return true
		}
	}
	return false
}

// verdict is one check's outcome on one case.
type verdict struct {
	Outcome Outcome
	// Reason is the first failure (or why the check was not run).
	Reason string
	// Failures are every failure of the check on the case, in the order
	// found (Reason is the first); each is judged against the baseline
	// on its own. Empty on a verdict with one failure (Reason alone).
	Failures []string
	// Lines are the wire lines (by Seq) the verdict points at, each with
	// what is wrong there: the transcript marks them, and failures that
	// point at the same line are grouped as one root cause.
	Lines map[int]string
	// Blocked: not run on this case for a reason that forbids passing the
	// check on the others (it could not be judged where it mattered).
	Blocked bool
	// withheld: not judged on this case because the run judged it
	// elsewhere already (ACP-EXIT-1 on a process signalled at once, as
	// the run had seen the agent not exit on its own): a run of such
	// cases makes no check flaky (judgeRepeats).
	withheld bool
}

// at marks wire line seq (if any: seq >= 0) with note.
func (v verdict) at(seq int, note string) verdict {
	if seq < 0 {
		return v
	}
	if v.Lines == nil {
		v.Lines = map[int]string{}
	}
	v.Lines[seq] = note
	return v
}

func pass() verdict { return verdict{Outcome: Pass} }

// failures collects every failure of a check on one case: an eval adds
// each failure it finds and goes on looking, then returns orElse's
// verdict when it found none.
type failures struct{ v verdict }

// add records failure f (a failf verdict, with its marked lines).
func (fs *failures) add(f verdict) {
	if fs.v.Outcome != Fail {
		fs.v = verdict{Outcome: Fail, Reason: f.Reason}
	}
	fs.v.Failures = append(fs.v.Failures, f.Reason)
	for seq, note := range f.Lines {
		if _, marked := fs.v.Lines[seq]; !marked { // the line's first failure
			fs.v = fs.v.at(seq, note)
		}
	}
}

// failed reports whether a failure was added.
func (fs *failures) failed() bool { return fs.v.Outcome == Fail }

// orElse is the verdict: the failures found, else v.
func (fs *failures) orElse(v verdict) verdict {
	if fs.failed() {
		return fs.v
	}
	return v
}

// judgeEach is the shape most evals share: judge every item keep admits
// (nil: every item), gathering its failures in fs; the verdict is the
// failures found, else a pass, or not run for reason none when keep
// admitted no item.
func judgeEach[T any](items []T, keep func(T) bool, judge func(fs *failures, i int, it T), none string) verdict {
	n := 0
	var fs failures
	for i, it := range items {
		if keep != nil && !keep(it) {
			continue
		}
		n++
		judge(&fs, i, it)
	}
	if n == 0 {
		return skipf("%s", none)
	}
	return fs.orElse(pass())
}

// suffixed is v with s appended to its reason and to each failure.
func (v verdict) suffixed(s string) verdict {
	v.Reason += s
	v.Failures = slices.Clone(v.Failures)
	for i := range v.Failures {
		v.Failures[i] += s
	}
	return v
}

// all returns every failure of v (Reason alone when it has no list).
func (v verdict) all() []string {
	if len(v.Failures) > 0 {
		return v.Failures
	}
	if v.Outcome == Fail {
		return []string{v.Reason}
	}
	return nil
}

func failf(format string, a ...any) verdict {
	return verdict{Outcome: Fail, Reason: fmt.Sprintf(format, a...)}
}

// naf is the verdict of a check whose rule does not apply on this case's
// surface (a rule of another protocol version, or one the client's offer
// lifts): not applicable, never a pass.
func naf(format string, a ...any) verdict {
	return verdict{Outcome: NA, Reason: fmt.Sprintf(format, a...)}
}

// skipf is a verdict that could not be reached on this case (not run).
func skipf(format string, a ...any) verdict {
	return verdict{Outcome: NotRun, Reason: fmt.Sprintf(format, a...)}
}

// evalFunc judges one case's evidence. It may assume the case ran to
// completion unless the check is Always.
type evalFunc func(ev *Evidence) verdict

// Sources of quoted sentences. Upstream texts are cited by repository,
// commit and path (the texts are not copied into this repository); the
// sentences about how the runner itself behaves are quoted from
// docs/conformance.md of this repository.
const (
	srcUpstream = "deepseek-ai/deepseek-harness@9f1caf7c5b "
	srcREADME   = srcUpstream + "packages/todo/tool-todo/README.md"
	srcRFC      = srcUpstream + "docs/rfc/implemented/feature/2026-06-29-todo-write-tool.md"
	srcDoc      = "todoharness docs/conformance.md"
	srcSchema   = "ACP JSON schema (" + driver.ACPSchemaSource + ")"
	srcACP      = "ACP protocol v1 (agentclientprotocol.com: session setup, loading sessions)"
	// srcPlanOps is the protocol's own text on the plan operations a v1
	// client opts into (its sentence is quoted in docs/conformance.md).
	srcPlanOps = "ACP protocol v1 draft, Agent Plan, Plan Operations (agentclientprotocol/agent-client-protocol@b7f00054 docs/protocol/v1/draft/agent-plan.mdx): " +
		"\"Agents MUST NOT send plan_update or plan_removed unless the Client advertised plan. If the Client omits plan, the Agent MUST fall back to the existing plan update.\""
	// srcPromptTurn is the protocol's own text on when a prompt turn ends.
	srcPromptTurn = "ACP protocol v1, Prompt Turn, 4. Check for Completion (agentclientprotocol/agent-client-protocol@00816b899c docs/protocol/prompt-turn.mdx): " +
		"\"If there are no pending tool calls, the turn ends and the Agent MUST respond to the original session/prompt request with a StopReason\""
	// srcLifecycleV2 is the v2 draft's text on when a turn ends.
	srcLifecycleV2 = "ACP protocol v2 draft, Prompt Lifecycle (agentclientprotocol/agent-client-protocol@b7f00054 docs/protocol/v2/prompt-lifecycle.mdx): " +
		"\"When the Agent is ready to process a new prompt, it MUST report idle with a state_update notification. When the transition ends foreground work, the Agent MUST include the corresponding StopReason\"; " +
		"\"the Agent MUST send an idle state_update session update with the cancelled stop reason\""
)

// SpecSource is an upstream text the catalogue quotes from.
type SpecSource struct {
	// Cite is how checks cite it (Check.Source): repository@commit path.
	Cite string `json:"cite"`
	// File is the name of a copy of the text in a spec folder (the quote
	// test reads $TODOHARNESS_SPEC_DIR/<File> when it is there).
	File string `json:"file"`
	// SHA256 is the hex SHA-256 of the text at that commit: a copy whose
	// hash differs has drifted, and its quotes prove nothing.
	SHA256 string `json:"sha256"`
}

// SpecSources returns the upstream texts the catalogue quotes, with the
// SHA-256 of each.
func SpecSources() []SpecSource {
	return []SpecSource{
		{Cite: srcRFC, File: "todo-write-rfc.md", SHA256: "45d1d962447b1562e9264b766331b46e1f5f0a97f5cbc169cc544460ba40560b"},
		{Cite: srcREADME, File: "todo-tool-readme.md", SHA256: "3a898446113ce2bce014e14d7cda038a7f3108de52401e0cae8dfdcb0031e1ab"},
	}
}

// The IDs of the checks (Check.ID), as reports, baselines, cases'
// checks: lists and breakage rows spell them.
const (
	Run1             = "RUN-1"
	ACPInit1         = "ACP-INIT-1"
	ACPJSONRPC1      = "ACP-JSONRPC-1"
	ACPSchema1       = "ACP-SCHEMA-1"
	ACPSchema2       = "ACP-SCHEMA-2"
	ACPExit1         = "ACP-EXIT-1"
	ACPTurn1         = "ACP-TURN-1"
	ACPSession1      = "ACP-SESSION-1"
	ACPToolStatus1   = "ACP-TOOLSTATUS-1"
	ACPIsolation1    = "ACP-ISOLATION-1"
	ACPPlanFallback1 = "ACP-PLAN-FALLBACK-1"
	TWTool1          = "TW-TOOL-1"
	TWSchema1        = "TW-SCHEMA-1"
	TWSchema2        = "TW-SCHEMA-2"
	TWSchema3        = "TW-SCHEMA-3"
	TWReplace1       = "TW-REPLACE-1"
	TWEmpty1         = "TW-EMPTY-1"
	TWValidEmpty     = "TW-VALID-EMPTY"
	TWValidWS        = "TW-VALID-WS"
	TWValidDup       = "TW-VALID-DUP"
	TWValidTwoActive = "TW-VALID-TWOACTIVE"
	TWValidBadStatus = "TW-VALID-BADSTATUS"
	TWValidNotArray  = "TW-VALID-NOTARRAY"
	TWValidMissing   = "TW-VALID-MISSING"
	TWRejectKeep1    = "TW-REJECT-KEEP-1"
	TWCounts1        = "TW-COUNTS-1"
	TWCounts2        = "TW-COUNTS-2"
	TWHistory1       = "TW-HISTORY-1"
	TWHistory2       = "TW-HISTORY-2"
	TWPlan1          = "TW-PLAN-1"
	TWPlanTrim1      = "TW-PLAN-TRIM-1"
	TWFinal1         = "TW-FINAL-1"
	TWPlanPriority1  = "TW-PLAN-PRIORITY-1"
	TWPlanPriority2  = "TW-PLAN-PRIORITY-2"
	TWPlanNonNull1   = "TW-PLAN-NONNULL-1"
	TWLoadCap1       = "TW-LOAD-CAP-1"
	TWLoad1          = "TW-LOAD-1"
	TWLoad2          = "TW-LOAD-2"
)

// Catalogue returns every check, in report order. The IDs are stable.
func Catalogue() []Check {
	return []Check{
		{
			ID: Run1, Level: MUST, Always: true,
			Title:  "the agent answers every ACP request of the case in time and stays up until the client closes its stdin",
			Spec:   "Timeouts per case; a hung or crashing agent is a failed case, never a hung runner.",
			Source: srcDoc,
			eval:   evalRun,
			seen:   seenRun(),
		},
		{
			ID: ACPInit1, Level: MUST, Always: true,
			Title:  "initialize is answered with the protocolVersion offered (1; on request 2, which an agent without v2 answers with 1)",
			Spec:   "The protocol version the client specified if supported by the agent, or the latest protocol version supported by the agent.",
			Source: srcSchema + " InitializeResponse.protocolVersion",
			eval:   evalInit,
			seen:   seenInit(),
		},
		{
			ID: ACPJSONRPC1, Level: MUST, Always: true,
			Title:  "every line the agent writes to stdout is a JSON-RPC 2.0 message",
			Spec:   "A message (request, response, or notification) with `\"jsonrpc\": \"2.0\"` specified as [required by JSON-RPC 2.0 Specification][1].",
			Source: srcSchema,
			eval:   evalJSONRPC,
			seen:   seenJSONRPC(),
		},
		{
			ID: ACPSchema1, Level: MUST, Always: true,
			Title:  "every message on the wire is valid against the ACP JSON schema (by method)",
			Spec:   "All possible notifications that an agent can send to a client.",
			Source: srcSchema + " AgentNotification / AgentResponse / AgentRequest",
			eval:   evalSchema,
			seen:   seenSchema("the ACP schema"),
		},
		{
			ID: ACPSchema2, Level: INFO, Always: true,
			Title:  "every message is valid against the stable ACP schema (ACP-SCHEMA-1 also accepts the unstable draft)",
			Spec:   "All possible notifications that an agent can send to a client.",
			Source: srcSchema + " (stable) vs schema.unstable.json",
			eval:   evalStableSchema,
			seen:   seenSchema("the stable ACP schema"),
		},
		{
			ID: ACPExit1, Level: SHOULD, Always: true,
			Title:  "the agent exits on its own within the grace period once its stdin closes",
			Spec:   "A load case restarts the agent in the same working directory (agents keep sessions there), after shutting the first process down as an editor does: close its stdin, wait a grace period for it to flush and exit, only then signal it (real agents persist on the way out).",
			Source: srcDoc,
			eval:   evalExit,
			seen:   seenExit(),
		},
		{
			// MUST: the prompt-turn page of the protocol ends a turn only
			// when no tool call is pending, and then the agent MUST answer;
			// an answer followed by more of the turn's updates ended the
			// turn with tool calls pending (opencode's end_turn while its
			// todowrite ran), and an editor has stopped listening by then.
			ID: ACPTurn1, Level: MUST, Always: true,
			Title:  "the updates of a prompt turn come before its session/prompt answer (late ones are listed with how late); on protocol version 2, before the idle state_update that ends the turn, which carries its stopReason (cancelled after session/cancel)",
			Spec:   "Returns when the turn is complete with a stop reason",
			Source: srcSchema + " ClientRequest session/prompt (PromptRequest); " + srcPromptTurn + "; " + srcLifecycleV2,
			eval:   evalTurnEnd,
			seen:   seenTurnEnd(),
		},
		{
			// MUST: an editor routes an update by its sessionId; one for a
			// session it did not create or load on that connection is
			// dropped (a load replayed under another id restores nothing).
			ID: ACPSession1, Level: MUST, Always: true,
			Title:  "every session/update names a session the client created or loaded on that process (during a load, the loaded one); updates for any other session count for no plan check",
			Spec:   "The ID of the session this update pertains to.",
			Source: srcSchema + " SessionNotification.sessionId",
			eval:   evalSession,
			seen:   seenSession(),
		},
		{
			// SHOULD: an editor shows the tool call's status, the model
			// acts on its result; when they disagree, one of them is
			// wrong about the list. Only calls whose status and result
			// both say something are judged.
			ID: ACPToolStatus1, Level: SHOULD, Always: true,
			Title:  "the final status the agent reports for a scripted todo call (tool_call_update completed or failed) agrees with what its model was told (a plain result or an error)",
			Spec:   "The tool call failed with an error.",
			Source: srcSchema + " ToolCallStatus (failed; completed: \"The tool call completed successfully.\")",
			eval:   evalToolStatus,
			seen:   seenToolStatus(),
		},
		{
			// MUST: the list is the calling session's; in a process that
			// serves several sessions (conform --pool on, or a case that
			// opens a second session), one shown, or sent to its model,
			// what another session wrote breaks that. Judged on every
			// session of a pooled process, beside the others of that
			// process (a case that failed pooled and passed alone: on its
			// pooled session, and its failure is then this one, not
			// flaky), and on the later sessions of a case; n/a on a
			// process and a session per case.
			ID: ACPIsolation1, Level: MUST, Always: true, Shared: true,
			Title:  "in an agent process that serves several sessions (pooled cases, or a case's second session/new), each session is shown and sends its model only its own list: no plan, tool call output, agent message or model request of one carries a list or an item only another session of the process wrote, nor (pooled) another session's scenario marker (n/a when every case has a process and a session of its own)",
			Spec:   "The list belongs to the ONE agent session that called the tool (exec.agent.session); a non-agent caller is rejected.",
			Source: srcRFC,
			eval:   evalIsolation,
			seen:   seenIsolation(),
		},
		{
			// MUST: the protocol's own rule; a client that did not ask for
			// plan operations shows no list from them.
			ID: ACPPlanFallback1, Level: MUST, Always: true,
			Title:  "on protocol version 1, the agent sends plan_update or plan_removed only to a client that advertised clientCapabilities.plan, and otherwise the plan update (not applicable on version 2, or when the client advertised plan)",
			Spec:   "An agent sends `plan_update` or `plan_removed` only to a client that advertised `clientCapabilities.plan`; to any other it sends the list as a `plan` update.",
			Source: srcDoc + "; " + srcPlanOps,
			eval:   evalPlanFallback,
			seen:   seenPlanFallback(),
		},
		{
			ID: TWTool1, Level: MUST,
			Title:  "the todo tool is offered to the model under its name",
			Spec:   "Registers one tool, `todo_write(todos: [{ content, status }])`, on `ctx.tools`.",
			Source: srcREADME,
			eval:   evalTool,
			seen:   seenTool(),
		},
		{
			ID: TWSchema1, Level: MUST, Dialects: []string{driver.DialectTodoWrite},
			Title:  "the tool schema is an object requiring the complete todos array of {content: string, status}",
			Spec:   "The model sees `todo_write` with the complete-list array and the three status values.",
			Source: srcREADME,
			eval:   evalSchemaShape,
			seen:   seenSchemaShape(),
		},
		{
			ID: TWSchema2, Level: MUST,
			Title:  "status is an enum of exactly pending, in_progress, completed (other dialects: includes them)",
			Spec:   "`status` is one of `pending`, `in_progress`, `completed` — exactly the ACP `PlanEntryStatus` triple.",
			Source: srcREADME,
			eval:   evalStatusEnum,
			seen:   seenStatusEnum(),
		},
		{
			// SHOULD: a field the schema requires beyond content and
			// status is one the contract's calls never send; an agent
			// that holds the model to it refuses them (every MUST check
			// of the list then fails, and the run's note names the
			// field), one that does not still has the model send it on
			// every call.
			ID: TWSchema3, Level: SHOULD, Dialects: []string{driver.DialectTodoWrite},
			Title:  "the tool schema requires nothing beyond todos, and an item nothing beyond content and status (no id, priority or activeForm the model must send)",
			Spec:   "**The item shape is deliberately minimal** — `content` plus three-state `status`; no id, priority, or active-form fields, and the ACP bridge synthesizes the `priority` ACP requires.",
			Source: srcREADME,
			eval:   evalMinimalItem,
			seen: seenRule{func(ev *Evidence) tally {
				d := ev.Dialect
				return tally{words: []string{fmt.Sprintf("%q, an item only %q and %q", d.ListField, d.ContentField, d.StatusField)}}
			}, func(t tally) string { return "the parameters schema requires only " + t.words[0] }},
		},
		{
			ID: TWReplace1, Level: MUST,
			Title:  "a later write replaces the whole list: the plan shown after it is exactly the new list",
			Spec:   "The model sends the ENTIRE list every call — there are no partial updates or per-item edits.",
			Source: srcREADME,
			eval:   evalReplace,
			seen:   seenReplace(),
		},
		{
			ID: TWEmpty1, Level: MUST,
			Title:  "an empty list is accepted and clears the plan (a plan with no entries)",
			Spec:   "The model sends the ENTIRE list every call; the new list replaces the old (last-write-wins on replay).",
			Source: srcRFC,
			eval:   evalEmpty,
			seen:   seenEmpty(),
		},
		validCheck(TWValidEmpty, "empty content is rejected with an isError result the model sees, and no plan",
			"Beyond the schema's type/required/enum checks, `execute` rejects an empty or duplicate `content` and more than one `in_progress` task (a coherent plan has at most one task active)."),
		validCheck(TWValidWS, "whitespace-only content is rejected with an isError result the model sees, and no plan",
			"We take the middle: enforce the cheap invariants that make a plan coherent (no blank tasks, no dupes, at most one active), but leave ordering and the discipline of keeping the list current to the model via the tool description."),
		validCheck(TWValidDup, "duplicate content is rejected with an isError result the model sees, and no plan",
			"Beyond the schema's type/required/enum checks, `execute` rejects an empty or duplicate `content` and more than one `in_progress` task (a coherent plan has at most one task active)."),
		twoActiveCheck(validCheck(TWValidTwoActive, "two in_progress tasks are rejected with an isError result the model sees, and no plan (under --policy parallel: accepted and shown in the plan)",
			"Beyond the schema's type/required/enum checks, `execute` rejects an empty or duplicate `content` and more than one `in_progress` task (a coherent plan has at most one task active).")),
		validCheck(TWValidBadStatus, "a status outside the enum is rejected with an isError result the model sees, and no plan",
			"The schema enforces type/required/enum."),
		validCheck(TWValidNotArray, "todos that is not an array is rejected with an isError result the model sees, and no plan",
			"The schema enforces type/required/enum."),
		validCheck(TWValidMissing, "an item without its content or status is rejected with an isError result the model sees, and no plan",
			"The schema enforces type/required/enum."),
		{
			ID: TWRejectKeep1, Level: MUST,
			Title:  "after a rejected call the previous plan stands (no plan update changes it)",
			Spec:   "Each call appends a `todo/write` event (the full list snapshot) to the calling agent's session log via `agent.session.append('todo/write', { todos })`; the current list is the most recent such event (last-write-wins on replay).",
			Source: srcREADME,
			eval:   evalRejectKeep,
			seen:   seenRejectKeep(),
		},
		{
			ID: TWCounts1, Level: MUST, Dialects: []string{driver.DialectTodoWrite},
			Title:  "a successful result reports the pending, in-progress and completed counts of the new list",
			Spec:   "The tool result reports only pending, in-progress, and completed counts; the full `todo/write` session event is UI and replay state, not a second model message.",
			Source: srcREADME,
			eval:   evalCounts,
			seen:   seenCounts("the counts of its list"),
		},
		{
			ID: TWCounts2, Level: INFO, Dialects: []string{driver.DialectTodoWrite},
			Title:  "the result text is worded as the original: \"Updated todo list: P pending, I in progress, C completed.\"",
			Spec:   "The result itself is small and fixed-shape.",
			Source: srcREADME,
			eval:   evalCountsText,
			seen:   seenCounts("worded as the original"),
		},
		{
			ID: TWHistory1, Level: MUST,
			Title:  "no model message other than the tool call itself carries the list",
			Spec:   "The tool result reports only pending, in-progress, and completed counts; the full `todo/write` session event is UI and replay state, not a second model message.",
			Source: srcREADME,
			eval:   evalHistory,
			seen:   seenHistory(),
		},
		{
			ID: TWHistory2, Level: SHOULD,
			Title:  "the model's next request keeps its tool call with the whole list in the arguments",
			Spec:   "Each assistant tool call retains the entire replacement list in its arguments.",
			Source: srcREADME,
			eval:   evalHistoryCall,
			seen:   seenHistoryCall(),
		},
		{
			ID: TWPlan1, Level: MUST,
			Title:  "one plan update per successful write, none for a rejected one, entries 1:1 in order (content, status); on protocol version 2 (and v1 with clientCapabilities.plan) the plan_update items of one planId, never removed",
			Spec:   "UIs subscribe to `session/event` and render the `todo/write` data themselves: the [stdio app's readline UI](../../ui/stdio-agent) prints a glyphed checklist, and the [ACP bridge](../../ui/acp) maps the list to a `plan` sessionUpdate (synthesizing the `priority` ACP requires).",
			Source: srcREADME,
			eval:   evalPlan,
			seen:   seenPlan(),
		},
		{
			ID: TWPlanTrim1, Level: SHOULD, Dialects: []string{driver.DialectTodoWrite},
			Title:  "plan entries show each content exactly as the contract trims it (JavaScript's String.prototype.trim()), also at U+FEFF, U+0085, U+001C–U+001F and U+180E, where other trim functions differ (the MUST checks take such content for the list)",
			Spec:   "The contract trims each item's content with JavaScript's `String.prototype.trim()`, as the original TypeScript implementation does, and a plan shows each content so trimmed.",
			Source: srcDoc + "; " + srcUpstream + "packages/todo/tool-todo/src/index.ts (content trimmed with .trim(): \"trimmed, so the persisted value matches the dedupe/length key\")",
			eval:   evalTrimmed,
			seen:   seenTrimmed(),
		},
		{
			// Every case: the end of every prompt turn is judged.
			ID: TWFinal1, Level: MUST, Always: true,
			Title:  "at the end of every prompt turn, and after session/load, the last plan the client received is the last accepted list (last write wins, as the editor shows it)",
			Spec:   "Whole-list replace means one tool call per update with last-write-wins; there is no delta protocol to reconcile.",
			Source: srcRFC,
			eval:   evalFinal,
			seen:   seenFinalRule(),
		},
		{
			ID: TWPlanPriority1, Level: MUST,
			Title:  "every plan entry carries a valid priority (high, medium or low)",
			Spec:   "ACP's PlanEntry requires content + priority + status, but a TodoItem has no priority — the model never reasons about it.",
			Source: srcRFC,
			eval:   evalPriority,
			seen:   seenPriority("with a priority"),
		},
		{
			ID: TWPlanPriority2, Level: SHOULD, Dialects: []string{driver.DialectTodoWrite},
			Title:  "the synthesized priority is the constant \"medium\"",
			Spec:   "Rather than burden the schema with a field the model must always supply, the bridge synthesizes a constant priority: 'medium' on every entry when it builds the plan.",
			Source: srcRFC,
			eval:   evalPriorityMedium,
			seen:   seenPriority("\"medium\""),
		},
		{
			ID: TWPlanNonNull1, Level: MUST,
			Title:  "plan entries is always a JSON array (never null or missing), also for an empty list",
			Spec:   "When updating a plan, the agent must send a complete list of all entries with their current status.",
			Source: srcSchema + " Plan.entries",
			eval:   evalNonNull,
			seen:   seenNonNull(),
		},
		{
			ID: TWLoadCap1, Level: SHOULD,
			Title:  "the agent advertises agentCapabilities.loadSession (on protocol version 2: capabilities.session, whose baseline includes session/resume)",
			Spec:   "This buys durability, replay, and session/load reconstruction for free: a reopened session re-derives the current list (the last todo/write) and the ACP bridge re-emits the plan on load, with no separate persistence backend, no in-memory service to rehydrate, and no extra wiring.",
			Source: srcRFC,
			eval:   evalLoadCap,
			seen:   seenLoadCap(),
		},
		{
			ID: TWLoad1, Level: MUST,
			Title:  "session/load (on protocol version 2: session/resume from the start) replays the current plan before it answers",
			Spec:   "The todo list is durable, replayable session state: a persisted todo/write re-emits the editor's plan update on session/load, and the log — not plugin memory — is the single source of truth.",
			Source: srcRFC + "; " + srcACP + ": session/load replays previous conversation history before responding",
			eval:   evalLoadBefore,
			seen:   seenLoadBefore(),
		},
		{
			ID: TWLoad2, Level: MUST,
			Title:  "after several writes (and rejected ones), the plan replayed on load ends on the last accepted list",
			Spec:   "a reopened session re-derives the current list (the last todo/write) and the ACP bridge re-emits the plan on load, with no separate persistence backend, no in-memory service to rehydrate, and no extra wiring.",
			Source: srcRFC,
			eval:   evalLoadLast,
			seen:   seenLoadLast(),
		},
	}
}

func validCheck(id, title, spec string) Check {
	src := srcREADME
	if strings.HasPrefix(spec, "We take") || strings.HasPrefix(spec, "The schema") {
		src = srcRFC
	}
	return Check{ID: id, Level: MUST, Dialects: []string{driver.DialectTodoWrite}, Title: title, Spec: spec, Source: src,
		eval: evalRejected, seen: seenRule{seenRefused, sayRefused}}
}

// evalMinimalItem judges TW-SCHEMA-3: the fields the offered schema
// requires that the contract's calls do not carry.
func evalMinimalItem(ev *Evidence) verdict {
	s, bad := ev.offeredSchema()
	if bad != nil {
		return *bad
	}
	var extra []string
	for _, f := range s.Required {
		if f != ev.Dialect.ListField {
			extra = append(extra, fmt.Sprintf("%q of the parameters", driver.Truncate(f, 60)))
		}
	}
	if item := ev.unsuppliedFields(); item != "" {
		extra = append(extra, driver.Truncate(item, 200)+" on every item")
	}
	if len(extra) > 0 {
		return failf("the schema requires %s, which the contract's calls do not send", strings.Join(first(extra, 3), "; "))
	}
	return pass()
}

// catalogueIndex maps IDs to checks.
func catalogueIndex(cat []Check) map[string]Check {
	m := make(map[string]Check, len(cat))
	for _, c := range cat {
		m[c.ID] = c
	}
	return m
}

// CheckIDs returns the IDs of cat, sorted.
func CheckIDs(cat []Check) []string {
	ids := make([]string, 0, len(cat))
	for _, c := range cat {
		ids = append(ids, c.ID)
	}
	sort.Strings(ids)
	return ids
}

// FedBy returns the cases of cases that feed c: those listing it in
// their checks, every one when c is Always.
func (c Check) FedBy(cases []*Case) []*Case {
	var out []*Case
	for _, k := range cases {
		if c.Always || k.Feeds(c.ID) {
			out = append(out, k)
		}
	}
	return out
}

// FedChecks returns the checks of cat that one of cases feeds (a check of
// every case is fed by any): the catalogue a set of cases can judge, as a
// run saved before checks were added was captured for.
func FedChecks(cat []Check, cases []*Case) []Check {
	var out []Check
	for _, c := range cat {
		if len(c.FedBy(cases)) > 0 {
			out = append(out, c)
		}
	}
	return out
}
