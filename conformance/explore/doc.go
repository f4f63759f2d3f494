// Package explore searches for todo_write contract failures no one
// scripted: it generates scenarios from a seed, decides every call with an
// oracle, runs the scenarios against the agent under test exactly as the
// conformance cases are run (conformance.Run: the same target, presets,
// dialects, settle and checks), and shrinks each distinct failure to a
// small ordinary case.yaml. `todoharness conform --explore N` is the shell
// over Explore; docs/exploring.md is the user's guide.
//
// A scenario is a conformance.Case (Generator.Scenario): ACP steps (one
// to three prompts in a session, sometimes an editor-style restart and
// session/load with more prompts after it, or a second session; in one
// scenario of eight a last prompt the client cancels, session/cancel once
// the turn shows a plan, judged only by the checks the catalogue's own
// cancel case feeds, as the contract says nothing of a cancel) and the
// mock model's turns (zero to three turns of one to several tool calls,
// then a text turn that ends the prompt): todo_write calls that carry on,
// change or replace the list, and in some scenarios break one rule of the
// contract (empty or blank content, duplicate content, two in_progress, a
// status outside the enum in any casing, todos not an array, a missing
// field or a wrong type), calls of a tool no agent offers, reasoning,
// text, streaming chunk sizes. Item text is drawn from every script (CJK,
// emoji, combining marks, right-to-left, control characters, quotes,
// newlines) and sizes grow with the scenario's index, from a handful of
// short items to lists of hundreds and items of kilobytes. A scenario is
// a pure function of (seed, index): math/rand/v2's PCG seeded with both.
//
// The oracle (Oracle) is the reference harness's own todo_write rules:
// the tool's JSON schema, validated by the harness's tool registry, then
// todo.Rules.Validate under the policy. It marks each call reject when the
// contract refuses it, and makes the case feed every check of the
// catalogue (conformance.Catalogue: checks added later are used too),
// the TW-VALID checks only for the rules its calls break: the catalogue
// then judges a generated case exactly as a hand-written one, the plans a
// client must see, the counts the model must read and what a load must
// replay following from the marks. A scenario breaks at most one rule, so
// a failed TW-VALID check names it.
//
// A distinct failure is a check ID and a signature (signature): the kind
// of call its reason names (a list, an empty list, a call breaking a
// rule, a refused step) and the kind of ACP step (a prompt, a cancelled
// one, one after a load, the load), so two bugs failing one check are two
// failures. Its first scenario (the lowest index) is shrunk (shrinker):
// whole blocks (a load and what follows, a second session), prompts,
// turns, calls, decorations, items and characters go while the same check
// keeps failing with the same signature; each candidate is marked by the
// oracle again and may break no rule the scenario did not. The result is
// written as FailuresDir/explored-<check>--<op>--<step>/case.yaml under
// Config.Out, a case conformance.LoadCase reads and `conform --cases` runs.
//
// Config.Shard of Config.Shards runs the indexes equal to Shard modulo
// Shards; Merge joins the shards' Results into the Result of the whole
// run: hits add up and each failure (a check and a signature) keeps the
// lowest index of any shard,
// whose shrunk case is the one the whole run would have written.
package explore
